#ifndef REDLOCK_TESTS_SIMULATION_SIM_NODE_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_NODE_HPP

#include "sim_clock.hpp"
#include "sim_world.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace redlock::sim {

/// How a node misbehaves in one schedule.
struct node_faults {
    /// Per command: answered with an error reply (READONLY, OOM, BUSY, NOPERM), not run.
    double error_rate = 0;
    /// Per command: a slow command (a long script, a big key) that stalls the node.
    double slow_rate = 0;
    real_ns slow_max = 20 * ms;
    /// Fencing counters survive a restart (appendfsync always); lock keys never do.
    bool durable_counters = true;
    /// A hostile or corrupted node: answers every fenced acquire it grants with the counter
    /// 2^64-2, whatever it holds (its raises and everything else stay honest).
    bool lies_about_counter = false;
    /// A node set to evict keys (maxmemory 3mb, maxmemory-policy volatile-ttl, said so by
    /// its INFO): before a command, with this chance, memory is short and it evicts the key
    /// with an expiry that has the least time left, counting it in evicted_keys. Zero: a
    /// node with maxmemory 0 that never evicts.
    double evict_rate = 0;
};

/// A Redis master, single-threaded, with the semantics the library relies on: SET NX PX with
/// expiry on the node's own drifting clock, GET, DEL, PEXPIRE, PTTL, TYPE, TIME, the lock
/// family's hashes (HGETALL, HSET) and a list (RPUSH) to stand for foreign types, the scripts
/// of lua/ run by meaning behind a script cache (empty at start, loaded by EVAL and SCRIPT
/// LOAD, lost on SCRIPT FLUSH and restart), INFO server, memory and stats, evictions
/// (node_faults::evict_rate), restarts that lose the data. Replies
/// are RESP bytes; the scripts' replies are byte for byte what Redis 7 answers (the
/// conformance test holds them to it). Anything it does not know gets an error reply.
class sim_node {
public:
    sim_node(world& w, int id, drift_clock clock, node_faults faults);

    int id() const noexcept { return id_; }
    std::string name() const { return "node" + std::to_string(id_); }
    bool up() const noexcept { return up_; }
    /// Changes with every crash: work queued before a crash never runs after it.
    std::uint64_t incarnation() const noexcept { return incarnation_; }

    /// When a command arriving now runs, and when its reply leaves: commands run one at a
    /// time in arrival order.
    std::pair<real_ns, real_ns> schedule_execution();
    /// Runs one command now; the RESP reply. `who` is for the trace.
    std::string execute(const std::vector<std::string>& args, const std::string& who);

    void crash();
    void restart();
    void flush_scripts();

    /// Called on crash: every connection to the node breaks.
    std::map<std::uint64_t, std::function<void()>> on_crash;

    /// Pub/sub: release.lua PUBLISHes on redlock:released:<key> when it deletes. A sink gets
    /// the channel and payload of each message published while it is subscribed;
    /// subscriptions are lost on crash (the connections break).
    using message_sink =
        std::function<void(const std::string& channel, const std::string& payload)>;
    void subscribe(const std::string& channel, std::uint64_t subscriber, message_sink sink);
    void unsubscribe(const std::string& channel, std::uint64_t subscriber);
    void unsubscribe_all(std::uint64_t subscriber);

    /// Diagnoses for the report: patterns of known defects seen on the node.
    std::function<void(const std::string&)> on_note;

    /// A script's PUBLISH on a release channel ("redlock:released:" + key), when it runs.
    std::function<void(const std::string& channel, const std::string& payload)> on_publish;

    /// The node's TIME in milliseconds since the epoch: its own drifting clock, offset so
    /// that it reads like a real node's (the holders' deadlines are in it).
    std::int64_t time_ms() const;
    /// A compare-and-delete removed `token`'s hold of `key` (the key, or its holder in a
    /// lock hash): for (k).
    std::function<void(const std::string& key, const std::string& token)> on_delete;

