#include "support/fixture.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

/// Node 1 under two names that pass the textual duplicate check, and node 2: N = 3,
/// quorum 2, but two servers. Error log lines are kept.
class aliased_node_test : public nodes_test {
protected:
    client_config one_server_twice() {
        auto c = config();
        c.nodes = {topology::addresses()[0], "localhost:" + std::to_string(topology::port(1)),
                   topology::addresses()[1]};
        c.log = [this](log_level level, std::string_view line) {
            if (level == log_level::error) {
                std::lock_guard guard(errors_mutex_);
                errors_.emplace_back(line);
            }
        };
        return c;
    }
    bool logged_error(std::string_view part) {
        std::lock_guard guard(errors_mutex_);
        return std::any_of(errors_.begin(), errors_.end(), [&](const std::string& line) {
            return line.find(part) != std::string::npos;
        });
    }

private:
    std::mutex errors_mutex_;
    std::vector<std::string> errors_;
};

// A guard more than a regression test: the second SET NX on one server already finds the
// first one's key, so acquire never counted it twice; the extend below did.
TEST_F(aliased_node_test, one_server_under_two_names_is_not_granted_a_lock_alone) {
    ASSERT_EQ(inspector(2).run({"SET", "aliased", "another-holder", "PX", "10000"}), "OK");
    blocking_client client(one_server_twice());
    std::error_code ec;
    auto refused = client.acquire("aliased", options(), ec);
    EXPECT_TRUE(ec) << "node 1 alone is no majority: " << refused.message;
}

TEST_F(aliased_node_test, one_server_under_two_names_counts_once_when_extending) {
    blocking_client client(one_server_twice());
    std::error_code ec;
    // Granted by node 1 (once: the second SET NX on the same server finds the key) and node 2.
    auto held = client.acquire("aliased", options(), ec);
    ASSERT_FALSE(ec) << held.message;
    // Node 2's copy is gone and another holder took the key there: only node 1 still holds
    // our token, and node 1 is one vote, under however many names.
    ASSERT_EQ(inspector(2).run({"SET", "aliased", "another-holder", "PX", "10000"}), "OK");
    auto extended = client.extend(held.lock, ec);
    EXPECT_TRUE(ec) << "one server granted the extend twice: " << extended.message;
    ASSERT_EQ(extended.votes.size(), 3u);
    std::size_t duplicates = 0;
    for (std::size_t node : {0u, 1u}) {
        const auto& vote = extended.votes[node];
        if (vote.error == errc::duplicate_node) {
            ++duplicates;
            // The other name of the same server is the one whose vote counted.
            const std::string other = node == 0 ? "localhost:" + std::to_string(topology::port(1))
                                                : topology::addresses()[0];
            EXPECT_TRUE(vote.server_message.starts_with("same server as " + other + " (run_id "))
                << vote.server_message;
        }
    }
    EXPECT_EQ(duplicates, 1u) << extended.message;
    EXPECT_TRUE(logged_error("same server as"));
}

