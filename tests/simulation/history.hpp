#ifndef REDLOCK_TESTS_SIMULATION_HISTORY_HPP
#define REDLOCK_TESTS_SIMULATION_HISTORY_HPP

#include "sim_clock.hpp"
#include "sim_world.hpp"

#include "redlock/lock.hpp"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

namespace redlock::sim {

/// What happened, on simulated real time, and the invariants checked against it:
/// (a) no two holders with overlapping validity windows on one key, unless both are shared
///     (readers) or both hold permits, and never more permit holders at once than permits;
/// (b) fencing tokens strictly increase in grant order per key (between two shared or two
///     permit holders, which may be granted concurrently, only distinct); where a node whose
///     counters are not durable crashed between the earlier holder's attempt and the later
///     one's grant, only among one client's holders (what its fence floors promise,
///     docs/safety.md "Durability"): a grant after the loss, to any lane of the client, is
///     above every token the client was granted before it. Two grants both after the last
///     loss are ordered again (their majorities meet on a node that kept its counter);
/// (c) with_lock never reports success for work that ran outside the holder's validity;
/// (d) the loss signal never fires after valid_until on the holder's clock, except at the
///     instant a holder paused across it resumes, and does fire when the validity ran out
///     while the watchdog ran and the holder relied on the lock;
/// (e) after quiescence plus the largest TTL no lock key remains (checked by the runner);
/// (f) every completion handler runs exactly once;
/// (g) nothing extends or re-creates a lock after its holder sent the release;
/// (h) with_lock never throws for work that does not throw (the workload's never does);
/// (i) once a client's close() has run, it sends nothing that takes or extends a lock;
/// (j) a watchdog whose client was closed has told its holder (checked by the runner);
/// (k) a compare-and-delete (a release finishing in the background, a cleanup, a copy resent
///     after NOSCRIPT) never removes the key of a holder still relying on it;
/// (l) close() never cuts short a release's delete before that release's node_timeout.
/// (n) a force release wins over a watchdog with recreate_missing: no renewal writes back a
///     hold that a force release deleted on a node that forgot nothing since (checked by the
///     nodes); a holder whose hold a force release deleted anywhere is no longer protected
///     for (a) from that delete on.
/// (o), (p) checked by the nodes (sim_node::on_violation).
/// (q) lock_mismatch is never silent: an acquire one of whose attempts heard REDLOCK_MISMATCH
///     (the key holds a lock of another kind or permit count, or what is no lock) from a
///     quorum of nodes within its node_timeout (a late answer is no vote), its process not paused
///     meanwhile, ends with errc::lock_mismatch, unless it was cancelled.
/// (x) one client's exclusive acquires for the same keys are served in the order they were
///     called: none is granted while an earlier one still waits (a try-lock, one attempt
///     allowed, excepted: it attempts at once).
/// (r) a vote counts only if it was handled before its round's deadline: an unfenced grant
///     or an extend (decided at the vote that completes its quorum) is delivered before that
///     deadline on the client's clock, also when the client was paused with replies waiting
///     and ran them before the timer on resuming.
/// (w) checked by the network (sim_connection::execute): a command handed to a connection
///     that was open then is written at that instant, unless its client was paused
///     meanwhile. Not a safety property: bytes a client keeps until some later, unrelated
///     write (a batch never ended) cost every lock's latency, and nothing else sees it.
/// Clock steps: a node's wall clock that steps forward expires its keys early, and (a) can
/// then fail for a reason no client can always see. A step is detectable by a client before
/// a moment g when that client took two consecutive TIME samples of the node, the first read
/// before the step and the second after it and answered before g, whose offsets (node time
/// minus the middle of the round trip on the client's clock) moved by more than
/// drift x elapsed + both half round trips + 1 ms: the rule of core/clock_watch, computed
/// here again from the raw samples. It is detectable too when one of that client's samples,
/// answered before g, carried a backward step that lua/clock_mark.lua recorded on the node
/// after the step (its run read the node's clock after it): the node's clock was ahead until
/// then, and the client's quarantine runs from no earlier than that run, so it covers every
/// hold the forward step can have dropped (written before the step, none lives past it by
/// more than the fleet's maximum ttl). (a) between two holders is a failure unless forward
/// steps of one node, after the earlier holder's attempt began and before the later grant,
/// add up to more than the earlier holder's validity then had left (its hold there, which
/// lives at least that long unstepped, may have expired before the later grant), and one of
/// them was undetectable by the later holder's client at its grant; such violations are the
/// residue docs/safety.md names, counted apart. Any other step excuses nothing: a step too
/// small or too early to drop that hold, or on a node long after, hides no defect.
/// Role changes in place: a node demoted and promoted again under live connections (an
/// operator's REPLICAOF, then REPLICAOF NO ONE) lost its lock keys in the resync, and only
/// INFO's master_replid (or role:slave meanwhile) tells a client, at its next refresh. (a)
/// between two holders of a key is residue only when the resync dropped the earlier
/// holder's hold there, from a round begun before the demotion, the later holder then wrote
/// its own hold on that node before its grant, and its client had read no INFO of the node
/// run between the demotion and that write (the INFO travels on the same connection before
/// the write, so it is handled before the vote counts). Once such an INFO was read, the node
/// is vetoed (a replica) or quarantined (a role taken anew), and a double grant is a failure
/// (mutant `aa-role-taken-anew-ignored`). (u) counts such a dropped hold as held, as a crash
/// is, since the round that opened the window.
/// (m) handoff loses no wake-up for good: an acquire sleeping between attempts wakes no later
///     than its backoff's end, whatever happened to the release notifications (lost,
///     delayed, subscriber cut), unless its process was paused meanwhile.
/// REDLOCK_SIM_CLOCK_MARK: unset, both the links and the checker heed the steps back
/// lua/clock_mark.lua records on the nodes; `0`, neither does (the clients and the checker as
/// before the script: the residue to compare with, over the very same schedules); `links`,
/// only the links ignore them (a mutant: the checker must then find violations).
enum class clock_mark_use { heeded, ignored, ignored_by_links };
inline clock_mark_use clock_mark_setting() {
    const char* v = std::getenv("REDLOCK_SIM_CLOCK_MARK");
    if (v && std::string(v) == "0") {
        return clock_mark_use::ignored;
    }
    if (v && std::string(v) == "links") {
        return clock_mark_use::ignored_by_links;
    }
    return clock_mark_use::heeded;
}

class history {
public:
    explicit history(world& w)
        : world_(w) {}

