#include "client/environment.hpp"

#include "client/token.hpp"
#include "operations/asio_time_source.hpp"
#include "transport/node_connection.hpp"

namespace redlock::detail {

environment environment::production() {
    environment env;
    env.make_time = [](const boost::asio::any_io_executor& strand) {
        return std::make_unique<asio_time_source>(strand);
    };
    env.make_link = [](const boost::asio::any_io_executor& strand, node_address address,
                       const client_config& config) -> std::unique_ptr<node_link> {
        return std::make_unique<node_connection>(strand, std::move(address), config);
    };
    auto tokens = std::make_shared<token_source>();
    env.jitter_seed = std::hash<std::string>{}(tokens->next());
    env.next_token = [tokens] { return tokens->next(); };
    return env;
}

} // namespace redlock::detail
