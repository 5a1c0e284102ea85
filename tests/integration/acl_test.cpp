// The least-privilege ACL of docs/security.md, verified: a user with exactly those rules runs
// the whole lock life cycle on every node, cannot do anything more, and a user missing any
// one of them gets a per-node error that says what was refused.
#include "support/fixture.hpp"
#include "support/log_record.hpp"

#include <redlock/fencing.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

/// The rules docs/security.md gives for the key prefix `lock:`, in its order. The second
/// key pattern covers fencing_counter_key() of a key without braces (`{lock:job}:fence`);
/// a key with braces keeps its prefix (`lock:{a}:job:fence`). The third covers the nodes'
/// own keys (quarantine_options::node_key_prefix): the clock mark and the TTL ceiling's hash. Redis
/// checks the commands a script runs against the caller's rules, hence +get, +pexpire, +del
/// and the hash commands of the ceiling's scripts.
const std::vector<std::string> least_privilege = {
    "~lock:*", "~{lock:*}:fence", "~redlock:*",   "resetchannels", "-@all", "+set",
    "+get",    "+pexpire",        "+del",         "+hset",         "+hdel", "+hgetall",
    "+eval",   "+evalsha",        "+script|load", "+info",         "+time"};

constexpr const char* user_name = "redlock-test-locker";
// Long and unusual enough that finding it in any output can only mean it leaked.
constexpr const char* user_password = "acl-test-pw-7c1e9d0b44";

std::string joined(const std::vector<std::string>& rules) {
    std::string line;
    for (const auto& rule : rules) {
        line += (line.empty() ? "" : " ") + rule;
    }
    return line;
}

std::vector<std::string> without(std::vector<std::string> rules, const std::string& rule) {
    const auto found = std::find(rules.begin(), rules.end(), rule);
    EXPECT_NE(found, rules.end()) << rule;
    rules.erase(found);
    return rules;
}

/// The ACL user on every node for as long as this lives; deleted by the destructor, so also
/// when an assertion ends the test early. `reset` first: a user left over by a crashed run
/// keeps none of its old rules.
class acl_user {
public:
    explicit acl_user(const std::vector<std::string>& rules) {
        std::vector<std::string> command{"ACL",   "SETUSER", user_name,
                                         "reset", "on",      std::string(">") + user_password};
        command.insert(command.end(), rules.begin(), rules.end());
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            const auto reply = inspector(node).run(command);
            if (reply != "OK") {
                remove();
                throw std::runtime_error("ACL SETUSER on node " + std::to_string(node) + ": " +
                                         reply);
            }
        }
    }
    ~acl_user() { remove(); }
    acl_user(const acl_user&) = delete;
    acl_user& operator=(const acl_user&) = delete;

    /// The fixture's configuration with every node reached as this user, in database `db`,
    /// and the restart quarantine on, so that INFO is needed too.
    static client_config config_as_user(client_config c, int db = 0) {
        for (auto& node : c.nodes) {
            node = std::string("redis://") + user_name + ":" + user_password + "@" + node +
                   (db != 0 ? "/" + std::to_string(db) : "");
        }
        c.quarantine.enabled = true;
        // Every lock these tests take lasts at most 1.5 s: the fleet's maximum for their keys
        // (the default minute would outlast the nodes' uptime, restarted by other tests).
        c.fleet_max_ttl = 2s;
        return c;
    }

private:
    static void remove() {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            try {
                inspector(node).run({"ACL", "DELUSER", user_name});
            } catch (const std::exception&) {
                // A node that is down has lost the user already (ACLs live in memory).
            }
        }
    }
};

/// A direct connection to one node logged in as the test user, independent of the library.
class user_session {
public:
    explicit user_session(int node) {
        timeval timeout{2, 0};
        context_ =
            redisConnectWithTimeout(topology::host(node).c_str(), topology::port(node), timeout);
        if (!context_ || context_->err) {
            throw std::runtime_error("cannot reach node " + std::to_string(node));
        }
        redisSetTimeout(context_, timeout);
        const auto login = run({"AUTH", user_name, user_password});
        if (login != "OK") {
            throw std::runtime_error("AUTH as " + std::string(user_name) + ": " + login);
        }
    }
    ~user_session() { redisFree(context_); }
    user_session(const user_session&) = delete;
    user_session& operator=(const user_session&) = delete;

    /// The reply as text: a status, string or error as is, an integer in decimal, "(nil)".
    std::string run(const std::vector<std::string>& args) {
        return command_text(context_, args, "session of the ACL user");
    }

private:
    redisContext* context_ = nullptr;
};