    void set_clock(int client, drift_clock c) {
        if (clocks_.size() <= static_cast<std::size_t>(client)) {
            clocks_.resize(static_cast<std::size_t>(client) + 1);
            pauses_.resize(clocks_.size());
        }
        clocks_[static_cast<std::size_t>(client)] = c;
    }
    const drift_clock& clock(int client) const { return clocks_[static_cast<std::size_t>(client)]; }

    /// A grant delivered now; the holder's id.
    int grant(int client, const lock& granted, std::int64_t valid_until_local, bool with_lock);
    /// A successful extend or renewal delivered now.
    void renew(int holder, std::int64_t valid_until_local);
    /// An extend `l` of the holder's, delivered now as it was decided: a renewal for (r) too.
    void extended(int holder, const lock& l, std::int64_t valid_until_local);
    /// The holder stops relying on the lock now (release start, loss, end of work).
    void end(int holder);
    /// A force release deleted the hold of `token` on a node now: its holder may overlap with
    /// later holders from then on (or from its grant, when that came later).
    void force_deleted(const std::string& token);
    /// The loss signal fired now; `valid_until_local` as the watchdog knew it.
    void loss(int holder, std::int64_t valid_until_local);
    /// The holder stops watching its watchdog now: if the validity ran out while the watchdog
    /// ran (before the holder stopped relying on the lock), the loss must have been signalled.
    void watch_ended(int holder, bool lost);
    /// with_lock returned success for work that ran from work_start to now.
    void with_lock_success(int holder, real_ns work_start);
    /// The holder of `token` sends its release now, with this node_timeout: for (g), (l).
    void release_intent(const std::string& token, real_ns node_timeout) {
        releasing_.insert(token);
        release_timeout_[token] = node_timeout;
    }
    /// A node deleted `key`, which carried `token`, now: for (k) and (s).
    void deleted(int node, const std::string& key, const std::string& token);
    /// (u): per node, whether it holds `token` on every one of `keys` now, a node that lost
    /// keys without a command since `since` (the round that opened the window began then or
    /// later) counted with them when its clients quarantine it. Set by the schedule; then
    /// every window of every holder is checked at its last microsecond.
    std::function<std::vector<bool>(const std::vector<std::string>& keys,
                                    const std::string& token, real_ns since)>
        nodes_holding;
    /// A node wrote `key` with `token` (a lock string with an expiry, or a holder's field of a
    /// lock hash) now: for (s).
    void lock_set(int node, const std::string& key, const std::string& token) {
        lock_sets_.insert({node, key, token});
    }
    /// This schedule's network and nodes never lose, refuse, delay past a node_timeout or
    /// forget a command, and nothing is paused, cut, closed or force-released: every
    /// failed attempt's cleanup reaches its nodes, so (s) is checked.
    void check_cleanups() { check_cleanups_ = true; }
    /// A closed client's link gave up on the release of `token`, sent at `sent_at`, when
    /// its drain ended now: for (l).
    void release_cut_at_close(int client, const std::string& token, real_ns sent_at);
    /// The client's close() has run on its strand: for (i).
    void client_closed(int client) { closed_.insert(client); }

