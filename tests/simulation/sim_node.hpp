#ifndef REDLOCK_TESTS_SIMULATION_SIM_NODE_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_NODE_HPP

#include "sim_clock.hpp"
#include "sim_lua.hpp"
#include "sim_reply.hpp"
#include "sim_world.hpp"
#include "transport/scripts.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
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
    /// notify-keyspace-events Kx: a key that expires is announced, "expired" on
    /// __keyspace@0__:<key>, when it is found expired (by a command, or by Redis' active
    /// expiry, here 0 to 100 ms after its time, drawn from keyspace_seed).
    bool keyspace_events = false;
    std::uint64_t keyspace_seed = 0;
    /// Per INFO: refused with NOPERM (a user without +info), drawn from info_refused_seed.
    double info_refused_rate = 0;
    std::uint64_t info_refused_seed = 0;
    /// A writable replica (replica-read-only no) listed as a node: INFO replication says
    /// role:slave, and before a command, with this chance, a full resync from its primary
    /// replaces what it holds (every lock key gone; fencing counters kept, as if its
    /// primary's matched), drawn from resync_seed. Zero: a primary.
    double resync_rate = 0;
    std::uint64_t resync_seed = 0;
    /// A replica promoted before the schedule began (a failover long ago): INFO replication's
    /// master_replid2 says so from the start, and its uptime predates the promotion.
    bool promoted_before_start = false;
};

/// A Redis 7.0 master, single-threaded: the commands the library and the scripts of lua/
/// send (SET with NX/XX/PX/EX/KEEPTTL, GET, DEL, PEXPIRE, PEXPIREAT, PTTL, TYPE, TIME,
/// HSET, HGET, HDEL, HLEN, HGETALL, RPUSH, LRANGE, PUBLISH, PING, INFO, SCRIPT LOAD/FLUSH,
/// EVAL, EVALSHA) with Redis' replies and errors (WRONGTYPE, arity, syntax), expiry on the
/// node's own drifting clock, and the scripts run as they are in Lua 5.1 (lua_scripts)
/// behind a script cache (empty at start, loaded by EVAL and SCRIPT LOAD, lost on SCRIPT
/// FLUSH and restart). INFO server, memory, stats and replication, evictions
/// (node_faults::evict_rate), restarts that lose the data. The conformance test holds the replies
/// and the keyspace a script leaves to a real redis-server's. Anything it does not know gets Redis'
/// error.
class sim_node final : private script_host {
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
    /// The node's wall clock steps by `delta` (an NTP step, a VM resumed, an operator): its
    /// TIME and every expiry, which Redis measures on that clock, move with it.
    void step_clock(real_ns delta) { clock_.offset += delta; }
    /// Up again, empty (fencing counters aside), with another run_id and replication id.
    /// `as_promoted_replica`: a failover rather than a restart, to a replica that had none
    /// of the lock keys: up for long (its uptime predates the promotion) and saying, in
    /// INFO replication's master_replid2, that it was promoted since it started.
    void restart(bool as_promoted_replica = false);
    /// Made a read-only replica in place (REPLICAOF): the connections stay, writes get
    /// READONLY (scripts' too), INFO says role:slave with its new primary's master_replid,
    /// and the full resync replaces the data set with one that lacks every lock key and
    /// the latest fencing raises (durable or not: another server's data). The holds it
    /// drops are remembered (dropped_at).
    void demote();
    /// A primary again (REPLICAOF NO ONE): another master_replid, the old one as
    /// master_replid2; the run_id and the connections stay.
    void promote();
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

    /// Invariants the node checks on what the scripts do to its keyspace:
    /// (o) no reader joins a readers' hash while a writer's mark is ahead there next to an
    ///     unexpired reader (the mark keeps new readers out until it passes or the last
    ///     reader goes);
    /// (p) force_release.lua deletes lock state only: a string with an expiry or a hash
    ///     whose mode is "shared" or a permit count, never a fencing counter or other data.
    std::function<void(const std::string& invariant, const std::string& what)> on_violation;

    /// Diagnoses for the report: patterns of known defects seen on the node.
    std::function<void(const std::string&)> on_note;

    /// Every PUBLISH when it runs (release.lua's and force_release.lua's on
    /// "redlock:released:" + key).
    std::function<void(const std::string& channel, const std::string& payload)> on_publish;

    /// The node's TIME in milliseconds since the epoch: its own drifting clock, offset so
    /// that it reads like a real node's (the holders' deadlines are in it).
    std::int64_t time_ms() const;
    /// A compare-and-delete removed `token`'s hold of `key`: release.lua's DEL of the
    /// string that is its token, or HDEL of its token's field in a lock hash. For (k).
    std::function<void(const std::string& key, const std::string& token)> on_delete;

