// Where node_connection places a restart it learns of (restart_seen_at): at the first break
// after the old server last answered with its run_id, because every command sent since may
// have reached the new server. The renewal's write-back trusts that placement: a grant sent
// after it is never written back. And what INFO replication adds: a replica gets no vote,
// a promoted server is quarantined from when it took its role, and a Sentinel node asks
// its Sentinels again when the server it reached is no primary. Driven by a manual clock and
// in-memory connections the test opens, answers and breaks, so every placement is an exact time.
#include "support/manual_time.hpp"
#include "support/parsed_address.hpp"
#include "support/resp_command.hpp"
#include "transport/node_connection.hpp"
#include "transport/node_reply.hpp"

#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using error_code = boost::system::error_code;

/// The two directions of one in-memory connection, as the test sees them.
struct memory_wire {
    std::string to_node;   ///< what the client wrote, not yet read by the test
    std::string to_client; ///< what the test sent, not yet read by the client
    bool broken = false;
    byte_stream::io_handler pending_read;
    asio::mutable_buffer read_into;
};

/// The client's end of a memory_wire. Handlers run posted, as a socket's do.
class memory_stream final : public byte_stream {
public:
    memory_stream(asio::any_io_executor strand, std::shared_ptr<memory_wire> wire)
        : strand_(std::move(strand))
        , wire_(std::move(wire)) {}

    void async_write(asio::const_buffer buffer, io_handler handler) override {
        error_code ec;
        const auto n = write_now(buffer, ec);
        asio::post(strand_, [handler = std::move(handler), ec, n] { handler(ec, n); });
    }
    std::size_t write_now(asio::const_buffer buffer, error_code& ec) override {
        if (wire_->broken) {
            ec = asio::error::connection_reset;
            return 0;
        }
        wire_->to_node.append(static_cast<const char*>(buffer.data()), buffer.size());
        return buffer.size();
    }
    void async_read_some(asio::mutable_buffer buffer, io_handler handler) override {
        wire_->pending_read = std::move(handler);
        wire_->read_into = buffer;
        deliver(strand_, *wire_);
    }
    void close() noexcept override {
        wire_->broken = true;
        if (auto h = std::exchange(wire_->pending_read, nullptr)) {
            asio::post(strand_, [h] { h(asio::error::operation_aborted, 0); });
        }
    }

    /// Hands what the test sent (or the break) to a read in flight.
    static void deliver(const asio::any_io_executor& strand, memory_wire& w) {
        if (!w.pending_read || (w.to_client.empty() && !w.broken)) {
            return;
        }
        auto h = std::exchange(w.pending_read, nullptr);
        if (w.to_client.empty()) {
            asio::post(strand, [h] { h(asio::error::connection_reset, 0); });
            return;
        }
        const auto n = std::min(w.to_client.size(), w.read_into.size());
        std::memcpy(w.read_into.data(), w.to_client.data(), n);
        w.to_client.erase(0, n);
        asio::post(strand, [h, n] { h({}, n); });
    }

private:
    asio::any_io_executor strand_;
    std::shared_ptr<memory_wire> wire_;
};

/// The connect attempts of one node_connection, each accepted or refused by the test.
struct switchboard {
    stream_connector::opened_fn waiting;
    std::vector<std::shared_ptr<memory_wire>> wires;
    /// What the connector says of the primary's role (the Sentinels, for a real one).
    std::optional<clock::time_point> primary_since;
    /// Where the connector says its opens go (the primary the Sentinels named).
    std::optional<std::pair<std::string, std::uint16_t>> reached;
};

class memory_connector final : public stream_connector {
public:
    explicit memory_connector(std::shared_ptr<switchboard> board)
        : board_(std::move(board)) {}
    void open(opened_fn opened) override { board_->waiting = std::move(opened); }
    void abort() noexcept override { board_->waiting = nullptr; }
    std::string_view step() const noexcept override { return "connect"; }
    std::string_view hint() const noexcept override { return {}; }
    std::optional<clock::time_point> primary_since() const override {
        return board_->primary_since;
    }
    std::optional<std::pair<std::string, std::uint16_t>> reached() const override {
        return board_->reached;
    }

private:
    std::shared_ptr<switchboard> board_;
};