    /// A renewal wrote back `token`'s hold of `key`, which a force release had deleted here
    /// while the node forgot nothing since (no crash, no eviction): for (n).
    /// force_release deleted `token`'s hold of `key` here now.
    std::function<void(const std::string& key, const std::string& token)> on_force_delete;
    /// Only for a command sent after the force release ran here (command_sent_at): one sent
    /// before it, on its way meanwhile, could not know.
    std::function<void(const std::string& key, const std::string& token)> on_forced_recreate;
    /// When the command being executed was sent by its client (set by the link around
    /// execute()); negative when unknown.
    real_ns command_sent_at = -1;
    /// The command being executed waited for its connection (and its INFO) to be made: its
    /// client cannot tell whether it reached the server before or after a restart it saw.
    bool sent_before_connect = false;

    /// Keys that still live (not expired on the node's clock), fencing counters excluded.
    std::vector<std::string> live_lock_keys() const;

private:
    /// (key, token) holds that force_release deleted, and when, until the node forgets
    /// (crash, eviction).
    std::map<std::pair<std::string, std::string>, real_ns> forced_;
    /// (key, token) holds written by a command that waited for a reconnect (see
    /// sent_before_connect): a write-back of one after a force release is the residue that
    /// docs/safety.md names, noted rather than failed.
    std::set<std::pair<std::string, std::string>> written_across_reconnect_;
    using reply = std::string;
    enum class kind { string, hash, list };
    struct entry {
        std::string value;
        std::int64_t expire_at = -1; // node-local ns, -1 = none
        std::uint64_t written = 0;   // command number that wrote it
        kind type = kind::string;
        std::map<std::string, std::string> fields{}; // a hash's
        std::vector<std::string> items{};            // a list's
    };
    std::int64_t local_now() const { return clock_.local(world_.now()); }
    entry* find(const std::string& key);
    bool set_nx_px(const std::string& key, const std::string& value, std::int64_t ttl_ms, bool nx);

    // The lock family's hashes, as the scripts treat them (lua/release.lua).
    /// The hash is a lock of ours: its mode is "shared" or a permit count.
    static bool lock_hash(const entry& e);
    /// Whether `token` holds `key` here: the string is the token, or a lock hash has the
    /// token's field with a deadline ahead.
    bool holds(const std::string& key, const std::string& token);
    /// lua/extend.lua's re-creation of a semaphore's holder: fewer than `permits` unexpired
    /// holders, none in the slot that ends `token`.
    bool permit_free(const entry& e, const std::string& token, const std::string& permits) const;
    /// Drops the expired holders (and a passed writer mark), then the key with its last
    /// holder, or sets its expiry to the latest remaining deadline.
    void settle(const std::string& key);
    void expire_at_ms(entry& e, double deadline_ms) const;
    void publish_release(const std::string& key, const std::string& payload);

    reply release(const std::vector<std::string>& keys, const std::vector<std::string>& argv,
                  bool via_eval);
    reply extend(const std::vector<std::string>& keys, const std::vector<std::string>& argv);
    reply acquire(const std::vector<std::string>& keys, const std::vector<std::string>& argv);
    reply holders_acquire(const std::vector<std::string>& keys,
                          const std::vector<std::string>& argv);
    reply fence_raise(const std::vector<std::string>& keys, const std::vector<std::string>& argv);
    reply writer_waiting(const std::vector<std::string>& keys,
                         const std::vector<std::string>& argv);
    reply force_release(const std::vector<std::string>& keys);

    reply run(const std::vector<std::string>& args, std::size_t from, int depth);
    reply run_script(std::string_view sha, const std::vector<std::string>& args, int depth,
                     bool via_eval);

    world& world_;
    int id_;
    drift_clock clock_;
    node_faults faults_;
    bool up_ = true;
    std::uint64_t incarnation_ = 1;
    std::string run_id_;
    real_ns started_ = 0;
    real_ns busy_until_ = 0;
    std::unordered_map<std::string, entry> data_;
    std::map<std::string, std::map<std::uint64_t, message_sink>> channels_;
    std::unordered_set<std::string> scripts_;
    std::uint64_t commands_ = 0;
    std::uint64_t evicted_keys_ = 0; // since the last restart, as Redis counts them
    /// volatile-ttl: drops the key with an expiry that has the least time left, if any.
    void evict_one();
    /// Per token: the command number of a release (compare-and-delete) refused with NOSCRIPT.
    std::unordered_map<std::string, std::uint64_t> release_noscript_;
};

} // namespace redlock::sim

#endif
