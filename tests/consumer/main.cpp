#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>

#include <iostream>

int main() {
    boost::asio::io_context io;
    // Asio's deprecated API in the consumer's own code: redlock must not take it away (it
    // builds with BOOST_ASIO_NO_DEPRECATED, but does not impose it on its users).
    boost::asio::io_context::work keep_running(io);
    redlock::client_config config;
    config.nodes = {"127.0.0.1:7001", "redis://127.0.0.1:7002/0", "127.0.0.1:7003"};
    redlock::client client(io.get_executor(), config);
    int status = 1;
    // An invalid key is refused before any I/O, so this needs no server.
    client.async_acquire("", redlock::lock_options{},
                         [&](boost::system::error_code ec, redlock::acquire_result r) {
                             std::cout << "quorum " << client.quorum() << ": " << ec.message()
                                       << " (" << r.message << ")\n";
                             status = ec == redlock::errc::invalid_argument ? 0 : 1;
                         });
    io.run_one();
    return status;
}