class discarding_target final : public reply_target {
public:
    void on_reply(std::uint64_t, const node_reply&) override {}
};

std::string bulk(const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

/// One node_connection to a node played by the test, on a manual clock.
class restart_placement : public ::testing::Test {
protected:
    explicit restart_placement(const std::string& address = "127.0.0.1:6379") {
        link_ = std::make_unique<node_connection>(
            strand_, test::parsed_address(address), config_,
            std::make_unique<test::manual_time>(now_, ticking_, alarms_),
            std::make_unique<memory_connector>(board_));
    }
    ~restart_placement() override {
        link_.reset();
        io_.poll();
    }

    void run() {
        io_.restart();
        io_.poll();
    }
    void advance(clock::duration by) {
        now_ += by;
        test::fire_due(alarms_, now_);
        run();
    }
    /// Past the reconnect delay, then a connect attempt that the node accepts.
    memory_wire& reconnect() {
        advance(config_.reconnect_delay_max);
        link_->warm_up();
        run();
        EXPECT_TRUE(board_->waiting) << "no connect attempt";
        auto wire = std::make_shared<memory_wire>();
        board_->wires.push_back(wire);
        std::exchange(board_->waiting, nullptr)(std::make_unique<memory_stream>(strand_, wire), "");
        run();
        return *wire;
    }
    /// A connect attempt that the node refuses.
    void refused_connect() {
        advance(config_.reconnect_delay_max);
        link_->warm_up();
        run();
        ASSERT_TRUE(board_->waiting) << "no connect attempt";
        std::exchange(board_->waiting, nullptr)(nullptr, "connection refused");
        run();
    }
    /// Answers every whole command the client sent, as a server with `run_id` would.
    void answer(memory_wire& w, const std::string& run_id) {
        std::size_t used = 0;
        std::vector<std::string> args;
        while (test::parse_command(w.to_node, used, args) == test::parse_result::command) {
            w.to_node.erase(0, used);
            if (args[0] == "INFO") {
                w.to_client += bulk("# Server\r\nrun_id:" + run_id +
                                    "\r\nuptime_in_seconds:100\r\n# Memory\r\nmaxmemory:0\r\n"
                                    "maxmemory_policy:noeviction\r\n# Stats\r\n"
                                    "evicted_keys:0\r\n" +
                                    replication_);
            } else if (args[0] == "EVALSHA" || args[0] == "EVAL") {
                // The clock mark: the node's wall clock keeps pace with the test's clock.
                const auto us =
                    std::chrono::duration_cast<std::chrono::microseconds>(now_.time_since_epoch())
                        .count();
                w.to_client += "*4\r\n" + bulk(std::to_string(1700000000 + us / 1000000)) +
                               bulk(std::to_string(us % 1000000)) + bulk("0") + bulk("0");
            } else if (args[0] == "SET" && replication_.find("role:slave") != std::string::npos) {
                w.to_client += "-READONLY You can't write against a read only replica.\r\n";
            } else {
                w.to_client += "+OK\r\n";
            }
        }
        memory_stream::deliver(strand_, w);
        run();
    }
    /// The node closes the connection.
    void reset(memory_wire& w) {
        w.broken = true;
        memory_stream::deliver(strand_, w);
        run();
    }
    /// The first connection, to the server with run_id "old", served for 2 s then broken by
    /// the node; returns when it broke.
    clock::time_point old_server_then_a_break() {
        auto& first = reconnect();
        answer(first, "old");
        EXPECT_EQ(link_->readiness(), link_readiness::ready);
        EXPECT_EQ(link_->run_id(), "old");
        advance(2s);
        const auto broke_at = now_;
        reset(first);
        EXPECT_EQ(link_->readiness(), link_readiness::unavailable);
        return broke_at;
    }
    /// A lock command, as a grant would be sent.
    void send_set() {
        const std::string_view args[] = {"SET", "K", "token", "NX", "PX", "30000"};
        command cmd;
        cmd.args.assign(std::begin(args), std::end(args));
        link_->send(cmd, target_, 1);
        run();
    }

    asio::io_context io_;
    asio::any_io_executor strand_ = asio::make_strand(io_.get_executor());
    client_config config_;
    clock::time_point now_{clock::duration(1h)};
    bool ticking_ = false;
    std::vector<test::manual_time::idle_alarm*> alarms_;
    std::shared_ptr<switchboard> board_ = std::make_shared<switchboard>();
    std::shared_ptr<discarding_target> target_ = std::make_shared<discarding_target>();
    std::unique_ptr<node_connection> link_;
    /// INFO replication as the node answers it; empty for a server that sends none.
    std::string replication_;
};

/// INFO replication of a primary: `replid2` all zeros unless it was promoted since it started.
std::string primary_replication(const std::string& replid, bool promoted) {
    return "# Replication\r\nrole:master\r\nmaster_replid:" + replid +
           "\r\nmaster_replid2:" + std::string(40, promoted ? 'a' : '0') + "\r\n";
}
const std::string replica_replication =
    "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_replid:r1\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n";

TEST_F(restart_placement, a_new_run_id_places_the_restart_at_the_break_after_the_old_one) {
    const auto broke_at = old_server_then_a_break();
    EXPECT_FALSE(link_->restart_seen_at()) << "nothing but one server so far";

    auto& second = reconnect();
    answer(second, "new");
    EXPECT_EQ(link_->run_id(), "new");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), broke_at);
    EXPECT_EQ(*link_->started_at(), now_) << "the new server's quarantine runs from now";
}

