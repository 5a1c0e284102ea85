// demo: the flash-sale incident, replayed. 100 units, 200 buyers over several service
// instances, a critical section whose latency has a tail past the TTL; the same workload
// under each lock strategy. Whatever the numbers are, they are measured, not scripted.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "runtime/environment.hpp"
#include "transport/scripts.hpp"

#include <redlock/blocking_client.hpp>
#include <redlock/fencing.hpp>
#include <redlock/node_address.hpp>
#include <redlock/watchdog.hpp>

#include <boost/asio/io_context.hpp>

#include <hiredis/hiredis.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unistd.h>

namespace redlock::cli {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// The incident scaled down about 25x: a 5 s TTL against a 6-8 s P99 becomes 200 ms
// against a tail of 250-450 ms.
constexpr auto demo_ttl = 200ms;
constexpr auto demo_deadline = 60s;
/// How long a buyer waits for the stock store's answer to one command: far beyond a loaded
/// machine's delays, since a write given up on may still have landed.
constexpr auto call_patience = 10s;

/// A buyer's own connection to the stock store (the first node), synchronous like the
/// incident's service code: one command at a time, waited for. Carried by the library's own
/// node connection, so that it reaches the node as the locks do (TLS, AUTH, SELECT).
class store_connection {
public:
    store_connection(const node_address& a, const options& o)
        : config_(make_config(o))
        , link_(detail::environment::production().make_link(io_.get_executor(), a, config_)) {
        // Its io runs only during a call, so a reply (a refresh's INFO) can sit unread for as
        // long as the buyer waits for a lock; the link's patience, made for an io that always
        // runs, would then drop the connection under the next call's command, already
        // written: a sale whose SET landed and whose INCR never came. (A loaded CI machine
        // lost units between the two writes; this, and the 2 s a call waited before, are the
        // ways a write lands unanswered.) Each call has its own deadline instead.
        link_->expect_replies_within(
            std::chrono::duration_cast<std::chrono::milliseconds>(demo_deadline + call_patience));
    }
    ~store_connection() {
        link_->shutdown(0ms);
        io_.restart();
        io_.poll();
    }
    store_connection(const store_connection&) = delete;
    store_connection& operator=(const store_connection&) = delete;

    /// The reply as an integer (nil: -1) or a string in `text`.
    long long run(const std::vector<std::string>& args, std::string* text = nullptr) {
        detail::command cmd;
        cmd.args.assign(args.begin(), args.end());
        auto reply = std::make_shared<awaited_reply>();
        link_->send(cmd, reply, 0);
        const auto deadline = clock_type::now() + call_patience;
        io_.restart();
        while (!reply->arrived && io_.run_one_until(deadline) > 0) {
        }
        if (!reply->arrived) {
            throw std::runtime_error("stock store: no answer within " +
                                     std::to_string(call_patience.count()) + " s");
        }
        if (reply->failed) {
            throw std::runtime_error("stock store: " + reply->text);
        }
        if (reply->type == REDIS_REPLY_INTEGER) {
            return reply->integer;
        }
        if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS) {
            if (text) {
                *text = reply->text;
            }
            return reply->type == REDIS_REPLY_STRING ? std::atoll(reply->text.c_str()) : 1;
        }
        return -1;
    }

    /// The reference fenced resource (lua/fenced_call.lua) around one command on `key`.
    /// Returns false when the store fenced the token off; the reply goes to `text`.
    bool run_fenced(const std::string& key, std::uint64_t token,
                    const std::vector<std::string>& command, std::string& text) {
        std::vector<std::string> args{"EVALSHA", std::string(detail::fenced_call_script.sha1),
                                      "2",       key + ":fence",
                                      key,       std::to_string(token)};
        args.insert(args.end(), command.begin(), command.end());
        try {
            run(args, &text);
        } catch (const std::runtime_error& e) {
            const std::string why = e.what();
            if (why.find("NOSCRIPT") != std::string::npos) {
                args[0] = "EVAL";
                args[1] = std::string(detail::fenced_call_script.text);
                return run_fenced_once(args, text);
            }
            if (why.find("FENCED") != std::string::npos) {
                return false;
            }
            throw;
        }
        return true;
    }

private:
    bool run_fenced_once(const std::vector<std::string>& args, std::string& text) {
        try {
            run(args, &text);
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()).find("FENCED") != std::string::npos) {
                return false;
            }
            throw;
        }
        return true;
    }

    /// What one command got, copied out of the reply before it goes.
    struct awaited_reply final : detail::reply_target {
        bool arrived = false;
        bool failed = false; ///< an error reply, or no reply (the connection failed)
        int type = REDIS_REPLY_NIL;
        long long integer = 0;
        std::string text;

        void on_reply(std::uint64_t, const detail::node_reply& r) override {
            arrived = true;
            if (!r.reply || r.reply->type == REDIS_REPLY_ERROR) {
                failed = true;
                text = std::string(r.message);
                return;
            }
            type = r.reply->type;
            integer = r.reply->integer;
            if (r.reply->str) {
                text.assign(r.reply->str, r.reply->len);
            }
        }
    };

    boost::asio::io_context io_;
    client_config config_;
    std::unique_ptr<detail::node_link> link_;
};