    void pause(int client, real_ns from, real_ns to) {
        pauses_[static_cast<std::size_t>(client)].push_back({from, to});
    }
    /// Whether `client` was paused at any moment of [from, to].
    bool paused_during(int client, real_ns from, real_ns to) const {
        for (const auto& p : pauses_[static_cast<std::size_t>(client)]) {
            if (p.from <= to && from <= p.to) {
                return true;
            }
        }
        return false;
    }

    /// (k): an acquire `op` of `client` sleeps until `bound_local` at the latest, or (bound
    /// empty) stopped sleeping now.
    void sleep(int client, const void* op, std::optional<std::int64_t> bound_local);

    /// (q): the client heard REDLOCK_MISMATCH now from `node` for the acquire command `args`
    /// it sent at `sent_at`.
    void mismatch_heard(int client, int node, const std::vector<std::string>& args,
                        real_ns sent_at);
    /// (q): an acquire of `client` with this node_timeout, started at `started`, ended now
    /// with `ec`.
    /// An exclusive acquire of `client` for `keys` (sorted, joined) that began at `started`
    /// ended now, granted or not; `may_barge`: it allows one attempt only, which goes at
    /// once whoever waits (a try-lock); `queued`: it waited in its client's queue
    /// (`wake_on_release`: without it there is no queue, and the order is not promised either
    /// way). For (x).
    void waiter_ended(int client, std::string keys, real_ns started, bool granted, bool may_barge,
                      bool queued);
    /// An acquire of `client` begins now (an acquire, or a with_lock until it ends): its
    /// span, which acquire_ended or span_ended closes. (q) judges the mismatches heard
    /// while no other span of the client was open: with lanes, an answer of one lane's
    /// attempt is not the other's.
    std::size_t acquire_began(int client);
    void span_ended(int client, std::size_t span);
    void acquire_ended(int client, std::size_t span, real_ns started, real_ns node_timeout,
                       std::error_code ec);
    void set_node_count(std::size_t nodes) { nodes_ = nodes; }
    /// A node without durable counters crashed now (node_faults::durable_counters): for a
    /// grant whose raise may have read a counter it lost, (b) holds only within each client
    /// (its fence floors).
    void counters_lost(real_ns at) { counters_lost_at_.push_back(at); }

    /// Every command any link sends: for (g).
    void on_send(int client, int node, const std::vector<std::string>& args);