TEST_F(restart_placement, the_same_run_id_again_places_no_restart) {
    old_server_then_a_break();
    auto& second = reconnect();
    answer(second, "old");
    EXPECT_FALSE(link_->restart_seen_at());
}

// Seed 20261206082025 of the simulation: a reconnect whose INFO never came carried a grant
// to the new server, then broke. Placed at that break, after the grant, the restart made
// the grant look older than the new server, and a renewal wrote it back after a force
// release had deleted it.
TEST_F(restart_placement, a_connection_that_broke_before_its_run_id_came_holds_the_placement) {
    const auto broke_at = old_server_then_a_break();

    auto& unidentified = reconnect();
    advance(1s);
    send_set(); // reaches the new server; its INFO reply is lost with the connection
    EXPECT_NE(unidentified.to_node.find("SET"), std::string::npos);
    advance(1s);
    reset(unidentified);

    auto& third = reconnect();
    answer(third, "new");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), broke_at)
        << "placed after a grant the new server may hold";
}

TEST_F(restart_placement, a_connect_that_failed_carried_nothing_and_moves_the_placement) {
    old_server_then_a_break();
    refused_connect();
    const auto refused_at = now_;

    auto& second = reconnect();
    answer(second, "new");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), refused_at);
}

TEST_F(restart_placement, a_refused_connect_after_an_unidentified_one_keeps_the_hold) {
    const auto broke_at = old_server_then_a_break();
    auto& unidentified = reconnect();
    send_set();
    reset(unidentified);
    refused_connect();

    auto& third = reconnect();
    answer(third, "new");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), broke_at);
}

TEST_F(restart_placement, the_old_run_id_read_again_lifts_the_hold) {
    old_server_then_a_break();
    auto& unidentified = reconnect();
    reset(unidentified);

    auto& again = reconnect();
    answer(again, "old"); // the same server after all: nothing it was sent is at risk
    advance(2s);
    const auto broke_at = now_;
    reset(again);

    auto& last = reconnect();
    answer(last, "new");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), broke_at);
}

