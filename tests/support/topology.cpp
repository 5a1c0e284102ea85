#include "support/topology.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace redlock::test {

std::vector<std::string> topology::addresses() {
    const char* env = std::getenv("REDLOCK_NODES");
    std::string list = env && *env ? env : REDLOCK_DEFAULT_TEST_NODES;
    // A private topology started by local-nodes.sh with REDLOCK_BASE_PORT, named only by it.
    const char* base = std::getenv("REDLOCK_BASE_PORT");
    if (!(env && *env) && base && *base) {
        list.clear();
        for (int node = 1; node <= 5; ++node) {
            list += (node > 1 ? ",127.0.0.1:" : "127.0.0.1:") +
                    std::to_string(std::stoi(base) + node - 1);
        }
    }
    std::vector<std::string> nodes;
    std::stringstream stream(list);
    for (std::string item; std::getline(stream, item, ',');) {
        nodes.push_back(item);
    }
    return nodes;
}

void topology::prepare_child_environment() {
    ::setenv("REDLOCK_NODE_TIMEOUT", "500ms", 0);
    const char* env = std::getenv("REDLOCK_NODES");
    if (env && *env) {
        return;
    }
    std::string list;
    for (const auto& address : addresses()) {
        list += (list.empty() ? "" : ",") + address;
    }
    ::setenv("REDLOCK_NODES", list.c_str(), 1);
}

std::string topology::host(int node) {
    const auto address = addresses().at(static_cast<std::size_t>(node - 1));
    return address.substr(0, address.rfind(':'));
}

int topology::port(int node) {
    const auto address = addresses().at(static_cast<std::size_t>(node - 1));
    return std::stoi(address.substr(address.rfind(':') + 1));
}

bool topology::containers() {
    const char* kind = std::getenv("REDLOCK_TOPOLOGY");
    return kind && std::string(kind) == "containers";
}

int topology::try_script(const std::string& args) {
    const std::string command = std::string("bash ") + REDLOCK_LOCAL_NODES_SCRIPT + " " + args;
    return std::system(command.c_str());
}

void topology::script(const std::string& args) {
    if (try_script(args) != 0) {
        throw std::runtime_error(std::string("failed: bash ") + REDLOCK_LOCAL_NODES_SCRIPT + " " +
                                 args);
    }
}

void topology::stop(int node) {
    script("stop " + std::to_string(node));
}
void topology::start(int node) {
    script("start " + std::to_string(node));
}
void topology::kill(int node) {
    script("kill " + std::to_string(node));
}
void topology::pause(int node) {
    script("pause " + std::to_string(node));
}
void topology::resume(int node) {
    script("resume " + std::to_string(node));
}
void topology::restart(int node) {
    script("restart " + std::to_string(node));
}

void topology::partition(int node) {
    script("partition " + std::to_string(node));
}
bool topology::delay(int node, std::chrono::milliseconds delay) {
    // The script refuses (and says why) when tc has no netem; anything else is an error.
    if (try_script("delay " + std::to_string(node) + " " + std::to_string(delay.count())) == 0) {
        return true;
    }
    if (try_script("delay " + std::to_string(node) + " 0") != 0) {
        throw std::runtime_error("cannot reach node " + std::to_string(node) + "'s network");
    }
    return false;
}
void topology::heal(int node) {
    script("heal " + std::to_string(node));
}

void topology::enable_aof(int node) {
    inspector look(node);
    look.run({"CONFIG", "SET", "appendfsync", "always"});
    look.run({"CONFIG", "SET", "appendonly", "yes"});
    const bool written = eventually(
        [&] {
            const auto info = look.run({"INFO", "persistence"});
            return info.find("aof_enabled:1") != std::string::npos &&
                   info.find("aof_rewrite_in_progress:0") != std::string::npos &&
                   info.find("aof_rewrite_scheduled:0") != std::string::npos;
        },
        std::chrono::seconds(10));
    if (!written) {
        throw std::runtime_error("node " + std::to_string(node) + " did not finish its AOF");
    }
}

void topology::restart_with_aof(int node) {
    script("restart " + std::to_string(node) + " --aof");
}

void topology::pause_majority() {
    for (int node : {1, 2, 3}) {
        pause(node);
    }
}

void topology::resume_majority() {
    for (int node : {1, 2, 3}) {
        resume(node);
    }
}