    /// One clock mark of `client`'s link to `node`: read at the node at `read_at`, answered
    /// at `received_at` (real time), sent and answered at `sent_local` and `received_local`
    /// on the client's clock, saying TIME `node_us` and the step back recorded at node time
    /// `step_at_us` (0: none).
    struct time_sample {
        real_ns read_at;
        real_ns received_at;
        std::int64_t sent_local;
        std::int64_t received_local;
        std::int64_t node_us;
        std::int64_t step_at_us;
    };
    void time_sample(int client, int node, const struct time_sample& s) {
        samples_[{client, node}].push_back(s);
    }
    /// lua/clock_mark.lua ran on `node` now, its TIME `node_us` (answered or not): where a
    /// step it recorded at that node time happened in real time.
    void clock_read(int node, real_ns at, std::int64_t node_us) {
        clock_reads_[{node, node_us}].push_back(at);
    }
    /// Node `node`'s wall clock stepped by `delta` now.
    void clock_step(int node, real_ns delta) { steps_.push_back({node, world_.now(), delta}); }
    /// Node `node` was demoted in place now, losing its lock keys in the resync, and will be
    /// promoted again, its connections kept throughout (fault::kind::role_change).
    void role_change(int node) { role_changes_.push_back({node, world_.now()}); }
    /// `token`'s hold of `key` was written on `node` now (sim_node::on_hold_written).
    void hold_written(int node, const std::string& key, const std::string& token) {
        holds_written_[{node, key, token}].push_back(world_.now());
    }
    /// When a resync dropped `token`'s hold of `key` on `node` (sim_node::dropped_at).
    std::function<real_ns(int node, const std::string& key, const std::string& token)> dropped_hold;
    /// An INFO of `client`'s link to `node`, run at the node at `read_at`, answered now.
    void info_read(int client, int node, real_ns read_at) {
        info_reads_[{client, node}].push_back({read_at, world_.now()});
    }
    /// Violations excused by undetectable clock steps, or role changes (see above).
    const std::vector<std::string>& residue() const { return residue_; }
    /// "n1's clock stepped by +1.5 s at 0.3 s ..." when forward steps of one node could have
    /// dropped holder `earlier`'s hold there before holder `later` was granted, and one of
    /// them was undetectable by `later`'s client by its attempt's start; else empty. The hold
    /// lives on each node, unstepped, at least until the end of `earlier`'s latest validity
    /// adopted by then, or of its grant's validity where that grant came after `later`'s
    /// (written first, granted after a pause) (the key's ttl runs from its write, after the
    /// attempt's start; the
    /// drift term covers the clocks' rates): only steps after `earlier`'s attempt began, that
    /// add up to more than that validity's remainder at `later`'s grant, can excuse.
    std::string undetectable_step(int earlier, int later) const;
    /// Whether `client` could detect step `step` by `before` (see above).
    bool detectable(int client, std::size_t step, real_ns before) const;
    /// "n1 demoted and promoted in place at 0.3 s ..." when, on `key`, a node's resync
    /// dropped `earlier`'s hold, which `earlier` relied on at `at` from rounds begun before
    /// the demotion (every window of it that holds `at` began so), `later` wrote its hold
    /// there after that and before its grant, and `later`'s client had read no INFO of that
    /// node run between the demotion and that write (the INFO and the write share the
    /// connection, in order: such an INFO is handled before the vote); else empty.
    std::string undetected_role_change(int earlier, int later, const std::string& key,
                                       real_ns at) const;
    /// The first of undetectable_step and undetected_role_change that excuses `earlier` and
    /// `later` overlapping on `key` from `at`.
    std::string undetected_forgetting(int earlier, int later, const std::string& key,
                                      real_ns at) const;

    /// (f): one call issued, and its handler running.
    std::uint64_t issue() {
        calls_.push_back(0);
        return calls_.size() - 1;
    }
    void completed(std::uint64_t call, const char* what);

    void violation(const std::string& invariant, const std::string& what);
    /// A diagnosis: which known defect a failure looks like.
    void note(const std::string& what);
    const std::vector<std::string>& notes() const { return notes_; }
    const std::vector<std::string>& violations() const { return violations_; }

    /// The end-of-schedule checks (a), (b), (f).
    void check_end();