TEST_F(restart_placement, a_replica_gets_no_vote_until_it_says_it_is_a_primary) {
    replication_ = replica_replication;
    auto& first = reconnect();
    answer(first, "old");
    EXPECT_EQ(link_->not_primary(), "not a primary: INFO replication says role:slave");
    EXPECT_EQ(link_->readiness(), link_readiness::ready) << "a plain address keeps its connection";

    replication_ = primary_replication("r1", true);
    advance(config_.eviction.refresh_interval);
    answer(first, "old");
    EXPECT_EQ(link_->not_primary(), "");
}

TEST_F(restart_placement, a_server_without_a_replication_section_is_taken_as_a_primary) {
    auto& first = reconnect();
    answer(first, "old");
    EXPECT_EQ(link_->not_primary(), "");
    EXPECT_EQ(*link_->started_at(), now_ - 100s) << "placed by its uptime";
}

TEST_F(restart_placement, a_promoted_server_nobody_dates_is_quarantined_from_first_sight) {
    replication_ = primary_replication("r2", true);
    auto& first = reconnect();
    const auto seen_at = now_;
    answer(first, "promoted");
    ASSERT_TRUE(link_->started_at());
    EXPECT_EQ(*link_->started_at(), seen_at) << "its 100 s uptime says nothing of its role";
    EXPECT_EQ(link_->quarantine_cause(), "promoted to primary");
    EXPECT_FALSE(link_->restart_seen_at()) << "nothing this client sent was lost";

    advance(config_.eviction.refresh_interval);
    answer(first, "promoted");
    EXPECT_EQ(*link_->started_at(), seen_at) << "a refresh does not move the placement";
}

TEST_F(restart_placement, a_promotion_the_sentinels_date_is_placed_there) {
    replication_ = primary_replication("r2", true);
    board_->primary_since = now_ + config_.reconnect_delay_max - 5s;
    auto& first = reconnect();
    answer(first, "promoted");
    EXPECT_EQ(*link_->started_at(), *board_->primary_since);
}

TEST_F(restart_placement, a_promotion_dated_in_the_future_is_placed_now) {
    replication_ = primary_replication("r2", true);
    board_->primary_since = now_ + 1h; // whatever a connector says
    auto& first = reconnect();
    answer(first, "promoted");
    EXPECT_EQ(*link_->started_at(), now_);
    advance(config_.eviction.refresh_interval);
    answer(first, "promoted");
    EXPECT_LE(*link_->started_at(), now_) << "never a start in the future";
}

TEST_F(restart_placement, a_never_promoted_primary_is_placed_by_its_uptime) {
    replication_ = primary_replication("r1", false);
    board_->primary_since = now_; // a Sentinel's word counts only for a promoted server
    auto& first = reconnect();
    answer(first, "old");
    EXPECT_EQ(*link_->started_at(), now_ - 100s);
}

// Demoted, resynced from another primary and promoted again, with no connection broken: what
// was sent after the last INFO that showed the old replication id may have reached the new
// data set, so the restart is placed at that INFO, not at the INFO that revealed it.
TEST_F(restart_placement, a_new_replication_id_under_the_same_run_id_is_a_restart) {
    replication_ = primary_replication("r1", false);
    auto& first = reconnect();
    const auto confirmed_at = now_; // the handshake's INFO
    answer(first, "old");
    advance(500ms);
    send_set();
    answer(first, "old");
    EXPECT_FALSE(link_->restart_seen_at());
    replication_ = primary_replication("r2", true);
    advance(config_.eviction.refresh_interval - 500ms);
    answer(first, "old");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_EQ(*link_->restart_seen_at(), confirmed_at) << "before the SET, which may be lost";
    EXPECT_EQ(*link_->started_at(), now_);
    EXPECT_EQ(link_->run_id(), "old");
    EXPECT_FALSE(first.broken) << "a plain address keeps its connection";
}

