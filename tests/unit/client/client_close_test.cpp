// client::close() without a server: nodes that accept connections and never answer, so that
// whatever the client sends stays in flight until close() ends it.
#include <redlock/client.hpp>

#include <redlock/blocking_client.hpp>
#include <redlock/watchdog.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::errc;

/// Three listening sockets on their own thread: connections are accepted, read and never
/// answered.
class silent_nodes {
public:
    silent_nodes() {
        for (auto& acceptor : acceptors_) {
            acceptor.open(asio::ip::tcp::v4());
            acceptor.bind({asio::ip::make_address("127.0.0.1"), 0});
            acceptor.listen();
            accept(acceptor);
        }
        thread_ = std::thread([this] { io_.run(); });
    }
    ~silent_nodes() {
        asio::post(io_, [this] {
            for (auto& acceptor : acceptors_) {
                acceptor.close();
            }
            for (auto& socket : sockets_) {
                socket.close();
            }
        });
        thread_.join();
    }

    redlock::client_config config() const {
        redlock::client_config config;
        for (const auto& acceptor : acceptors_) {
            config.nodes.push_back("127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()));
        }
        return config;
    }

private:
    void accept(asio::ip::tcp::acceptor& acceptor) {
        acceptor.async_accept(
            [this, &acceptor](boost::system::error_code ec, asio::ip::tcp::socket socket) {
                if (ec) {
                    return;
                }
                sockets_.push_back(std::move(socket));
                discard(sockets_.back());
                accept(acceptor);
            });
    }
    void discard(asio::ip::tcp::socket& socket) {
        socket.async_read_some(asio::buffer(buffer_),
                               [this, &socket](boost::system::error_code ec, std::size_t) {
                                   if (!ec) {
                                       discard(socket);
                                   }
                               });
    }

    asio::io_context io_;
    std::array<asio::ip::tcp::acceptor, 3> acceptors_{
        asio::ip::tcp::acceptor(io_), asio::ip::tcp::acceptor(io_), asio::ip::tcp::acceptor(io_)};
    std::list<asio::ip::tcp::socket> sockets_;
    std::array<char, 4096> buffer_{};
    std::thread thread_;
};

/// Long enough that nothing in flight ends by itself while a test looks.
redlock::lock_options patient_options() {
    redlock::lock_options options;
    options.ttl = 30s;
    options.node_timeout = 1s;
    options.retry.max_attempts = 1;
    return options;
}

TEST(client_close, run_returns_once_what_was_in_flight_completed_cancelled) {
    silent_nodes nodes;
    asio::io_context io;
    auto config = nodes.config();
    // The nodes never answer INFO: the acquire waits this long for its connections first.
    config.connect_timeout = 100ms;
    redlock::client client(io.get_executor(), config);
    std::optional<boost::system::error_code> acquired;
    client.async_acquire(
        "k", patient_options(),
        [&](boost::system::error_code ec, redlock::acquire_result) { acquired = ec; });
    // Let the SETs go out and sit unanswered.
    io.run_for(300ms);
    ASSERT_FALSE(acquired) << "the nodes never answer";
    client.close();
    const auto start = std::chrono::steady_clock::now();
    io.run(); // returns although the client object still exists
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(acquired);
    EXPECT_EQ(*acquired, errc::cancelled);
    // The cleanups sent to the silent nodes are waited for up to the node_timeout at most.
    EXPECT_LT(took, 3s);
}

TEST(client_close, later_operations_complete_with_client_closed_and_send_nothing) {
    silent_nodes nodes;
    asio::io_context io;
    redlock::client client(io.get_executor(), nodes.config());
    client.close();
    std::optional<boost::system::error_code> acquired, extended, released;
    std::string message;
    client.async_acquire("k", patient_options(),
                         [&](boost::system::error_code ec, redlock::acquire_result r) {
                             acquired = ec;
                             message = r.message;
                         });
    const redlock::lock held("k", "token", std::chrono::steady_clock::now() + 30s,
                             patient_options());
    client.async_extend(
        held, [&](boost::system::error_code ec, redlock::extend_result) { extended = ec; });
    client.async_release(
        held, [&](boost::system::error_code ec, redlock::release_result) { released = ec; });
    io.run();
    ASSERT_TRUE(acquired && extended && released);
    EXPECT_EQ(*acquired, errc::client_closed);
    EXPECT_EQ(*extended, errc::client_closed);
    EXPECT_EQ(*released, errc::client_closed);
    EXPECT_NE(message.find("closed"), std::string::npos) << message;
}

TEST(client_close, is_idempotent_and_safe_from_other_threads) {
    silent_nodes nodes;
    asio::io_context io;
    redlock::client client(io.get_executor(), nodes.config());
    std::atomic<int> cancelled{0}, closed{0};
    auto count = [&](boost::system::error_code ec, redlock::acquire_result) {
        if (ec == errc::cancelled) {
            ++cancelled;
        } else if (ec == errc::client_closed) {
            ++closed;
        }
    };
    for (int i = 0; i < 8; ++i) {
        client.async_acquire("k" + std::to_string(i), patient_options(), count);
    }
    std::thread runner([&] { io.run(); });
    std::this_thread::sleep_for(50ms);
    std::vector<std::thread> closers;
    for (int i = 0; i < 4; ++i) {
        closers.emplace_back([&] { client.close(); });
    }
    for (auto& t : closers) {
        t.join();
    }
    client.close();
    client.async_acquire("late", patient_options(), count);
    runner.join(); // io.run() returned: nothing of the client keeps it busy
    // The late call may have come after that: its completion then waits for the next run.
    io.restart();
    io.run();
    EXPECT_EQ(cancelled.load(), 8);
    EXPECT_EQ(closed.load(), 1);
}

TEST(client_close, tells_every_watchdog_holder) {
    silent_nodes nodes;
    asio::io_context io;
    redlock::client client(io.get_executor(), nodes.config());
    const redlock::lock held("k", "token", std::chrono::steady_clock::now() + 30s,
                             patient_options());
    std::vector<boost::system::error_code> told;
    redlock::watchdog dog(client, held, {},
                          [&](boost::system::error_code why) { told.push_back(why); });
    io.run_for(20ms);
    EXPECT_FALSE(dog.lost());
    client.close();
    io.run();
    ASSERT_EQ(told.size(), 1U);
    EXPECT_EQ(told[0], errc::cancelled);
    EXPECT_TRUE(dog.lost());
}

TEST(client_close, destructor_after_close_is_harmless) {
    silent_nodes nodes;
    asio::io_context io;
    {
        redlock::client client(io.get_executor(), nodes.config());
        client.close();
        client.close();
    }
    io.run();
    SUCCEED();
}

TEST(blocking_client_close, blocked_calls_end_cancelled_and_later_ones_closed) {
    silent_nodes nodes;
    redlock::blocking_client client(nodes.config());
    auto blocked = std::async(std::launch::async, [&] {
        std::error_code ec;
        client.acquire("k", patient_options(), ec);
        return ec;
    });
    std::this_thread::sleep_for(50ms);
    client.close();
    EXPECT_EQ(blocked.get(), errc::cancelled);
    std::error_code ec;
    client.acquire("k", patient_options(), ec);
    EXPECT_EQ(ec, errc::client_closed);
    client.close();
}

} // namespace
