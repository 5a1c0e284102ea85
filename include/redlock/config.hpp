#ifndef REDLOCK_CONFIG_HPP
#define REDLOCK_CONFIG_HPP

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// Longest key accepted, in bytes.
inline constexpr std::size_t max_key_size = 1024;
/// Most keys one lock may take at once (client::async_acquire over a set of keys).
inline constexpr std::size_t max_keys_per_lock = 64;
/// Largest permit count of a semaphore (lock_mode::permit): every script that changes the
/// key's holders reads all of them, so the node is busy in proportion.
inline constexpr unsigned max_permits = 1000;
/// Bounds of client_config::max_reply_size: INFO server must fit, and hiredis counts
/// lengths in int.
inline constexpr std::size_t smallest_reply_bound = 16 * 1024;
inline constexpr std::size_t largest_reply_bound = 1024 * 1024 * 1024; ///< 1 GiB
/// Longest ttl accepted: what a signed 32-bit millisecond count holds (about 24.8 days).
inline constexpr std::chrono::milliseconds max_ttl{2147483647};
/// Default of client_config::fleet_max_ttl (and of the CLI's --max-ttl).
inline constexpr std::chrono::milliseconds default_fleet_max_ttl{60000};

class metrics_observer;

/// How much a log line matters.
enum class log_level {
    debug,   ///< routine detail: a connection made, a late reply, a reconnect scheduled
    info,    ///< notable normal events (the library logs none at present)
    warning, ///< something is off and the library carries on: a broken connection, a failed
             ///< cleanup, TLS verification disabled
    error,   ///< something failed: a lock lost, AUTH refused, a node whose votes cannot count
};

/// Receives the library's log lines. Called on the client's executor; must not block.
using logger = std::function<void(log_level, std::string_view message)>;

/// Restart quarantine: a node that restarted without persistence forgot the locks it held,
/// so its votes must not count until every lock it could have held has expired.
struct quarantine_options {
    /// On by default; turning it off re-opens the classic Redlock double grant after a
    /// node restart (docs/safety.md). While on, a node whose INFO is refused (an ACL user
    /// without +info) gets no votes (errc::restarts_undetectable): its restarts are unseen.
    bool enabled = true;
    // How long it lasts: client_config::fleet_max_ttl plus its drift, from the restart.
    /// Prefix of the keys the client keeps on every node for the checks behind the
    /// quarantine (docs/safety.md): `<prefix>ttl-ceiling`, the largest ttl granted there
    /// lately, and `<prefix>clock`, the highest time the node's clock has shown. The ACL
    /// user's key pattern must allow them (docs/security.md: `~redlock:*` for the default).
    std::string node_key_prefix = "redlock:";
    /// Shorten a restarted node's quarantine to the largest TTL ceiling read from a full
    /// quorum of the other nodes (docs/safety.md, "The TTL ceiling") instead of waiting out
    /// client_config::fleet_max_ttl. Off by default: a review found ways for the learned
    /// figure to fall short of a lock that still stands (a ceiling key deleted or expired
    /// early under a live connection, a ceiling read racing a delayed raise, a drift bound
    /// raised after a confirmation), listed in docs/safety.md; until they are closed only the
    /// maximum is safe. Every client raises the ceilings either way, so that clients that
    /// learn can rely on it, and reads them after a restart either way: a ceiling above
    /// fleet_max_ttl (a client with a larger maximum, or a maximum lowered while entries of
    /// the old one live: twice the old maximum after their last raise) lengthens the
    /// quarantine to it.
    bool learn_from_ttl_ceilings = false;
};

/// Nodes that can evict keys (docs/safety.md, "Evicted keys"): a node that evicts a lock key
/// forgets the lock as a restart would.
struct eviction_options {
    /// Off by default: a node that can evict keys (maxmemory above 0 and a maxmemory-policy
    /// other than noeviction), or whose INFO memory does not say, gets no vote
    /// (errc::node_can_evict). Turning it on re-opens the double grant the veto closes: such
    /// a node's votes count, and only an eviction already seen (evicted_keys changed) starts
    /// a quarantine, as after a restart.
    bool accept_evicting_nodes = false;
    /// Besides at every connect, each connected node's INFO server, memory and stats is read
    /// again this often (one command in the same queue as the lock commands, about 3 KiB of
    /// reply), so that a policy changed or an eviction made since is seen within this time.
    /// Zero reads it at connect only.
    std::chrono::milliseconds refresh_interval{1000};
};