/// What one strategy run measured.
struct outcome {
    long long orders = 0;
    long long stock_left = 0;
    long long locks_lost = 0;
    long long aborted_writes = 0;
    double seconds = 0;
};

/// The critical section's latency: mostly short, with a tail that outlives the TTL.
std::chrono::milliseconds business_latency(std::mt19937_64& random) {
    std::uniform_int_distribution<int> fast(5, 15), slow(250, 450), pick(1, 100);
    return std::chrono::milliseconds(pick(random) <= 4 ? slow(random) : fast(random));
}

std::string random_token(std::mt19937_64& random) {
    return std::to_string(random()) + "-" + std::to_string(random());
}

/// Shared by every buyer of one run.
struct run_state {
    const options& o;
    node_address store;
    std::string prefix;
    clock_type::time_point deadline;
    std::atomic<unsigned> done{0};
    std::atomic<long long> lost{0};
    std::atomic<long long> aborted{0};

    std::string key(const char* what) const { return prefix + what; }
};

/// The stock read-modify-write: deliberately not atomic, only the lock protects it.
/// Returns false when sold out.
bool sell_one(store_connection& store, const run_state& s, std::mt19937_64& random,
              const std::function<bool()>& still_held) {
    std::string text;
    const long long stock = store.run({"GET", s.key("stock")}, &text);
    if (stock <= 0) {
        return false;
    }
    std::this_thread::sleep_for(business_latency(random));
    if (!still_held()) {
        return true; // a careful holder stops here; only strategy 3 knows to ask
    }
    store.run({"SET", s.key("stock"), std::to_string(stock - 1)});
    store.run({"INCR", s.key("orders")});
    return false;
}

/// 1. The incident's code: SETNX then EXPIRE as two commands, and an unconditional DEL.
void naive_buyer(run_state& s, std::mt19937_64& random) {
    store_connection store(s.store, s.o);
    for (bool buying = true; buying && clock_type::now() < s.deadline;) {
        const auto token = random_token(random);
        if (store.run({"SETNX", s.key("lock"), token}) != 1) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + random() % 5));
            continue;
        }
        store.run({"PEXPIRE", s.key("lock"), std::to_string(demo_ttl.count())});
        buying = sell_one(store, s, random, [] { return true; });
        std::string holder;
        store.run({"GET", s.key("lock")}, &holder);
        if (holder != token) {
            s.lost.fetch_add(1); // we are about to delete someone else's lock, as in the incident
        }
        store.run({"DEL", s.key("lock")});
    }
}

/// 2. Atomic SET NX PX and a Lua compare-and-delete, but no renewal.
void atomic_buyer(run_state& s, std::mt19937_64& random) {
    store_connection store(s.store, s.o);
    const std::string release(detail::release_script.text);
    for (bool buying = true; buying && clock_type::now() < s.deadline;) {
        const auto token = random_token(random);
        if (store.run(
                {"SET", s.key("lock"), token, "NX", "PX", std::to_string(demo_ttl.count())}) != 1) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + random() % 5));
            continue;
        }
        buying = sell_one(store, s, random, [] { return true; });
        if (store.run({"EVAL", release, "1", s.key("lock"), token}) != 1) {
            s.lost.fetch_add(1); // expired under us: someone else may have sold meanwhile
        }
    }
}

/// 3. Redlock on every node, renewed by the watchdog; the write happens only while the
/// lock is still trusted.
void redlock_buyer(run_state& s, blocking_client& locks, std::mt19937_64& random) {
    store_connection store(s.store, s.o);
    lock_options options;
    options.ttl = demo_ttl;
    options.retry.max_attempts = 0;
    options.retry.backoff_initial = 1ms;
    options.retry.backoff_max = 20ms;
    for (bool buying = true; buying && clock_type::now() < s.deadline;) {
        options.retry.wait_budget =
            std::chrono::duration_cast<std::chrono::milliseconds>(s.deadline - clock_type::now());
        if (options.retry.wait_budget <= 0ms) {
            break;
        }
        auto r = locks.with_lock(s.key("lock"), options, renewal_options{},
                                 [&](const watchdog& dog, std::stop_token stop) {
                                     return sell_one(store, s, random, [&] {
                                         return !stop.stop_requested() &&
                                                dog.valid_until() > clock_type::now();
                                     });
                                 });
        if (r.error == errc::lock_lost) {
            s.lost.fetch_add(1);
            s.aborted.fetch_add(1);
            continue;
        }
        if (r.error) {
            continue; // contention until the wait budget: try again while time is left
        }
        buying = r.value.value_or(true);
    }
}