    /// A lock's key was written here: a SET with an expiry (the acquire's SET NX PX,
    /// acquire.lua's SET PX, a write-back), `token` its value, or a holder's field of a lock
    /// hash (a reader, a permit), `token` the field. For (s).
    std::function<void(const std::string& key, const std::string& token)> on_lock_set;
    /// `token`'s hold of `key` was written here now: a lock string set to it or its field
    /// of a lock hash (an acquire, a write-back). For the role changes' residue.
    std::function<void(const std::string& key, const std::string& token)> on_hold_written;
    /// force_release.lua deleted `token`'s hold of `key` here now (its DEL of a lock string,
    /// whose value is the token, or of a lock hash, one call per holder's field): for (n).
    std::function<void(const std::string& key, const std::string& token)> on_force_delete;
    /// extend.lua (a renewal with recreate_missing) wrote back `token`'s hold of `key`, which
    /// a force release had deleted here while the node did not restart since (an eviction
    /// does not count: it says that keys went, not which): for (n). Only for a command sent after
    /// the force release ran here (command_sent_at): one sent before it, on its way meanwhile,
    /// could not know.
    std::function<void(const std::string& key, const std::string& token)> on_forced_recreate;
    /// When the command being executed was sent by its client (set by the link around
    /// execute()); negative when unknown.
    real_ns command_sent_at = -1;
    /// The command being executed is a resend (EVAL after NOSCRIPT) that waited for its
    /// connection (and its INFO) to be made: its round started before the connection broke,
    /// so its client cannot tell whether it reached the server before or after a restart.
    bool sent_before_connect = false;

    /// Keys that still live (not expired on the node's clock), fencing counters, the clock
    /// mark and a TTL ceiling with an expiry excluded.
    std::vector<std::string> live_lock_keys() const;
    /// Whether `token` holds `key` here now: a live string equal to it, or a live lock hash
    /// with its field and a deadline ahead on this node's clock. For (u).
    bool holds(const std::string& key, const std::string& token) const;
    /// When the node last lost its keys in a crash, and last evicted one; INT64_MIN never.
    real_ns crashed_at() const noexcept { return crashed_at_; }
    /// When a resync (demote) last dropped `token`'s live hold of `key`; INT64_MIN never.
    real_ns dropped_at(const std::string& key, const std::string& token) const;
    real_ns evicted_at() const noexcept { return evicted_at_; }

private:
    /// What TIME adds to the node's local clock (ns): it reads like a real node's.
    static constexpr std::int64_t epoch_ns = 1'700'000'000LL * 1'000'000'000LL;

    using args_t = std::vector<std::string>;
    enum class kind { string, hash, list };
    static constexpr std::int64_t no_expiry = INT64_MIN;
    struct entry {
        std::string value;
        /// Node-local microseconds (a 15-digit TTL in ms fits), or no_expiry. Any other
        /// value is a time, negative ones too: a node clock stepped back below its zero
        /// still expires its keys.
        std::int64_t expire_us = no_expiry;
        std::uint64_t written = 0; // command number that wrote it
        kind type = kind::string;
        /// A hash's fields in insertion order, as a small Redis hash (listpack) keeps them.
        std::vector<std::pair<std::string, std::string>> fields{};
        std::vector<std::string> items{}; // a list's
    };
    /// A command as Redis' table has it: arity (negative: at least), whether a script may
    /// call it, and what it does.
    struct command_spec {
        int arity;
        bool from_scripts;
        bool writes; // refused on a read-only replica

        sim_reply (sim_node::*run)(const args_t&);
    };
    static const command_spec* lookup(const std::string& name);

    std::int64_t local_now() const { return clock_.local(world_.now()); }
    /// A holder's deadline as the scripts read it (up to 15 digits, milliseconds on this
    /// node's TIME), ahead of now.
    bool deadline_ahead(const std::string& value) const;
    std::int64_t local_us() const { return local_now() / us; }
    entry* find(const std::string& key);
    /// The key's entry when it is of type `t`; nullptr when missing; `wrong` set otherwise.
    entry* find_as(const std::string& key, kind t, bool& wrong);
    entry& create(const std::string& key, kind t);
    void erase(const std::string& key);
    /// keyspace_events: an expired key goes, announced.
    void expire(std::unordered_map<std::string, entry>::iterator it);
    /// keyspace_events: the active expiry of `key` at its expiry time, plus a lag.
    void watch_expiry(const std::string& key);