TEST_F(nodes_test, reconnects_after_a_node_restarts) {
    blocking_client client(config());
    std::error_code ec;
    auto first = client.acquire("reconnect", options(), ec);
    ASSERT_FALSE(ec);
    client.release(first.lock, ec);

    topology::kill(1);
    topology::kill(2);
    topology::kill(3);
    auto during = client.acquire("reconnect", options(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << during.message;
    topology::restore();

    // The reconnect backoff is capped at 200 ms in this config.
    bool recovered = eventually([&] {
        auto again = client.acquire("reconnect", options(), ec);
        if (ec) {
            return false;
        }
        client.release(again.lock, ec);
        return count(again.votes, node_outcome::failed) == 0;
    });
    EXPECT_TRUE(recovered) << "no reconnect to the restarted nodes";
}

TEST_F(nodes_test, auth_with_acl_user_and_select_on_connect) {
    for (int node = 1; node <= 5; ++node) {
        ASSERT_EQ(inspector(node).run({"ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "+@all"}),
                  "OK");
    }
    auto c = config();
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        c.nodes[i] = "redis://locker:s3cret@" + c.nodes[i] + "/3";
    }
    {
        blocking_client client(c);
        std::error_code ec;
        auto r = client.acquire("in-db-3", options(), ec);
        ASSERT_FALSE(ec) << r.message;
        inspector look(1);
        EXPECT_TRUE(eventually([&] { return look.get("in-db-3", 3).has_value(); }));
        EXPECT_EQ(look.get("in-db-3", 3), r.lock.token());
        EXPECT_FALSE(look.get("in-db-3").has_value()) << "nothing in db 0";
        auto released = client.release(r.lock, ec);
        EXPECT_FALSE(ec) << released.message;
    }
    auto wrong = config();
    for (std::size_t i = 0; i < wrong.nodes.size(); ++i) {
        wrong.nodes[i] = "redis://locker:nope@" + wrong.nodes[i];
    }
    {
        blocking_client client(wrong);
        std::error_code ec;
        auto r = client.acquire("denied", options(), ec);
        EXPECT_EQ(ec, errc::quorum_unreachable);
        ASSERT_EQ(r.votes.size(), 5u);
        EXPECT_GE(count(r.votes, node_outcome::failed), 3u);
        for (const auto& vote : r.votes) {
            if (vote.outcome == node_outcome::failed) {
                EXPECT_EQ(vote.error, errc::connection_failed);
                EXPECT_NE(vote.server_message.find("WRONGPASS"), std::string::npos)
                    << vote.server_message;
            }
        }
        EXPECT_TRUE(all_keys_gone(300ms) &&
                    keys_everywhere() == 0)
            << "commands behind a failed AUTH must never run as the default user";
    }
    for (int node = 1; node <= 5; ++node) {
        inspector(node).run({"ACL", "DELUSER", "locker"});
    }
}

TEST_F(nodes_test, host_names_are_resolved_in_the_background) {
    auto c = config();
    for (std::size_t i = 0; i + 1 < c.nodes.size(); ++i) {
        c.nodes[i].replace(0, c.nodes[i].find(':'), "localhost");
    }
    const std::string unknown = "no-such-redlock-node.invalid";
    c.nodes.back() = unknown + ":7005";
    blocking_client client(c);
    auto o = options();
    // Long enough for the name to fail either way: NXDOMAIN or the connect timeout.
    o.node_timeout = 1s;
    std::error_code ec;
    // The very first commands wait for the names; none may be lost or sent twice.
    auto r = client.acquire("by-name", o, ec);
    ASSERT_FALSE(ec) << r.message;
    for (int node = 1; node <= 4; ++node) {
        EXPECT_TRUE(eventually([&] { return inspector(node).get("by-name") == r.lock.token(); }))
            << "node " << node;
    }
    EXPECT_FALSE(inspector(5).get("by-name").has_value());

    auto released = client.release(r.lock, ec);
    EXPECT_FALSE(ec) << released.message;
    EXPECT_GE(released.released, 3u);
    // The release completes at a quorum of deletes, perhaps before the unknown name failed;
    // an inspect waits for every node, so it hears how.
    const auto view = client.inspect("by-name", 2s, ec);
    ASSERT_FALSE(ec) << view.message;
    ASSERT_EQ(view.nodes.size(), 5u);
    const auto& failed = view.nodes.back();
    EXPECT_EQ(failed.error, errc::connection_failed);
    EXPECT_NE(failed.message.find(unknown), std::string::npos) << failed.message;
    EXPECT_TRUE(all_keys_gone());
}

TEST_F(nodes_test, shutting_down_while_names_resolve_cancels_what_waits_for_them) {
    auto c = config();
    for (auto& node : c.nodes) {
        node.replace(0, node.find(':'), "localhost");
    }
    io_thread io;
    std::optional<client> async(std::in_place, io.executor(), c);
    std::promise<std::error_code> outcome;
    // In one handler: the acquire's SETs wait for the names when the shutdown comes.
    boost::asio::post(io.executor(), [&] {
        async->async_acquire(
            "while-resolving", options(),
            [&](boost::system::error_code ec, acquire_result) { outcome.set_value(ec); });
        async.reset();
    });
    auto result = outcome.get_future();
    ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(result.get(), errc::cancelled);
    std::this_thread::sleep_for(100ms); // a resolve finishing late must send nothing
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(nodes_test, unix_socket_node) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("redlock-unix-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto sock = (dir / "redis.sock").string();
    const auto pidfile = (dir / "redis.pid").string();
    const std::string start = "redis-server --port 0 --unixsocket " + sock +
                              " --daemonize yes --save '' --pidfile " + pidfile + " --logfile " +
                              (dir / "log").string() + " --dir " + dir.string();
    ASSERT_EQ(std::system(start.c_str()), 0);
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(sock); }));

    {
        client_config c;
        c.nodes = {"unix://" + sock};
        c.quarantine.enabled = false; // the server was started a moment ago
        blocking_client client(c);
        std::error_code ec;
        auto r = client.acquire("over-unix", options(), ec);
        EXPECT_FALSE(ec) << r.message;
        auto released = client.release(r.lock, ec);
        EXPECT_FALSE(ec) << released.message;
        EXPECT_EQ(released.released, 1u);
    }
    std::ifstream pid(pidfile);
    int server = 0;
    pid >> server;
    if (server > 0) {
        ::kill(server, SIGTERM);
    }
    std::filesystem::remove_all(dir);
}

TEST_F(nodes_test, server_errors_are_votes_with_their_text) {
    // With two nodes down, the quorum needs node 2, which is out of memory.
    topology::stop(4);
    topology::stop(5);
    inspector oom(2);
    ASSERT_EQ(oom.run({"CONFIG", "SET", "maxmemory", "1"}), "OK");
    blocking_client client(config());
    std::error_code ec;
    auto r = client.acquire("oom", options(), ec);
    oom.run({"CONFIG", "SET", "maxmemory", "0"});
    EXPECT_EQ(ec, errc::quorum_unreachable);
    EXPECT_EQ(r.votes[1].outcome, node_outcome::failed);
    EXPECT_EQ(r.votes[1].error, errc::server_error);
    EXPECT_TRUE(r.votes[1].server_message.starts_with("OOM")) << r.votes[1].server_message;
    EXPECT_NE(r.message.find("OOM"), std::string::npos) << r.message;
    for (int node : {1, 2, 3}) {
        EXPECT_EQ(inspector(node).dbsize(), 0) << "cleaned up on node " << node;
    }
}

TEST_F(nodes_test, script_cache_flushed_falls_back_to_eval) {
    blocking_client client(config());
    std::error_code ec;
    auto r = client.acquire("noscript", options(), ec);
    ASSERT_FALSE(ec);
    ASSERT_TRUE(eventually([] { return keys_everywhere() == 5; }));
    for (int node = 1; node <= 5; ++node) {
        inspector(node).run({"SCRIPT", "FLUSH"});
    }
    auto extended = client.extend(r.lock, 20s, ec);
    EXPECT_FALSE(ec) << extended.message;
    for (int node = 1; node <= 5; ++node) {
        inspector(node).run({"SCRIPT", "FLUSH"});
    }
    auto released = client.release(extended.lock, ec);
    EXPECT_FALSE(ec) << released.message;
    EXPECT_GE(released.released, 3u);
    // The deletes resent as EVAL after the quorum finish in the background.
    EXPECT_TRUE(all_keys_gone());
}

} // namespace
} // namespace redlock::test