/// 4. Redlock with fencing tokens, and holders that freeze mid-sale (the tail of the
/// critical section stands for a GC pause): nothing renews and nothing looks at the clock
/// after the pause. The stock store itself turns away every token older than one it has seen.
void fenced_buyer(run_state& s, blocking_client& locks, std::mt19937_64& random) {
    store_connection store(s.store, s.o);
    lock_options options;
    options.ttl = demo_ttl;
    options.fencing = true;
    options.retry.max_attempts = 0;
    options.retry.backoff_initial = 1ms;
    options.retry.backoff_max = 20ms;
    for (bool buying = true; buying && clock_type::now() < s.deadline;) {
        options.retry.wait_budget =
            std::chrono::duration_cast<std::chrono::milliseconds>(s.deadline - clock_type::now());
        if (options.retry.wait_budget <= 0ms) {
            break;
        }
        std::error_code ec;
        auto r = locks.acquire(s.key("lock"), options, ec);
        if (ec) {
            continue;
        }
        const auto token = r.lock.fencing_token();
        std::string text;
        if (!store.run_fenced(s.key("stock"), token, {"GET", s.key("stock")}, text)) {
            s.aborted.fetch_add(1);
        } else if (std::atoll(text.c_str()) <= 0) {
            buying = false;
        } else {
            const long long stock = std::atoll(text.c_str());
            std::this_thread::sleep_for(business_latency(random));
            if (store.run_fenced(s.key("stock"), token,
                                 {"SET", s.key("stock"), std::to_string(stock - 1)}, text)) {
                // Counting orders is a single atomic command: it needs no lock.
                store.run({"INCR", s.key("orders")});
            } else {
                s.aborted.fetch_add(1);
            }
        }
        if (locks.release(r.lock, ec), ec == errc::lock_lost) {
            s.lost.fetch_add(1);
        }
    }
}

class progress {
public:
    explicit progress(bool quiet)
        : tty_(!quiet && ::isatty(STDERR_FILENO) == 1)
        , quiet_(quiet) {}
    void show(const std::string& name, unsigned done, unsigned total) {
        if (tty_) {
            std::fprintf(stderr, "\r  %-34s %4u/%u buyers done", name.c_str(), done, total);
            std::fflush(stderr);
        }
    }
    void begin(const std::string& name) {
        if (!tty_ && !quiet_) {
            std::fprintf(stderr, "redlock demo: running %s\n", name.c_str());
        }
    }
    void end() {
        if (tty_) {
            std::fprintf(stderr, "\r%70s\r", "");
        }
    }

private:
    bool tty_;
    bool quiet_;
};

using buyer_fn = std::function<void(run_state&, unsigned instance, std::mt19937_64&)>;

outcome run_strategy(const options& o, const node_address& store_address, const std::string& name,
                     const std::string& prefix, const buyer_fn& buyer, progress& shown) {
    {
        store_connection store(store_address, o);
        store.run({"SET", prefix + "stock", std::to_string(o.stock)});
        store.run({"DEL", prefix + "orders", prefix + "lock", prefix + "stock:fence"});
    }
    run_state s{o, store_address, prefix, clock_type::now() + demo_deadline, {}, {}, {}};
    shown.begin(name);
    const auto start = clock_type::now();
    std::vector<std::thread> buyers;
    std::random_device seed;
    for (unsigned b = 0; b < o.buyers; ++b) {
        buyers.emplace_back([&, b, seed_value = seed()] {
            std::mt19937_64 random(seed_value);
            try {
                buyer(s, b % o.instances, random);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "\nredlock demo: buyer %u: %s\n", b, e.what());
            }
            s.done.fetch_add(1);
        });
    }
    while (s.done.load() < o.buyers) {
        shown.show(name, s.done.load(), o.buyers);
        std::this_thread::sleep_for(100ms);
    }
    for (auto& t : buyers) {
        t.join();
    }
    shown.end();
    outcome out;
    out.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    store_connection store(store_address, o);
    out.orders = std::max(0LL, store.run({"GET", prefix + "orders"}));
    out.stock_left = store.run({"GET", prefix + "stock"});
    out.locks_lost = s.lost.load();
    out.aborted_writes = s.aborted.load();
    store.run(
        {"DEL", prefix + "stock", prefix + "orders", prefix + "lock", prefix + "stock:fence"});
    return out;
}

} // namespace