    std::uint64_t grants() const { return holders_.size(); }

private:
    struct window {
        real_ns from;
        real_ns to;
    };
    struct holder {
        int client;
        std::vector<std::string> keys;
        lock_mode mode;
        unsigned permits;
        std::string token;
        std::uint64_t fence;
        std::vector<window> windows;
        real_ns end = INT64_MAX;
        bool with_lock;
        real_ns granted_at = 0;    ///< delivered
        real_ns attempt_start = 0; ///< the winning attempt began: votes counted from then on
        real_ns ttl = 0;           ///< the lock's, which its extends and renewals keep
    };
    real_ns real_at(int client, std::int64_t local) const {
        return clocks_[static_cast<std::size_t>(client)].real_at(local, INT64_MIN / 2);
    }
    /// The holder's protected time: its windows, merged, cut at its end and, with
    /// `cut_by_force`, where a force release took the lock away.
    std::vector<window> protected_time(const holder& h, bool cut_by_force = true) const;
    std::string describe(int id) const;
    /// The end of the holder's uninterrupted validity from its grant on (windows uncut).
    real_ns covered_from(const holder& h, real_ns from) const;
    /// (u) for holder `id` at the end of the window that ends at `to`.
    void watch_presence(int id, real_ns to);
    void check_presence(int id, real_ns to);
    /// (r) for a round of `client`'s with options `o` decided now, whose validity runs to
    /// `valid_until_local`.
    void check_counted_in_time(int client, const lock_options& o, std::int64_t valid_until_local,
                               const std::string& what);
    /// "; the holder was paused from .. to .." when it was paused at `t`.
    std::string paused_at(int client, real_ns t) const;
    /// "; a renewal was adopted at .." when one was taken in between `from` and `to`.
    std::string adopted_between(const holder& h, real_ns from, real_ns to) const;

    world& world_;
    std::vector<drift_clock> clocks_;
    std::vector<std::vector<window>> pauses_;
    std::vector<holder> holders_;
    std::set<std::string> releasing_;
    std::set<std::string> released_;
    std::map<std::string, real_ns> release_timeout_;
    /// When force releases deleted each token's holds, node by node.
    std::map<std::string, std::vector<real_ns>> force_deletes_;
    /// (node, key, token) of every lock key written, and of every compare-and-delete.
    std::set<std::tuple<int, std::string, std::string>> lock_sets_;
    std::set<std::tuple<int, std::string, std::string>> deletes_;
    bool check_cleanups_ = false;
    std::vector<real_ns> counters_lost_at_;
    std::set<int> closed_;
    std::vector<int> calls_;
    std::vector<std::string> violations_;
    std::vector<std::string> residue_;
    std::map<std::pair<int, int>, std::vector<struct time_sample>> samples_;
    std::map<std::pair<int, std::int64_t>, std::vector<real_ns>> clock_reads_;
    struct role_change_at {
        int node;
        real_ns at;
    };
    std::vector<role_change_at> role_changes_;
    struct info_read_at {
        real_ns read_at;
        real_ns received_at;
    };
    std::map<std::pair<int, int>, std::vector<info_read_at>> info_reads_;
    std::map<std::tuple<int, std::string, std::string>, std::vector<real_ns>> holds_written_;
    struct step {
        int node;
        real_ns at;
        real_ns delta;
    };
    std::vector<step> steps_;
    std::vector<std::string> notes_;
    struct sleeper {
        real_ns since;
        std::int64_t bound_local;
    };
    std::map<const void*, sleeper> sleeping_;
    /// (q): per attempt (its token), who heard REDLOCK_MISMATCH from which nodes, first when.
    struct mismatches {
        int client;
        real_ns first;
        /// The earliest send of a command with this token that was answered with a mismatch:
        /// at or after the attempt's start, whose node_timeout bounds every vote (a copy
        /// resent after NOSCRIPT is sent later, but its answer is due by the same deadline).
        real_ns sent;
        /// When each node's answer reached the client.
        std::map<int, real_ns> nodes;
    };
    std::map<std::string, mismatches> mismatches_;
    struct waiter {
        int client;
        std::string keys;
        real_ns started;
        real_ns ended;
        bool granted;
        bool may_barge;
        bool queued;
    };
    std::vector<waiter> waiters_;
    /// Per client: its acquires' spans, [begin, end] (end INT64_MAX while open).
    std::vector<std::vector<std::pair<real_ns, real_ns>>> spans_;
    std::size_t nodes_ = 0;
};

} // namespace redlock::sim

#endif
