// Takes, extends and releases one lock on the nodes in REDLOCK_NODES (default: the local
// five-node topology) and prints how every node voted at each step.
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> nodes_from_environment() {
    const char* env = std::getenv("REDLOCK_NODES");
    std::string list = env && *env ? env
                                   : "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,"
                                     "127.0.0.1:7004,127.0.0.1:7005";
    std::vector<std::string> nodes;
    std::stringstream stream(list);
    for (std::string item; std::getline(stream, item, ',');) {
        nodes.push_back(item);
    }
    return nodes;
}

/// How the nodes are shown: redacted, since an address may carry a password.
std::vector<std::string> shown(const std::vector<std::string>& nodes) {
    std::vector<std::string> names;
    for (const auto& text : nodes) {
        redlock::node_address address;
        std::string why;
        names.push_back(redlock::parse_node_address(text, address, why) ? "(invalid address)"
                                                                        : address.redacted());
    }
    return names;
}

void print_votes(const std::string& step, boost::system::error_code ec,
                 const std::vector<redlock::node_vote>& votes,
                 const std::vector<std::string>& nodes) {
    std::cout << step << ": " << (ec ? ec.message() : "ok") << "\n";
    for (const auto& vote : votes) {
        const char* outcome = vote.outcome == redlock::node_outcome::granted   ? "granted"
                              : vote.outcome == redlock::node_outcome::refused ? "refused"
                              : vote.outcome == redlock::node_outcome::failed  ? "failed"
                                                                               : "pending";
        std::cout << "  " << nodes[vote.node] << "  " << outcome << "  " << vote.latency.count()
                  << " us";
        if (vote.error) {
            std::cout << "  " << vote.error.message();
        }
        if (!vote.server_message.empty()) {
            std::cout << " (" << vote.server_message << ")";
        }
        std::cout << "\n";
    }
}

asio::awaitable<int> run(redlock::client& client, std::vector<std::string> nodes) {
    constexpr auto token = asio::as_tuple(asio::use_awaitable);
    redlock::lock_options options;
    options.ttl = 5s;
    // Nodes started a moment ago are in restart quarantine for the fleet's maximum TTL
    // (client_config::fleet_max_ttl, 60 s by default; docs/safety.md): keep trying for a
    // little longer than that.
    options.retry.max_attempts = 0;
    options.retry.wait_budget = 65s;
    options.retry.backoff_max = 1s;

    auto [acquire_ec, acquired] = co_await client.async_acquire("redlock:example", options, token);
    print_votes("acquire", acquire_ec, acquired.votes, nodes);
    if (acquire_ec) {
        std::cerr << acquired.message << "\n";
        co_return 1;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(acquired.lock.remaining());
    std::cout << "  token " << acquired.lock.token() << ", valid for " << left.count() << " ms\n";

    auto [extend_ec, extended] = co_await client.async_extend(acquired.lock, 10s, token);
    print_votes("extend to 10 s", extend_ec, extended.votes, nodes);
    const auto& held = extend_ec ? acquired.lock : extended.lock;

    auto [release_ec, released] = co_await client.async_release(held, token);
    print_votes("release", release_ec, released.votes, nodes);
    std::cout << "  released on " << released.released << " of " << nodes.size() << " nodes\n";
    co_return (extend_ec || release_ec) ? 1 : 0;
}

} // namespace

int main() {
    asio::io_context io;
    auto nodes = nodes_from_environment();
    redlock::client_config config;
    config.nodes = nodes;
    std::optional<redlock::client> client;
    try {
        client.emplace(io.get_executor(), config);
    } catch (const std::system_error& e) {
        std::cerr << "redlock_votes: " << e.what() << "\n";
        return 2;
    }
    int status = 1;
    asio::co_spawn(io, run(*client, shown(nodes)), [&](std::exception_ptr, int s) {
        status = s;
        client.reset();
    });
    io.run();
    return status;
}