namespace {

// Whether the local node answers PING at once. A paused node accepts the connection (the
// kernel queues it) but never answers: the short timeout says so.
bool answers_at_once(int node) {
    const timeval timeout{0, 300'000};
    redisContext* context =
        redisConnectWithTimeout(topology::host(node).c_str(), topology::port(node), timeout);
    bool pong = false;
    if (context && !context->err && redisSetTimeout(context, timeout) == REDIS_OK) {
        auto* reply = command_reply(context, {"PING"});
        pong = reply && reply->type == REDIS_REPLY_STATUS && std::string(reply->str) == "PONG";
        freeReplyObject(reply);
    }
    redisFree(context);
    return pong;
}

} // namespace

void topology::restore() {
    // Every test restores before and after it runs, and each script call starts bash (about
    // 40 ms a resume, 150 ms an `up`: some 4 minutes over one run of the suite). Local nodes
    // that all answer need neither: nothing is stopped or paused. Containers always take the
    // script, which alone sees (and heals) their network faults.
    bool running = !containers();
    for (int node = 1; running && node <= static_cast<int>(size()); ++node) {
        running = answers_at_once(node);
    }
    // Resume first: a paused node counts as running for the script. (On containers `up`
    // resumes and heals every node in one call: each call costs a docker round trip.)
    for (int node = 1; !running && !containers() && node <= static_cast<int>(size()); ++node) {
        const std::string command = std::string("bash ") + REDLOCK_LOCAL_NODES_SCRIPT + " resume " +
                                    std::to_string(node) + " 2>/dev/null";
        (void)std::system(command.c_str());
    }
    if (!running) {
        script("up >/dev/null"); // containers: also heals every network fault
    }
    for (int node = 1; node <= static_cast<int>(size()); ++node) {
        inspector look(node);
        look.run({"REPLICAOF", "NO", "ONE"});
        look.run({"FLUSHALL"});
        look.run({"CONFIG", "SET", "appendonly", "no"});
        look.run({"CONFIG", "SET", "save", ""}); // no RDB snapshots either
        look.run({"CONFIG", "SET", "maxmemory", "0"});
        look.run({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
        look.run({"CONFIG", "SET", "busy-reply-threshold", "5000"});
    }
}

inspector::inspector(int node)
    : node_(node) {
    const auto address = topology::addresses().at(static_cast<std::size_t>(node - 1));
    const std::string host = topology::host(node);
    const int port = topology::port(node);
    timeval timeout{2, 0};
    context_ = redisConnectWithTimeout(host.c_str(), port, timeout);
    if (!context_ || context_->err) {
        const std::string why = context_ ? context_->errstr : "out of memory";
        redisFree(context_);
        context_ = nullptr;
        throw std::runtime_error("inspector cannot reach " + address + ": " + why);
    }
    redisSetTimeout(context_, timeout);
}

inspector::~inspector() {
    redisFree(context_);
}

redisReply* command_reply(redisContext* context, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    return static_cast<redisReply*>(
        redisCommandArgv(context, static_cast<int>(args.size()), argv.data(), lengths.data()));
}

std::string command_text(redisContext* context, const std::vector<std::string>& args,
                         const std::string& who) {
    auto* reply = command_reply(context, args);
    if (!reply) {
        throw std::runtime_error(who + " lost its connection: " + context->errstr);
    }
    std::string text;
    switch (reply->type) {
    case REDIS_REPLY_INTEGER:
        text = std::to_string(reply->integer);
        break;
    case REDIS_REPLY_NIL:
        text = "(nil)";
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        text.assign(reply->str, reply->len);
        break;
    default:
        text = "(array)";
    }
    freeReplyObject(reply);
    return text;
}

std::string inspector::run(const std::vector<std::string>& args) {
    return command_text(context_, args, "inspector of node " + std::to_string(node_));
}

std::optional<std::string> inspector::get(const std::string& key, int db) {
    if (db != 0) {
        run({"SELECT", std::to_string(db)});
    }
    auto* reply =
        static_cast<redisReply*>(redisCommand(context_, "GET %b", key.data(), key.size()));
    if (db != 0) {
        run({"SELECT", "0"});
    }
    if (!reply) {
        throw std::runtime_error("inspector lost node " + std::to_string(node_));
    }
    std::optional<std::string> value;
    if (reply->type == REDIS_REPLY_STRING) {
        value.emplace(reply->str, reply->len);
    }
    freeReplyObject(reply);
    return value;
}

long long inspector::pttl(const std::string& key) {
    return std::stoll(run({"PTTL", key}));
}

long long inspector::dbsize() {
    // Less the keys every client keeps on every node, which are no locks and outlive them by
    // design: the clock mark (lua/clock_mark.lua) and the TTL ceiling (docs/safety.md).
    return std::stoll(run({"DBSIZE"})) - std::stoll(run({"EXISTS", "redlock:clock"})) -
           std::stoll(run({"EXISTS", "redlock:ttl-ceiling"}));
}

long long keys_everywhere() {
    long long total = 0;
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        total += inspector(node).dbsize();
    }
    return total;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return condition();
}

bool all_keys_gone(std::chrono::milliseconds limit) {
    if (eventually([] { return keys_everywhere() == 0; }, limit)) {
        return true;
    }
    // Which keys, where, and for how long still: what a leak's report needs.
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        inspector look(node);
        auto* reply = command_reply(look.context(), {"KEYS", "*"});
        for (std::size_t i = 0; reply && reply->type == REDIS_REPLY_ARRAY && i < reply->elements;
             ++i) {
            const std::string key(reply->element[i]->str, reply->element[i]->len);
            if (key != "redlock:clock" && key != "redlock:ttl-ceiling") {
                std::fprintf(stderr, "left on node %d: %s (pttl %lld ms)\n", node, key.c_str(),
                             look.pttl(key));
            }
        }
        freeReplyObject(reply);
    }
    return false;
}

bool every_node_up_for(std::chrono::seconds least) {
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        const bool up = eventually(
            [&] {
                const auto info = inspector(node).run({"INFO", "server"});
                const auto at = info.find("uptime_in_seconds:");
                return at != std::string::npos &&
                       std::stoll(info.substr(at + std::string("uptime_in_seconds:").size())) >=
                           least.count();
            },
            least + std::chrono::seconds(2));
        if (!up) {
            return false;
        }
    }
    return true;
}

} // namespace redlock::test