class acl_test : public nodes_test {
protected:
    void SetUp() override {
        nodes_test::SetUp();
        ASSERT_TRUE(every_node_up_for(3s));
    }

    client_config user_config(int db = 0) {
        auto c = acl_user::config_as_user(config(), db);
        c.log = log_.sink();
        return c;
    }

    static lock_options short_lock(std::chrono::milliseconds ttl = 1500ms) {
        auto o = options(ttl);
        o.node_timeout = 200ms; // sanitizer builds are slow; nothing here waits for a timeout
        return o;
    }

    /// Nodes on which `key` holds `value`.
    static int holding(const std::string& key, const std::string& value) {
        int n = 0;
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            n += inspector(node).get(key) == value ? 1 : 0;
        }
        return n;
    }

    /// Every vote that was decided failed with `error`, and its message contains `text`.
    static void expect_every_decided_vote(const std::vector<node_vote>& votes, errc error,
                                          const std::string& text) {
        std::size_t decided = 0;
        for (const auto& vote : votes) {
            if (vote.outcome == node_outcome::pending) {
                continue; // decided without it
            }
            ++decided;
            EXPECT_EQ(vote.outcome, node_outcome::failed) << "node " << vote.node;
            EXPECT_EQ(vote.error, error) << "node " << vote.node << ": " << vote.server_message;
            EXPECT_NE(vote.server_message.find(text), std::string::npos)
                << "node " << vote.node << ": " << vote.server_message;
            EXPECT_EQ(vote.server_message.find(user_password), std::string::npos);
        }
        EXPECT_GE(decided, 3u) << "a quorum's worth of nodes said why";
    }

    /// With a user whose clock mark is refused: a lock of `key` is still granted with
    /// every node's vote, and the log says once per node what to grant.
    void expect_clock_mark_refused_and_votes_counted(const std::string& key) {
        blocking_client client(user_config());
        std::error_code ec;
        auto held = client.acquire(key, short_lock(), ec);
        ASSERT_FALSE(ec) << held.message;
        EXPECT_GE(holding(key, held.lock.token()), 3);
        client.release(held.lock, ec);
        EXPECT_FALSE(ec);
        EXPECT_TRUE(eventually([this] {
            return log_.text().find("clock mark refused (") != std::string::npos;
        })) << log_.text();
        EXPECT_NE(log_.text().find("steps of this node's clock cannot be detected; its votes "
                                   "still count (grant the user +evalsha +eval +time and the "
                                   "keys ~redlock:* of quarantine_options::node_key_prefix)"),
                  std::string::npos)
            << log_.text();
    }

    log_record log_;
};

TEST(acl_documentation, the_documented_line_is_the_one_tested) {
    std::ifstream doc(REDLOCK_SECURITY_DOC);
    ASSERT_TRUE(doc) << REDLOCK_SECURITY_DOC;
    std::stringstream text;
    text << doc.rdbuf();
    EXPECT_NE(text.str().find("ACL SETUSER locker reset on >PASSWORD " + joined(least_privilege)),
              std::string::npos)
        << "docs/security.md must give exactly: " << joined(least_privilege);
}