    /// One command from a client (depth 0) or a script (script_command).
    sim_reply dispatch(const args_t& args, bool from_script);
    sim_reply script_command(const std::vector<std::string>& args) override;
    sim_reply eval(const args_t& args, bool by_sha);
    static std::string sha_of(const std::string& text);

    sim_reply cmd_set(const args_t& a);
    sim_reply cmd_get(const args_t& a);
    sim_reply cmd_del(const args_t& a);
    sim_reply cmd_pexpire(const args_t& a);
    sim_reply cmd_pexpireat(const args_t& a);
    sim_reply expire(const args_t& a, bool absolute);
    sim_reply cmd_pttl(const args_t& a);
    sim_reply cmd_type(const args_t& a);
    sim_reply cmd_time(const args_t& a);
    sim_reply cmd_hset(const args_t& a);
    sim_reply cmd_hget(const args_t& a);
    sim_reply cmd_hdel(const args_t& a);
    sim_reply cmd_hlen(const args_t& a);
    sim_reply cmd_hgetall(const args_t& a);
    sim_reply cmd_rpush(const args_t& a);
    sim_reply cmd_lrange(const args_t& a);
    sim_reply cmd_publish(const args_t& a);
    sim_reply cmd_ping(const args_t& a);
    sim_reply cmd_info(const args_t& a);
    sim_reply cmd_script(const args_t& a);
    sim_reply cmd_eval(const args_t& a) { return eval(a, false); }
    sim_reply cmd_evalsha(const args_t& a) { return eval(a, true); }

    world& world_;
    int id_;
    drift_clock clock_;
    node_faults faults_;
    real_ns crashed_at_ = INT64_MIN;
    real_ns evicted_at_ = INT64_MIN;
    bool up_ = true;
    /// Demoted in place (demote) and not promoted since: a read-only replica.
    bool read_only_replica_ = false;
    /// The replication ids taken in place so far (demote, promote): each one new.
    std::uint64_t replication_ids_taken_ = 0;
    /// (key, token) holds a resync dropped, and when.
    std::map<std::pair<std::string, std::string>, real_ns> dropped_in_resync_;
    std::uint64_t incarnation_ = 1;
    std::string run_id_;
    /// INFO replication's master_replid, and master_replid2 (all zeros unless promoted).
    std::string replication_id_;
    std::string replication_id2_;
    real_ns started_ = 0;
    real_ns busy_until_ = 0;
    std::unordered_map<std::string, entry> data_;
    std::mt19937_64 keyspace_rng_;
    std::mt19937_64 info_refused_rng_;
    std::mt19937_64 resync_rng_;
    std::map<std::string, std::map<std::uint64_t, message_sink>> channels_;
    std::unordered_set<std::string> scripts_; // this node's script cache (SHA1s)
    /// The script running now: what the hooks (on_delete, on_note, the force-release ones)
    /// look at.
    struct running_script {
        const std::string* sha = nullptr;
        const std::string* token = nullptr; // ARGV[1]
        bool via_eval = false;
    } running_{};
    std::uint64_t commands_ = 0;
    std::uint64_t evicted_keys_ = 0; // since the last restart, as Redis counts them
    /// volatile-ttl: drops the key with an expiry that has the least time left, if any.
    void evict_one();
    /// Per token: the command number of a release (compare-and-delete) refused with NOSCRIPT.
    std::unordered_map<std::string, std::uint64_t> release_noscript_;

    /// Whether the script running now is `script`.
    bool running(const detail::script& script) const {
        return running_.sha && *running_.sha == script.sha1;
    }
    /// (key, token) holds that force_release.lua deleted, and when, until the node restarts.
    std::map<std::pair<std::string, std::string>, real_ns> forced_;
    /// (key, token) holds written by a resend that waited for a reconnect (see
    /// sent_before_connect): a write-back of one after a force release is the residue that
    /// docs/safety.md names, noted rather than failed.
    std::set<std::pair<std::string, std::string>> written_across_reconnect_;
    /// (o): whether a writer's mark stands on `key` next to an unexpired reader now.
    bool writer_mark_ahead(const std::string& key);
    /// The hook of cmd_del under force_release.lua: records each hold of `e` it deletes.
    void note_force_delete(const std::string& key, const entry& e);
    /// The hooks of a SET or HSET writing `token`'s hold of `key`: the write across a
    /// reconnect, and (under extend.lua, for a hold not live here before) the write-back
    /// of a force-released hold.
    void note_hold_written(const std::string& key, const std::string& token, bool was_live);
};

} // namespace redlock::sim

#endif
