#ifndef REDLOCK_TESTS_SUPPORT_TOPOLOGY_HPP
#define REDLOCK_TESTS_SUPPORT_TOPOLOGY_HPP

#include <hiredis/hiredis.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::test {

/// The five masters started by compose/local-nodes.sh, and control over them: stop, kill,
/// pause, resume, restart, always restorable. Local redis-server processes, or the compose
/// file's containers when REDLOCK_TOPOLOGY=containers (the same ports and verbs; only
/// containers have the network faults). Node numbers are 1-based like the script's; indexes
/// into client_config::nodes are 0-based.
class topology {
public:
    /// Whether the nodes are containers (REDLOCK_TOPOLOGY=containers), which alone can
    /// partition a node; local processes alone can restart from their AOF.
    static bool containers();
    /// REDLOCK_NODES or the default five; node i listens on 127.0.0.1:700i, or on
    /// REDLOCK_BASE_PORT + i - 1 (the base is node 1's port, as local-nodes.sh reads it).
    static std::vector<std::string> addresses();
    /// Sets REDLOCK_NODES to addresses() when it is unset, so that the programs the tests
    /// run (the CLI, the nemesis) reach these nodes too, not the default five, when only
    /// REDLOCK_BASE_PORT names them. And REDLOCK_NODE_TIMEOUT to 500 ms when unset: every CLI
    /// call is a fresh process whose first command waits for its connections' handshakes,
    /// which the default 50 ms does not always cover on a loaded CI machine (seen in CI: exit
    /// 69 for a lock that was free). The tests about a silent node pass --node-timeout.
    static void prepare_child_environment();
    static std::size_t size() { return addresses().size(); }
    /// Host and port of node `node` (1-based) as REDLOCK_NODES gives them.
    static std::string host(int node);
    static int port(int node);

    static void stop(int node);
    /// Starts a stopped node, empty (no persistence).
    static void start(int node);
    static void kill(int node);
    static void pause(int node);
    static void resume(int node);
    /// kill -9, then start empty (no persistence).
    static void restart(int node);
    /// Turns the append-only file on (appendfsync always) and waits until it holds the
    /// whole dataset: from then on every acknowledged write survives a kill -9.
    static void enable_aof(int node);
    /// kill -9, then start from the append-only file written since enable_aof().
    static void restart_with_aof(int node);
    /// Containers only (throw otherwise): drops every packet of the node's network
    /// interface, both ways, until heal(); a connection then gets no answer, never a refusal.
    static void partition(int node);
    /// Containers only: delays every packet the node sends by `delay` (tc netem). Returns
    /// false, changing nothing, when the kernel has no netem.
    static bool delay(int node, std::chrono::milliseconds delay);
    /// Removes every network fault of the node (nothing to remove on local processes).
    static void heal(int node);
    /// Pauses nodes 1, 2 and 3: no quorum answers any more, though every connection stays up.
    static void pause_majority();
    static void resume_majority();
    /// Everything running and answering, nothing paused or cut off, every database empty;
    /// no AOF, no replication, no memory limit (and noeviction), the default script time limit.
    static void restore();

private:
    static void script(const std::string& args);
    /// The script's exit status, without throwing.
    static int try_script(const std::string& args);
};

/// Sends one command given as separate arguments on a synchronous hiredis connection and
/// waits for its reply (to be freed with freeReplyObject); null when the connection failed.
redisReply* command_reply(redisContext* context, const std::vector<std::string>& args);

/// Runs one command on a synchronous hiredis connection: the reply as text (a status, string
/// or error as is, an integer in decimal, "(nil)", "(array)"). Throws, naming `who`, when
/// the connection is lost.
std::string command_text(redisContext* context, const std::vector<std::string>& args,
                         const std::string& who);

/// A synchronous look at one node, independent of the library under test.
class inspector {
public:
    explicit inspector(int node);
    ~inspector();
    inspector(const inspector&) = delete;
    inspector& operator=(const inspector&) = delete;

    std::optional<std::string> get(const std::string& key, int db = 0);
    long long pttl(const std::string& key);
    /// Keys on the node, the clock mark (`redlock:clock`) and the TTL ceiling
    /// (`redlock:ttl-ceiling`) not counted: they outlive every lock by design.
    long long dbsize();
    /// Runs a command given as separate arguments; returns the reply's text (status,
    /// string, error) or its integer as text; throws if the connection fails.
    std::string run(const std::vector<std::string>& args);
    /// The connection itself, for a reply that is no text (command_reply()).
    redisContext* context() const noexcept { return context_; }

private:
    redisContext* context_ = nullptr;
    int node_;
};

/// Keys found on any node, over every node.
long long keys_everywhere();
/// Waits up to `limit` for `condition`, polling; returns whether it became true.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = std::chrono::milliseconds(3000));
/// Waits until every node has been up for at least `least` (the quarantine counts a node's
/// votes only then; other tests restart nodes all the time); returns whether they all were
/// within `least` plus 2 s.
bool every_node_up_for(std::chrono::seconds least);
/// Whether every node is empty of keys (the clock mark and TTL ceiling aside) within
/// `limit`: a release completes at a quorum of deletes and the rest land in the background,
/// each within its node_timeout. When not, prints each key left, its node and its PTTL to
/// stderr.
bool all_keys_gone(std::chrono::milliseconds limit = std::chrono::milliseconds(3000));

} // namespace redlock::test

#endif