TEST_F(acl_test, the_least_privileged_user_runs_the_whole_life_cycle) {
    acl_user user(least_privilege);
    blocking_client client(user_config());
    std::error_code ec;

    // Acquire, extend, release.
    auto held = client.acquire("lock:acl:job", short_lock(), ec);
    ASSERT_FALSE(ec) << held.message;
    EXPECT_GE(holding("lock:acl:job", held.lock.token()), 3);
    std::this_thread::sleep_for(500ms);
    auto extended = client.extend(held.lock, ec);
    ASSERT_FALSE(ec) << extended.message;
    int pushed = 0;
    for (int node = 1; node <= 5; ++node) {
        pushed += inspector(node).pttl("lock:acl:job") > 1000 ? 1 : 0;
    }
    EXPECT_GE(pushed, 3) << "the extend pushed the expiry out on a quorum";
    auto released = client.release(extended.lock, ec);
    EXPECT_FALSE(ec) << released.message;
    EXPECT_TRUE(all_keys_gone());

    // Watchdog renewal over several TTLs.
    auto watched = client.acquire("lock:acl:watched", short_lock(500ms), ec);
    ASSERT_FALSE(ec) << watched.message;
    {
        std::promise<std::error_code> loss;
        watchdog dog(client.async_client(), watched.lock, renewal_options{},
                     [&](boost::system::error_code why) { loss.set_value(why); });
        auto lost = loss.get_future();
        EXPECT_EQ(lost.wait_for(1600ms), std::future_status::timeout) << "three TTLs, not lost";
        EXPECT_GE(dog.renewals(), 6u) << "every ttl/3";
        EXPECT_GE(holding("lock:acl:watched", watched.lock.token()), 3);
        std::promise<void> stopped;
        dog.async_stop([&] { stopped.set_value(); });
        stopped.get_future().wait();
        released = client.release(dog.current(), ec);
        EXPECT_FALSE(ec) << released.message;
    }

    // Fenced acquires, for a key without braces and one with a hash tag: both counter keys
    // are within the patterns, and the tokens grow from one holder to the next.
    for (const std::string key : {"lock:acl:fenced", "lock:{acl}:tagged"}) {
        auto fenced_options = short_lock();
        fenced_options.fencing = true;
        auto first = client.acquire(key, fenced_options, ec);
        ASSERT_FALSE(ec) << key << ": " << first.message;
        EXPECT_GE(holding(fencing_counter_key(key), std::to_string(first.lock.fencing_token())), 3)
            << key;
        client.release(first.lock, ec);
        EXPECT_FALSE(ec);
        auto second = client.acquire(key, fenced_options, ec);
        ASSERT_FALSE(ec) << key << ": " << second.message;
        EXPECT_GT(second.lock.fencing_token(), first.lock.fencing_token()) << key;
        client.release(second.lock, ec);
        EXPECT_FALSE(ec);
    }

    // Contention: another holder on nodes 1-3; the attempt's grants on 4 and 5 are cleaned
    // up (EVAL of the compare-and-delete, as this user), the other holder's keys untouched.
    for (int node = 1; node <= 3; ++node) {
        inspector(node).run({"SET", "lock:acl:contended", "another-holder", "PX", "10000"});
    }
    auto contended = client.acquire("lock:acl:contended", short_lock(), ec);
    EXPECT_EQ(ec, errc::contention) << contended.message;
    EXPECT_TRUE(eventually([] {
        return !inspector(4).get("lock:acl:contended") && !inspector(5).get("lock:acl:contended");
    }));
    EXPECT_EQ(holding("lock:acl:contended", "another-holder"), 3);

    EXPECT_EQ(log_.text().find("NOPERM"), std::string::npos) << log_.text();
    EXPECT_EQ(log_.text().find(user_password), std::string::npos);
}

TEST_F(acl_test, keys_outside_the_patterns_are_refused_on_every_node) {
    acl_user user(least_privilege);
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("elsewhere:job", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error, "NOPERM");
    EXPECT_EQ(refused.message.find(user_password), std::string::npos);
    EXPECT_EQ(keys_everywhere(), 0);
}

TEST_F(acl_test, the_least_privileged_user_can_do_nothing_more) {
    acl_user user(least_privilege);
    inspector(1).run({"SET", "elsewhere", "untouched"});
    user_session session(1);
    // Allowed, and so a power these credentials carry: the scripts need GET, PEXPIRE and DEL
    // on the lock keys, and Redis grants a script no more than its caller.
    EXPECT_EQ(session.run({"GET", "lock:acl:any"}), "(nil)");
    for (const std::vector<std::string>& forbidden : {
             std::vector<std::string>{"FLUSHALL"},
             {"FLUSHDB"},
             {"KEYS", "*"},
             {"SCAN", "0"},
             {"GET", "elsewhere"},
             {"SET", "elsewhere", "x"},
             {"DEL", "elsewhere"},
             {"SELECT", "1"},
             {"CONFIG", "GET", "maxmemory"},
             {"SCRIPT", "FLUSH"},
             {"CLIENT", "LIST"},
             {"ACL", "LIST"},
             {"PUBLISH", "channel", "x"},
             {"EVAL", "return 1", "1", "elsewhere"},
         }) {
        EXPECT_TRUE(session.run(forbidden).starts_with("NOPERM")) << forbidden.front();
    }
    // A script gets the caller's rules, for undeclared keys and for commands alike.
    EXPECT_NE(session.run({"EVAL", "return redis.call('GET', 'elsewhere')", "0"})
                  .find("can't access at least one of the keys"),
              std::string::npos);
    EXPECT_NE(
        session.run({"EVAL", "return redis.call('FLUSHALL')", "0"}).find("can't run this command"),
        std::string::npos);
    EXPECT_EQ(inspector(1).get("elsewhere"), "untouched");
}

// Each rule is needed: without it, the operation that needs it fails with a per-node error
// that names the refusal.