// A round begun while the link reconnects holds its SET back for the new connection, which
// writes it behind the new connection's INFO. If that INFO still shows the old replication id
// and the role is taken anew before the SET arrives, the SET is lost: the placement must not
// be later than the round's start (it is at the break).
TEST_F(restart_placement, a_role_taken_anew_is_placed_before_what_was_held_back_for_the_reconnect) {
    replication_ = primary_replication("r1", false);
    const auto broke_at = old_server_then_a_break();
    advance(config_.reconnect_delay_max);
    link_->warm_up();
    run();
    ASSERT_TRUE(board_->waiting) << "no connect attempt";
    const auto round_began = now_;
    send_set(); // held back for the connection on its way
    advance(10ms);
    auto wire = std::make_shared<memory_wire>();
    board_->wires.push_back(wire);
    std::exchange(board_->waiting, nullptr)(std::make_unique<memory_stream>(strand_, wire), "");
    run();
    answer(*wire, "old");
    EXPECT_FALSE(link_->restart_seen_at());
    replication_ = primary_replication("r2", true);
    advance(config_.eviction.refresh_interval);
    answer(*wire, "old");
    ASSERT_TRUE(link_->restart_seen_at());
    EXPECT_LE(*link_->restart_seen_at(), round_began);
    EXPECT_EQ(*link_->restart_seen_at(), broke_at);
}

class sentinel_node : public restart_placement {
protected:
    sentinel_node()
        : restart_placement("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380#group1") {}
};

TEST_F(sentinel_node, a_named_server_that_is_a_replica_is_left_to_ask_the_sentinels_again) {
    replication_ = replica_replication;
    auto& first = reconnect();
    answer(first, "replica");
    EXPECT_TRUE(first.broken) << "dropped, so that the next connect asks the Sentinels";
    EXPECT_NE(link_->readiness(), link_readiness::ready);

    replication_ = primary_replication("r1", true);
    auto& second = reconnect();
    answer(second, "primary");
    EXPECT_EQ(link_->readiness(), link_readiness::ready);
    EXPECT_EQ(link_->not_primary(), "");
}

TEST_F(sentinel_node, a_primary_that_takes_writes_without_replicas_is_warned_of_once) {
    std::string logged;
    config_.log = [&logged](log_level, std::string_view message) {
        logged += std::string(message) + "\n";
    };
    replication_ = primary_replication("r1", false);
    auto& first = reconnect();
    answer(first, "old");
    advance(config_.eviction.refresh_interval);
    answer(first, "old");
    const std::string warning = "min-replicas-to-write is off";
    ASSERT_NE(logged.find(warning), std::string::npos) << logged;
    EXPECT_EQ(logged.find(warning), logged.rfind(warning)) << "once per server: " << logged;

    logged.clear();
    reset(first);
    replication_ += "min_slaves_good_slaves:1\r\n";
    auto& second = reconnect();
    answer(second, "new");
    EXPECT_EQ(logged.find(warning), std::string::npos) << logged;
}

TEST_F(sentinel_node, a_readonly_reply_drops_the_connection) {
    replication_ = primary_replication("r1", false);
    auto& first = reconnect();
    answer(first, "old");
    ASSERT_EQ(link_->readiness(), link_readiness::ready);
    replication_ = replica_replication; // demoted between two refreshes
    send_set();
    answer(first, "old");
    EXPECT_TRUE(first.broken);
}

TEST_F(sentinel_node, a_switch_announced_to_another_server_drops_the_connection) {
    std::string logged;
    config_.log = [&logged](log_level, std::string_view message) {
        logged += std::string(message) + "\n";
    };
    link_->primary_moved("10.0.0.2", 6380, "127.0.0.1:26379"); // not connected: nothing to do
    replication_ = primary_replication("r1", false);
    board_->reached.emplace("10.0.0.1", 6379);
    auto& first = reconnect();
    answer(first, "old");
    ASSERT_EQ(link_->readiness(), link_readiness::ready);
    link_->primary_moved("10.0.0.1", 6379, "127.0.0.1:26379");
    run();
    EXPECT_FALSE(first.broken) << "announced where it already is";
    link_->primary_moved("10.0.0.1", 6380, "127.0.0.1:26379");
    run();
    EXPECT_TRUE(first.broken) << "another port is another server";
    EXPECT_NE(logged.find("the Sentinel at 127.0.0.1:26379 announced that \"group1\" moved to "
                          "10.0.0.1:6380 (+switch-master): asking the Sentinels again"),
              std::string::npos)
        << logged;

    board_->reached.emplace("10.0.0.1", 6380);
    auto& second = reconnect();
    answer(second, "new");
    link_->primary_moved("fe80::1", 6380, "127.0.0.1:26380");
    run();
    EXPECT_TRUE(second.broken);
    EXPECT_NE(logged.find("moved to [fe80::1]:6380"), std::string::npos) << logged;
}

