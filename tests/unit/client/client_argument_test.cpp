// Bad input is refused before any I/O: these run with no Redis anywhere.
#include <redlock/client.hpp>

#include <redlock/blocking_client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

redlock::client_config unreachable() {
    redlock::client_config c;
    // Port 1 on loopback: nothing listens; argument errors must not even get that far.
    c.nodes = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"};
    return c;
}

TEST(client_arguments, invalid_config_throws_system_error_with_the_reason) {
    asio::io_context io;
    auto c = unreachable();
    c.nodes.push_back("127.0.0.1:2");
    try {
        redlock::client client(io.get_executor(), c);
        FAIL() << "duplicate node accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), redlock::errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("same server"), std::string::npos) << e.what();
    }
    EXPECT_THROW(redlock::blocking_client(redlock::client_config{}), std::system_error);
}

TEST(client_arguments, bad_acquire_input_completes_with_invalid_argument_never_inline) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    EXPECT_EQ(client.node_count(), 3u);
    EXPECT_EQ(client.quorum(), 2u);

    struct case_t {
        std::string key;
        redlock::lock_options options;
        std::string mentions;
    };
    std::vector<case_t> cases;
    cases.push_back({"", {}, "empty"});
    cases.push_back({std::string(2000, 'x'), {}, "bytes"});
    redlock::lock_options zero;
    zero.ttl = 0ms;
    cases.push_back({"k", zero, "positive"});
    redlock::lock_options tiny;
    tiny.ttl = 2ms;
    cases.push_back({"k", tiny, "drift"});
    redlock::lock_options huge;
    huge.ttl = std::chrono::milliseconds::max();
    cases.push_back({"k", huge, "limit"});
    redlock::lock_options forever;
    forever.retry.max_attempts = 0;
    cases.push_back({"k", forever, "unbounded"});

    int completed = 0;
    for (auto& c : cases) {
        client.async_acquire(
            c.key, c.options,
            [&, mentions = c.mentions](boost::system::error_code ec, redlock::acquire_result r) {
                ++completed;
                EXPECT_EQ(ec, redlock::errc::invalid_argument);
                EXPECT_NE(r.message.find(mentions), std::string::npos) << r.message;
                EXPECT_FALSE(r.lock.held());
                EXPECT_EQ(r.attempts, 0u) << "nothing was sent";
            });
    }
    EXPECT_EQ(completed, 0) << "handlers must not run inside the initiating function";
    io.run();
    EXPECT_EQ(completed, static_cast<int>(cases.size()));
}

TEST(client_arguments, releasing_or_extending_a_lock_not_held_is_refused) {
    asio::io_context io;
    redlock::client client(io.get_executor(), unreachable());
    boost::system::error_code release_ec, extend_ec;
    redlock::release_result release;
    redlock::extend_result extend;
    client.async_release(redlock::lock{},
                         [&](boost::system::error_code ec, redlock::release_result r) {
                             release_ec = ec;
                             release = std::move(r);
                         });
    client.async_extend(redlock::lock{}, 1s,
                        [&](boost::system::error_code ec, redlock::extend_result r) {
                            extend_ec = ec;
                            extend = std::move(r);
                        });
    io.run();
    EXPECT_EQ(release_ec, redlock::errc::invalid_argument);
    EXPECT_NE(release.message.find("not held"), std::string::npos);
    EXPECT_EQ(extend_ec, redlock::errc::invalid_argument);
    EXPECT_FALSE(extend.lock.held());
}

TEST(client_arguments, blocking_facade_reports_bad_input_and_scoped_lock_stays_empty) {
    redlock::blocking_client client(unreachable());
    std::error_code ec;
    auto r = client.acquire("", {}, ec);
    EXPECT_EQ(ec, redlock::errc::invalid_argument);
    EXPECT_FALSE(r.lock.held());
    auto got = client.try_lock("k", 0ms, 0ms, 0, ec);
    EXPECT_FALSE(got.has_value());
    EXPECT_EQ(ec, redlock::errc::invalid_argument);
}

} // namespace