int demo_command(const options& o) {
    node_address store_address;
    std::string why;
    if (parse_node_address(o.nodes.front(), store_address, why)) {
        std::cerr << "redlock demo: " << why << "\n";
        return exit_usage;
    }
    std::vector<std::unique_ptr<blocking_client>> instances;
    try {
        for (unsigned i = 0; i < o.instances; ++i) {
            // Every lock on the demo's keys is taken here, by these clients, with demo_ttl:
            // that is the fleet's maximum for those keys, and a node restarted (or started)
            // a moment ago is quarantined for that long rather than for the default 60 s,
            // which would otherwise fill the timed rows with waiting.
            auto config = make_config(o);
            config.fleet_max_ttl = demo_ttl;
            instances.push_back(std::make_unique<blocking_client>(std::move(config)));
        }
    } catch (const std::system_error& e) {
        std::cerr << "redlock demo: " << e.what() << "\n";
        return exit_usage;
    }

    struct strategy {
        std::string name;
        std::string prefix;
        buyer_fn buyer;
        /// What a write stopped because its lock was gone is called in this strategy.
        std::string stopped_writes = "writes withheld after a lost lock";
    };
    const std::vector<strategy> strategies = {
        {"1 naive: SETNX + EXPIRE, DEL",
         "demo:naive:", [](run_state& s, unsigned, std::mt19937_64& r) { naive_buyer(s, r); }},
        {"2 SET NX PX + Lua unlock",
         "demo:atomic:", [](run_state& s, unsigned, std::mt19937_64& r) { atomic_buyer(s, r); }},
        {"3 Redlock x" + std::to_string(o.nodes.size()) + " + watchdog", "demo:redlock:",
         [&](run_state& s, unsigned instance, std::mt19937_64& r) {
             redlock_buyer(s, *instances[instance], r);
         }},
        {"4 Redlock + fencing, frozen holders", "demo:fenced:",
         [&](run_state& s, unsigned instance, std::mt19937_64& r) {
             fenced_buyer(s, *instances[instance], r);
         },
         "stale accesses rejected by the store's fence"},
    };

    std::printf("flash sale: %u units, %u buyers on %u service instances, lock TTL %lld ms,\n"
                "critical section 5-15 ms with a 4%% tail of 250-450 ms (past the TTL)\n\n",
                o.stock, o.buyers, o.instances, static_cast<long long>(demo_ttl.count()));
    std::printf("%-34s %7s %9s %11s %7s\n", "strategy", "orders", "oversold", "locks lost", "time");
    progress shown(o.quiet);
    std::vector<std::string> reconciliations;
    for (const auto& s : strategies) {
        outcome r;
        try {
            r = run_strategy(o, store_address, s.name, s.prefix, s.buyer, shown);
        } catch (const std::exception& e) {
            std::cerr << "redlock demo: " << e.what() << "\n";
            return exit_unreachable;
        }
        // Units sold that never existed: lost updates leave stock behind as well.
        const long long accounted = r.orders + std::max(0LL, r.stock_left);
        const long long oversold = std::max(0LL, accounted - static_cast<long long>(o.stock));
        std::printf("%-34s %7lld %9lld %11lld %6.1fs\n", s.name.c_str(), r.orders, oversold,
                    r.locks_lost, r.seconds);
        std::fflush(stdout);
        const bool reconciled = accounted == static_cast<long long>(o.stock);
        reconciliations.push_back(
            "  " + s.name.substr(0, 1) + ": stock left " + std::to_string(r.stock_left) +
            " + orders " + std::to_string(r.orders) + " = " + std::to_string(accounted) +
            (reconciled ? " (reconciles)"
             : accounted > static_cast<long long>(o.stock)
                 ? " (should be " + std::to_string(o.stock) + ": " +
                       std::to_string(accounted - static_cast<long long>(o.stock)) +
                       " units sold that did not exist)"
                 // Fewer: a buyer stopped between its two writes (its error is on stderr).
                 : " (should be " + std::to_string(o.stock) + ": " +
                       std::to_string(static_cast<long long>(o.stock) - accounted) +
                       " units taken from stock with no order: a buyer stopped between its "
                       "writes)") +
            (r.aborted_writes ? ", " + std::to_string(r.aborted_writes) + " " + s.stopped_writes
                              : ""));
    }
    // The fencing counters outlive locks by design; these belong to the demo alone.
    try {
        for (const auto& text : o.nodes) {
            node_address a;
            std::string ignored;
            if (!parse_node_address(text, a, ignored)) {
                store_connection(a, o).run({"DEL", fencing_counter_key("demo:fenced:lock")});
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "redlock demo: " << e.what() << "\n";
    }
    std::printf("\nreconciliation:\n");
    for (const auto& line : reconciliations) {
        std::printf("%s\n", line.c_str());
    }
    return exit_ok;
}

} // namespace redlock::cli