TEST_F(sentinel_node, a_switch_announced_while_connecting_is_weighed_once_connected) {
    replication_ = primary_replication("r1", false);
    advance(config_.reconnect_delay_max);
    link_->warm_up();
    run();
    ASSERT_TRUE(board_->waiting) << "connecting";
    // The Sentinels named 10.0.0.1 before they switched to 10.0.0.2.
    link_->primary_moved("10.0.0.2", 6379, "127.0.0.1:26379");
    board_->reached.emplace("10.0.0.1", 6379);
    auto wire = std::make_shared<memory_wire>();
    board_->wires.push_back(wire);
    std::exchange(board_->waiting, nullptr)(std::make_unique<memory_stream>(strand_, wire), "");
    run();
    EXPECT_TRUE(wire->broken) << "connected to the server the switch left";

    // Named after the switch: kept.
    advance(config_.reconnect_delay_max);
    link_->warm_up();
    run();
    ASSERT_TRUE(board_->waiting) << "connecting again";
    link_->primary_moved("10.0.0.2", 6379, "127.0.0.1:26379");
    board_->reached.emplace("10.0.0.2", 6379);
    auto again = std::make_shared<memory_wire>();
    board_->wires.push_back(again);
    std::exchange(board_->waiting, nullptr)(std::make_unique<memory_stream>(strand_, again), "");
    run();
    answer(*again, "new");
    EXPECT_FALSE(again->broken);
    EXPECT_EQ(link_->readiness(), link_readiness::ready);
}

TEST_F(restart_placement, a_plain_address_keeps_its_connection_on_readonly) {
    replication_ = primary_replication("r1", false);
    auto& first = reconnect();
    answer(first, "old");
    replication_ = replica_replication;
    send_set();
    answer(first, "old");
    EXPECT_FALSE(first.broken);
}

TEST_F(restart_placement, a_readonly_reply_reads_the_server_again_at_once) {
    // INFO commands the client wrote and the test has not answered yet.
    const auto infos_waiting = [](const memory_wire& w) {
        std::size_t infos = 0;
        std::size_t used = 0;
        std::vector<std::string> args;
        for (std::string rest = w.to_node;
             test::parse_command(rest, used, args) == test::parse_result::command;
             rest.erase(0, used)) {
            infos += args[0] == "INFO" ? 1 : 0;
        }
        return infos;
    };
    replication_ = primary_replication("r1", false);
    auto& first = reconnect();
    answer(first, "old");
    // Demoted in place, the connection kept: its new primary's replication id.
    replication_ = "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_replid:r2\r\n";
    send_set();
    send_set();
    answer(first, "old"); // two READONLY replies: one INFO at once, before any refresh
    EXPECT_EQ(infos_waiting(first), 1U);
    answer(first, "old");
    EXPECT_EQ(link_->not_primary(), "not a primary: INFO replication says role:slave");
    EXPECT_TRUE(link_->restart_seen_at()) << "another master_replid: a role taken anew";
    EXPECT_FALSE(first.broken);

    // Known to be a replica now: more READONLY replies ask nothing before the next refresh.
    send_set();
    answer(first, "old");
    EXPECT_EQ(infos_waiting(first), 0U);
    advance(config_.eviction.refresh_interval);
    EXPECT_EQ(infos_waiting(first), 1U);
}

} // namespace
} // namespace redlock::detail