/// TLS for the nodes given as `rediss://`. Verification is always on unless the loudly
/// named switch below turns it off.
struct tls_options {
    /// PEM file of trusted CA certificates. With ca_directory also empty, the system trust
    /// store (OpenSSL's default paths) is used.
    std::string ca_file;
    /// Directory of hashed CA certificates (c_rehash / openssl rehash layout).
    std::string ca_directory;
    /// Client certificate chain and its private key (PEM), for nodes that require mutual TLS
    /// (redis-server --tls-auth-clients yes). Both or neither.
    std::string certificate_file;
    std::string private_key_file; ///< The private key of certificate_file (PEM).
    /// Name sent as SNI and checked against the server's certificate. Empty means each node's
    /// own host; an IP literal is checked against the certificate's IP addresses.
    std::string server_name;
    /// Accepts any certificate from anyone: a man in the middle can then grant, hold or
    /// steal every lock. For throwaway test setups only; every connection logs a warning.
    bool dangerously_skip_verification = false;
};

/// How a client reaches its nodes. Defaults suit masters on a local network.
struct client_config {
    /// Addresses of the independent masters (see parse_node_address). At least one, no
    /// server twice: textual duplicates are refused, and a server reached under a second
    /// name (same run_id) gets its vote counted once (errc::duplicate_node for the other).
    /// The quorum is nodes.size() / 2 + 1, also for an even count.
    std::vector<std::string> nodes;
    /// Upper bound on resolving the host name (in the background, never blocking the
    /// client), the TCP connect and the TLS handshake. The AUTH/SELECT handshake that follows
    /// is waited for by the operations behind it up to their node_timeout; a connection
    /// whose commands wait far longer is reset (4 x the longest node_timeout, at least 1 s).
    /// Also the longest an acquire waits, before an attempt, for connections on their way
    /// when fewer than a quorum are ready (connected, handshake and INFO answered), and never
    /// past its retry.wait_budget.
    std::chrono::milliseconds connect_timeout{500};
    /// After a failed connection, the node is not retried before this delay, doubled on
    /// every further failure up to reconnect_delay_max. Commands for it fail fast meanwhile.
    std::chrono::milliseconds reconnect_delay_initial{50};
    std::chrono::milliseconds reconnect_delay_max{2000}; ///< Cap of the doubled delay.
    /// Commands sent to one node and not yet answered, beyond which new commands fail
    /// with node_backlogged instead of queueing behind a stalled node.
    std::size_t max_in_flight_per_node = 65536;
    /// Largest reply one command may get, in bytes (a bulk string, an error text, an array
    /// with everything in it). A node that sends more, or announces more, loses its
    /// connection: a broken or hostile node cannot make this process hold its data.
    /// Our commands' replies are a few hundred bytes; INFO server, memory and stats about
    /// 3 KiB. From
    /// smallest_reply_bound to largest_reply_bound.
    std::size_t max_reply_size = 1024 * 1024;
    /// See tls_options; used by `rediss://` nodes only.
    tls_options tls;
    /// Optional; nothing is logged when empty.
    logger log;
    /// Restart quarantine; see quarantine_options.
    quarantine_options quarantine;
    /// The longest ttl any client of these nodes may use: an acquire, extend or renewal with
    /// a longer one is refused (errc::invalid_argument). A node that restarted empty is
    /// quarantined for this plus its drift (the largest clock_drift_factor and
    /// drift_allowance of this client's locks, never less than lock_options' defaults),
    /// whatever ttl this or any other client uses. Give every client of the same nodes the
    /// same value (docs/safety.md, "Restart quarantine"). From 1 ms to max_ttl.
    std::chrono::milliseconds fleet_max_ttl = default_fleet_max_ttl;
    /// Optional; see metrics.hpp (prometheus_metrics renders the Prometheus text format).
    std::shared_ptr<metrics_observer> metrics;

    /// Nodes that can evict keys; see eviction_options.
    eviction_options eviction;
};

/// How a watchdog keeps a lock alive.
struct renewal_options {
    /// Time between renewals, scheduled from the remaining validity (the next renewal is due
    /// when `ttl - interval` of validity is left). Zero means ttl / 3.
    std::chrono::milliseconds interval{0};
    /// After a failed renewal, the next try comes this much later (never past the validity
    /// deadline). Zero means interval / 5.
    std::chrono::milliseconds retry_delay{0};
    /// Off by default. When on, a renewal also re-creates the key with SET NX PX on nodes
    /// that lost it by restarting empty (the client saw another run_id there since the key
    /// was last confirmed), but only while the lock is still valid locally; it never touches
    /// a key that holds another token. A key evicted or deleted on purpose (release --force)
    /// stays deleted: neither says which keys went.
    bool recreate_missing = false;
};