TEST_F(acl_test, without_info_the_quarantine_gives_no_votes) {
    acl_user user(without(least_privilege, "+info"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:blind", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::restarts_undetectable,
                              "INFO refused: restarts and evictions cannot be detected");
    expect_every_decided_vote(refused.votes, errc::restarts_undetectable, "NOPERM");
    EXPECT_TRUE(all_keys_gone()) << "the refused attempt cleaned up its keys";
}

// TIME, read with every INFO, shows a node's wall clock stepping (core/clock_watch); the
// TTL ceiling's raise reads it too (its entries are times on the node's clock). Refused,
// the raise fails, and with it every grant it would have covered: the reason says so.
TEST_F(acl_test, without_time_the_ceiling_cannot_be_raised_and_nothing_is_granted) {
    acl_user user(without(least_privilege, "+time"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:no-time", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error,
                              "TTL ceiling redlock:ttl-ceiling not raised");
    EXPECT_TRUE(all_keys_gone()) << "the refused attempt cleaned up its keys";
    // The clock mark reads TIME too: refused, it is logged (its own test is below).
    EXPECT_TRUE(eventually([this] {
        return log_.text().find("clock mark refused (") != std::string::npos;
    })) << log_.text();
    // Redis refuses a script's command without naming it.
    EXPECT_NE(log_.text().find("can't run this command"), std::string::npos) << log_.text();
}

// The clock mark (lua/clock_mark.lua, its TIME read against the steady clock with every
// INFO, and the steps back it records on the node) shows a node's wall clock stepping. A
// refusal of its key costs the detection only: the node still votes, and the client says
// once what to grant. (Without +time or the whole pattern the TTL ceiling's raise fails
// first, and nothing is granted: the tests above and below.)
TEST_F(acl_test, without_the_clock_mark_key_clock_steps_go_unseen_and_the_votes_still_count) {
    auto rules = without(least_privilege, "~redlock:*");
    rules.push_back("~redlock:ttl-ceiling");
    acl_user user(rules);
    expect_clock_mark_refused_and_votes_counted("lock:acl:no-clock-key");
    EXPECT_NE(log_.text().find("NOPERM"), std::string::npos) << log_.text();
    EXPECT_FALSE(inspector(1).get("redlock:clock")) << "nothing written without the pattern";
}

// INFO also tells whether a node can evict keys: with the quarantine off, the eviction
// veto (on by default) still needs it.
TEST_F(acl_test, without_info_the_eviction_veto_gives_no_votes) {
    acl_user user(without(least_privilege, "+info"));
    auto config = user_config();
    config.quarantine.enabled = false;
    blocking_client client(config);
    std::error_code ec;
    auto refused = client.acquire("lock:acl:blind", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::restarts_undetectable,
                              "INFO refused: restarts and evictions cannot be detected");
    EXPECT_TRUE(all_keys_gone()) << "the refused attempt cleaned up its keys";
}

// docs/security.md's narrower rule for Redis 7.0 to 7.2: `+info|server` checks INFO's first
// argument only, so `INFO server memory stats` passes and the memory policy is read.
TEST_F(acl_test, info_server_as_first_argument_is_enough) {
    auto rules = without(least_privilege, "+info");
    rules.push_back("+info|server");
    acl_user user(rules);
    blocking_client client(user_config());
    std::error_code ec;
    auto held = client.acquire("lock:acl:narrow", short_lock(), ec);
    ASSERT_FALSE(ec) << held.message;
    client.release(held.lock, ec);
    EXPECT_FALSE(ec);
}

// The TTL ceiling (docs/safety.md): a user whose ACL does not reach the node's own keys
// cannot raise it, and a grant it could not cover must not count: other clients' learned
// quarantines would read a ceiling below this lock.
TEST_F(acl_test, without_the_node_key_pattern_nothing_is_granted_and_the_reason_names_it) {
    acl_user user(without(least_privilege, "~redlock:*"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:no-ceiling", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error,
                              "TTL ceiling redlock:ttl-ceiling not raised (NOPERM");
    expect_every_decided_vote(refused.votes, errc::server_error, "node_key_prefix");
    EXPECT_TRUE(all_keys_gone()) << "the refused attempt cleaned up the keys its SETs wrote";
}

TEST_F(acl_test, without_set_nothing_is_granted) {
    acl_user user(without(least_privilege, "+set"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:job", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error, "NOPERM");
    expect_every_decided_vote(refused.votes, errc::server_error, "'set'");
}

TEST_F(acl_test, without_the_counter_pattern_fenced_acquires_fail_and_plain_ones_work) {
    acl_user user(without(least_privilege, "~{lock:*}:fence"));
    blocking_client client(user_config());
    std::error_code ec;
    auto fenced_options = short_lock();
    fenced_options.fencing = true;
    auto refused = client.acquire("lock:acl:fenced", fenced_options, ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error, "NOPERM");
    auto plain = client.acquire("lock:acl:fenced", short_lock(), ec);
    EXPECT_FALSE(ec) << plain.message;
    client.release(plain.lock, ec);
    EXPECT_FALSE(ec);
}

TEST_F(acl_test, without_get_extends_fail_and_without_pexpire_nothing_is_granted) {
    {
        acl_user user(without(least_privilege, "+get"));
        blocking_client client(user_config());
        std::error_code ec;
        auto held = client.acquire("lock:acl:+get", short_lock(), ec);
        ASSERT_FALSE(ec) << held.message;
        auto refused = client.extend(held.lock, ec);
        EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
        // Redis names neither the command nor the rule from inside a script.
        expect_every_decided_vote(refused.votes, errc::server_error,
                                  "The user executing the script can't run this command");
    }
    // The ceiling's raise sets its expiry with PEXPIRE: refused, no grant counts.
    acl_user user(without(least_privilege, "+pexpire"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:+pexpire", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error,
                              "TTL ceiling redlock:ttl-ceiling not raised");
}

TEST_F(acl_test, without_evalsha_or_del_releases_fail_and_the_key_stays) {
    for (const auto& [rule, why] : {std::pair<std::string, std::string>{"+evalsha", "NOPERM"},
                                    {"+del", "The user executing the script can't run"}}) {
        acl_user user(without(least_privilege, rule));
        blocking_client client(user_config());
        std::error_code ec;
        const auto key = "lock:acl:" + rule;
        auto held = client.acquire(key, short_lock(), ec);
        ASSERT_FALSE(ec) << rule << ": " << held.message;
        auto refused = client.release(held.lock, ec);
        EXPECT_EQ(ec, errc::quorum_unreachable) << rule << ": " << refused.message;
        EXPECT_EQ(refused.released, 0u) << rule;
        expect_every_decided_vote(refused.votes, errc::server_error, why);
        EXPECT_GE(holding(key, held.lock.token()), 3) << rule;
    }
}

// The ceiling's raise goes as EVAL (rare, and never answered NOSCRIPT), and so do the
// cleanups of failed attempts: without +eval nothing is granted, and the grants the SETs
// wrote stay until their TTL (the cleanup is refused too), the log says where and why.
TEST_F(acl_test, without_eval_nothing_is_granted_and_a_failed_attempt_cannot_clean_up) {
    acl_user user(without(least_privilege, "+eval"));
    blocking_client client(user_config());
    std::error_code ec;
    auto refused = client.acquire("lock:acl:no-eval", short_lock(), ec);
    EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
    expect_every_decided_vote(refused.votes, errc::server_error,
                              "TTL ceiling redlock:ttl-ceiling not raised (NOPERM");
    EXPECT_TRUE(eventually([&] {
        return log_.text().find("cleanup of lock:acl:no-eval on ") != std::string::npos;
    })) << log_.text();
    EXPECT_GE(keys_everywhere(), 3) << "the SETs wrote their keys before the refusal was known";
}

TEST_F(acl_test, a_database_other_than_0_needs_select) {
    {
        acl_user user(least_privilege);
        blocking_client client(user_config(1));
        std::error_code ec;
        auto refused = client.acquire("lock:acl:db1", short_lock(), ec);
        EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
        expect_every_decided_vote(refused.votes, errc::connection_failed, "SELECT");
        expect_every_decided_vote(refused.votes, errc::connection_failed, "NOPERM");
    }
    auto with_select = least_privilege;
    with_select.push_back("+select");
    acl_user user(with_select);
    blocking_client client(user_config(1));
    std::error_code ec;
    auto held = client.acquire("lock:acl:db1", short_lock(), ec);
    ASSERT_FALSE(ec) << held.message;
    // Granted at a quorum: a node may still be answering.
    EXPECT_TRUE(eventually([&] {
        for (int node = 1; node <= 5; ++node) {
            if (inspector(node).get("lock:acl:db1", 1) != held.lock.token()) {
                return false;
            }
        }
        return true;
    }));
    EXPECT_EQ(keys_everywhere(), 0) << "nothing in database 0";
    client.release(held.lock, ec);
    EXPECT_FALSE(ec);
}

} // namespace
} // namespace redlock::test