/// How acquire retries after a failed attempt. At least one of max_attempts and
/// wait_budget must be bounded.
struct retry_options {
    /// Attempts in total, the first included; 0 means only wait_budget bounds the retries.
    unsigned max_attempts = 3;
    /// No new attempt starts once this much time has passed since the call; zero means
    /// only max_attempts bounds the retries. An exclusive acquire behind older acquires of
    /// its client for the same keys waits behind them within it, and ends without an
    /// attempt if it runs out before its turn.
    std::chrono::milliseconds wait_budget{0};
    /// Full-jitter backoff: before retry k the caller sleeps a uniform random time in
    /// [0, min(backoff_max, backoff_initial * 2^(k-1))].
    std::chrono::milliseconds backoff_initial{20};
    std::chrono::milliseconds backoff_max{500}; ///< Cap of the doubled backoff.
    /// Handoff: while sleeping between attempts, listen on the nodes for releases (and
    /// expiries, where keyspace notifications are on) of the key, and retry as soon as a
    /// majority could be free instead of sleeping the backoff out. The backoff stays the
    /// bound of the sleep when no notification comes (the attempt after it may wait for
    /// connections on their way, client_config::connect_timeout). See docs/design.md,
    /// "Handoff".
    bool wake_on_release = true;
    /// Handoff of readers and permits: the waiters of one key in one client retry one after
    /// another, this far apart (oldest first, plus a random part of up to this much), so that
    /// one notification does not fire them all at once. About one acquire round trip. (For
    /// an exclusive lock only the oldest waiter retries.)
    std::chrono::microseconds handoff_stagger{500};
};

/// Who may hold a key at the same time. Every mode gets the same guarantees: a quorum of
/// nodes, validity minus drift, cleanup on every node, renewal, fencing, restart quarantine.
/// The per-node state of each mode is in docs/safety.md.
enum class lock_mode {
    /// One holder at a time: a plain lock (also over several keys at once), and the writer
    /// of a read-write lock, which waits for the readers to leave and meanwhile keeps new
    /// readers out.
    exclusive,
    /// Any number of holders at a time, but never with an exclusive one: the readers of a
    /// read-write lock. New readers are refused while a writer waits.
    shared,
    /// At most lock_options::permits holders at a time: a counting semaphore. Every holder of
    /// the key must ask for the same count (else errc::lock_mismatch).
    permit,
};

/// The lock itself: how long it lives and how its validity is judged.
struct lock_options {
    /// Expiry set on every node (SET ... PX ttl). At most 2^31-1 ms.
    std::chrono::milliseconds ttl{10000};
    /// How long one node may take to answer one command. The effective bound is also
    /// capped by the validity window, so a slow node can never make a lock start stale.
    /// A reply handled at or after the round's deadline is no vote. An acquire's attempt
    /// waits for a quorum of ready connections first (client_config::connect_timeout), so a
    /// fresh client's handshake is not counted in it.
    std::chrono::milliseconds node_timeout{50};
    /// drift = ttl * clock_drift_factor + drift_allowance, subtracted from the validity
    /// to cover clock-rate differences between this process and the nodes.
    double clock_drift_factor = 0.01;
    std::chrono::milliseconds drift_allowance{2}; ///< The constant part of the drift.
    /// A quorum counts only if at least this much validity is left.
    std::chrono::milliseconds min_validity{1};
    /// How acquire retries after a failed attempt; see retry_options.
    retry_options retry;
    /// Also issue a fencing token (lock::fencing_token()) that strictly increases from one
    /// holder of the key to the next across the quorum, for the protected resource to check.
    /// Costs a second round trip per acquire and one counter key per lock key on every node
    /// (fencing_counter_key(), no TTL). Needs durable nodes: see docs/safety.md. Off by default.
    /// Every mode can be fenced: tokens increase across all holders of the key, readers and
    /// permit holders included (docs/safety.md says how a resource uses a shared holder's).
    /// A lock over several keys gets one token, above every earlier holder of any of them.
    bool fencing = false;
    /// Fenced locks only: how far one granting node's fencing counter may lead the highest of
    /// the other granting nodes' (and the last token this client had for the key) before the
    /// acquire is refused with errc::fencing_counter_refused, nothing raised. Without it a
    /// node answering 2^64-2 has every node's counter raised to 2^64-1, and no fenced acquire
    /// of the key succeeds again. Honest counters differ only by the raises a node missed
    /// (partitioned, or restarted without its data) while every other granting node also
    /// missed none of them; the default allows a million such raises of one key, and a
    /// hostile node needs 2^64 / max_counter_lead acquires (1.8e13 by default) to use the
    /// counter up. At least 1. See docs/safety.md.
    std::uint64_t max_counter_lead = 1'000'000;
    /// Exclusive by default; see lock_mode. Shared and permit locks take one key.
    lock_mode mode = lock_mode::exclusive;
    /// lock_mode::permit only (and then required): how many holders the semaphore admits,
    /// 1 to max_permits. Zero for the other modes.
    unsigned permits = 0;
};

} // namespace redlock

#endif
