#include "schedule.hpp"

#include "observed_link.hpp"
#include "sim_clock.hpp"

#include "client/client_access.hpp"
#include "redlock/fencing.hpp"
#include "runtime/client_impl.hpp"
#include "runtime/environment.hpp"
#include "transport/node_connection.hpp"
#include "transport/subscriber_connection.hpp"

#include <boost/asio/co_spawn.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace redlock::sim {

namespace asio = boost::asio;

namespace {

int forced_profile() {
    static const int forced = [] {
        const char* text = std::getenv("REDLOCK_SIM_PROFILE");
        if (!text || !*text) {
            return -1;
        }
        for (int p = 0; p <= static_cast<int>(profile::renewal_deadline); ++p) {
            if (std::string_view(text) == name(static_cast<profile>(p))) {
                return p;
            }
        }
        return -1;
    }();
    return forced;
}

/// Release notifications in this schedule: none at all, perfect, lossy, or with subscriber
/// connections cut; from a stream of their own, so that a seed's other draws stay the same.
notify_faults draw_notify_faults(std::mt19937_64& rng) {
    notify_faults f;
    switch (rng() % 4) {
    case 0:
        f.off = true;
        break;
    case 1:
        break;
    case 2:
        f.lost_rate = 0.3;
        break;
    default:
        f.cut_rate = 0.2;
        f.lost_rate = 0.05;
        break;
    }
    return f;
}

} // namespace

schedule::schedule(std::uint64_t seed, bool tracing)
    : seed_(seed)
    , w_(seed, tracing)
    , h_(w_)
    , sc_(make_scenario(w_, forced_profile()))
    , notify_rng_(seed ^ 0x6e6f74696679ULL)
    , notify_(draw_notify_faults(notify_rng_)) {
    for (std::size_t n = 0; n < sc_.nodes.size(); ++n) {
        nodes_.push_back(
            std::make_unique<sim_node>(w_, static_cast<int>(n), sc_.node_clocks[n], sc_.nodes[n]));
        nodes_.back()->on_note = [this](const std::string& what) { h_.note(what); };
        nodes_.back()->on_delete = [this, n](const std::string& key, const std::string& token) {
            h_.deleted(static_cast<int>(n), key, token);
        };
        nodes_.back()->on_lock_set = [this, n](const std::string& key, const std::string& token) {
            // The library's own keys (the clock mark: quarantine_options::node_key_prefix)
            // expire by design.
            if (!key.starts_with(quarantine_options{}.node_key_prefix)) {
                h_.lock_set(static_cast<int>(n), key, token);
            }
        };
        nodes_.back()->on_hold_written = [this, n](const std::string& key,
                                                   const std::string& token) {
            h_.hold_written(static_cast<int>(n), key, token);
        };
        nodes_.back()->on_force_delete = [this](const std::string&, const std::string& token) {
            h_.force_deleted(token);
        };
        nodes_.back()->on_violation = [this](const std::string& invariant,
                                             const std::string& what) {
            h_.violation(invariant, what);
        };
        nodes_.back()->on_forced_recreate = [this, n](const std::string& key,
                                                      const std::string& token) {
            h_.violation("(n) a renewal undid a force release",
                         "n" + std::to_string(n) + " wrote back " + key + " for " +
                             token.substr(0, 8) +
                             " after a force release deleted it there, with nothing forgotten "
                             "since");
        };
    }
    h_.set_node_count(nodes_.size());
    h_.dropped_hold = [this](int node, const std::string& key, const std::string& token) {
        return nodes_[static_cast<std::size_t>(node)]->dropped_at(key, token);
    };
    h_.nodes_holding = [this](const std::vector<std::string>& keys, const std::string& token,
                              real_ns since) {
        std::vector<bool> holding;
        for (const auto& node : nodes_) {
            // Crashed since the round began: its clients quarantine it (it grants nobody
            // else). Evicted: only where clients accept evicting nodes (then an eviction is
            // quarantined too); by default such a node never votes, so it counts for nobody.
            const bool quarantined =
                node->crashed_at() >= since ||
                (sc_.config.eviction.accept_evicting_nodes && node->evicted_at() >= since);
            // A hold a resync dropped since the round began (a role change in place): its
            // clients quarantine the node once an INFO shows it; before, (a) judges what
            // they grant there.
            const bool holds_all = std::all_of(keys.begin(), keys.end(), [&](const auto& key) {
                return node->holds(key, token) || node->dropped_at(key, token) >= since;
            });
            holding.push_back(quarantined || holds_all);
        }
        return holding;
    };
    // Keys that a node drops by itself (an eviction, a writable replica's resync) are gone
    // before a cleanup comes, which then deletes nothing: no such node either.
    bool clean = sc_.faults.empty() && sc_.net.lost_reply_rate == 0;
    for (const auto& f : sc_.nodes) {
        clean = clean && f.error_rate == 0 && f.slow_rate == 0 && f.evict_rate == 0 &&
                f.resync_rate == 0;
    }
    if (clean) {
        h_.check_cleanups();
    }
    const int clients = static_cast<int>(sc_.ops.size());
    w_.add_clients(clients);
    clients_.resize(static_cast<std::size_t>(clients));
    paths_.assign(static_cast<std::size_t>(clients),
                  std::vector<std::shared_ptr<sim_path>>(nodes_.size()));
    for (int c = 0; c < clients; ++c) {
        h_.set_clock(c, sc_.client_clocks[static_cast<std::size_t>(c)]);
        make_client(c);
    }
    for (const auto& f : sc_.faults) {
        schedule_fault(f);
    }
}

schedule::~schedule() {
    clients_.clear();
}

void schedule::make_client(int c) {
    detail::environment env;
    const auto clock = sc_.client_clocks[static_cast<std::size_t>(c)];
    env.make_time = [this, c, clock](const asio::any_io_executor& strand) {
        return std::make_unique<sim_time_source>(w_, c, clock, strand);
    };
    env.make_link = [this, c,
                     clock](const asio::any_io_executor& strand, node_address address,
                            const client_config& config) -> std::unique_ptr<detail::node_link> {
        const auto n = static_cast<std::size_t>(address.port - 10000);
        // A second address of one server (sc_.duplicate) gets a path of its own: faults
        // aimed at the node act on the path of its first address.
        auto& first = paths_[static_cast<std::size_t>(c)][n];
        auto path = first
                        ? std::make_shared<sim_path>(w_, h_, *nodes_[n], c, clock, sc_.net, notify_)
                        : path_to(c, n);
        auto connection = std::make_unique<detail::node_connection>(
            strand, std::move(address), config,
            std::make_unique<sim_time_source>(w_, c, clock, strand), path->connector(strand));
        return std::make_unique<observed_link>(std::move(connection), std::move(path), w_, h_);
    };
    env.next_token = [this] {
        char text[40];
        std::snprintf(text, sizeof text, "%08llx%024llx",
                      static_cast<unsigned long long>(++tokens_),
                      static_cast<unsigned long long>(w_.rng()() >> 8));
        return std::string(text);
    };
    env.jitter_seed = w_.rng()();
    if (!notify_.off) {
        env.make_subscriber =
            [this, c, clock](
                const asio::any_io_executor& strand, node_address address,
                const client_config& config, std::size_t node,
                detail::subscription_events& events) -> std::unique_ptr<detail::subscription_link> {
            const auto n = static_cast<std::size_t>(address.port - 10000);
            const auto& path = path_to(c, n);
            return std::make_unique<detail::subscriber_connection>(
                strand, std::move(address), config,
                std::make_unique<sim_time_source>(w_, c, clock, strand), path->connector(strand),
                node, events);
        };
    }
    env.observe_sleep = [this, c](const void* op, std::optional<detail::clock::time_point> bound) {
        std::optional<std::int64_t> local;
        if (bound) {
            local = std::chrono::duration_cast<std::chrono::nanoseconds>(bound->time_since_epoch())
                        .count();
        }
        h_.sleep(c, op, local);
    };

    client_config config = sc_.config;
    if (c > 0 && sc_.lowered_max_ttl.count() > 0) {
        config.fleet_max_ttl = sc_.lowered_max_ttl;
    }
    if (w_.tracing()) {
        // The library's own log lines join the trace (only when tracing: they cost).
        config.log = [this, c](log_level, std::string_view message) {
            SIM_TRACE(w_, who(c), "log: " + std::string(message));
        };
    }
    std::vector<node_address> addresses;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
        node_address a;
        a.host = "sim";
        a.port = static_cast<std::uint16_t>(10000 + n);
        if (sc_.duplicate.client == c && static_cast<int>(n) == sc_.duplicate.replaced) {
            // Another name of node `duplicate.node`, in place of this one.
            a.host = "sim-alias";
            a.port = static_cast<std::uint16_t>(10000 + sc_.duplicate.node);
        }
        config.nodes.push_back(a.display());
        addresses.push_back(a);
    }
    auto impl = detail::client_impl::create(w_.io().get_executor(), config, std::move(addresses),
                                            std::move(env));
    clients_[static_cast<std::size_t>(c)].client = std::unique_ptr<redlock::client>(
        new redlock::client(detail::client_access::make(w_.io().get_executor(), impl)));
}

const std::shared_ptr<sim_path>& schedule::path_to(int c, std::size_t n) {
    auto& path = paths_[static_cast<std::size_t>(c)][n];
    if (!path) {
        path = std::make_shared<sim_path>(w_, h_, *nodes_[n], c,
                                          sc_.client_clocks[static_cast<std::size_t>(c)], sc_.net,
                                          notify_);
    }
    return path;
}

void schedule::schedule_fault(const fault& f) {
    switch (f.what) {
    case fault::kind::pause:
        w_.at(f.at, -1, [this, f] {
            if (w_.paused(f.client)) {
                return;
            }
            SIM_TRACE(w_, who(f.client), "PAUSED for " + fmt_time(f.duration));
            w_.pause(f.client);
            h_.pause(f.client, w_.now(), w_.now() + f.duration);
            w_.after(f.duration, -1, [this, f] {
                SIM_TRACE(w_, who(f.client), "RESUMED");
                w_.resume(f.client);
            });
        });
        return;
    case fault::kind::partition:
        w_.at(f.at, -1, [this, f] {
            if (const auto& path =
                    paths_[static_cast<std::size_t>(f.client)][static_cast<std::size_t>(f.node)]) {
                path->partition(w_.now() + f.duration, f.break_now);
            }
        });
        return;
    case fault::kind::cut:
        w_.at(f.at, -1, [this, f] {
            if (const auto& path =
                    paths_[static_cast<std::size_t>(f.client)][static_cast<std::size_t>(f.node)]) {
                path->cut("connection reset");
            }
        });
        return;
    case fault::kind::crash:
        w_.at(f.at, -1, [this, f] {
            auto& node = *nodes_[static_cast<std::size_t>(f.node)];
            if (!node.up()) {
                return;
            }
            node.crash();
            // A failover's promoted replica has its own counters, without the raises that
            // had not reached it: lost as on a node without durable counters.
            if (!sc_.nodes[static_cast<std::size_t>(f.node)].durable_counters || f.failover) {
                h_.counters_lost(w_.now());
            }
            w_.after(f.duration, -1, [&node, f] { node.restart(f.failover); });
        });
        return;
    case fault::kind::role_change:
        w_.at(f.at, -1, [this, f] {
            auto& node = *nodes_[static_cast<std::size_t>(f.node)];
            if (!node.up()) {
                return;
            }
            node.demote();
            h_.role_change(f.node);
            h_.counters_lost(w_.now()); // the resync's counters are another server's
            w_.after(f.duration, -1, [&node] { node.promote(); });
        });
        return;
    case fault::kind::clock_step:
        w_.at(f.at, -1, [this, f] {
            SIM_TRACE(w_, "n" + std::to_string(f.node),
                      "wall clock steps by " + std::string(f.step < 0 ? "-" : "+") +
                          fmt_time(std::abs(f.step)));
            nodes_[static_cast<std::size_t>(f.node)]->step_clock(f.step);
            h_.clock_step(f.node, f.step);
        });
        return;
    case fault::kind::flush:
        w_.at(f.at, -1, [this, f] { nodes_[static_cast<std::size_t>(f.node)]->flush_scripts(); });
        return;
    case fault::kind::force_release:
        w_.at(f.at, f.client, [this, f] {
            auto& slot = clients_[static_cast<std::size_t>(f.client)];
            if (slot.close_called) {
                return;
            }
            std::vector<std::string> keys{f.key};
            if (f.with_counter) {
                keys.push_back(fencing_counter_key(f.key));
            }
            SIM_TRACE(w_, who(f.client),
                      "force release of " + f.key + (f.with_counter ? " and its counter" : ""));
            const auto call = h_.issue();
            slot.client->async_force_release(
                std::move(keys), std::chrono::milliseconds(200),
                [this, f, call](std::error_code ec, const release_result& r) {
                    h_.completed(call, "force_release");
                    SIM_TRACE(w_, who(f.client),
                              "force release of " + f.key + " -> " +
                                  (ec ? ec.message() : std::to_string(r.released) + " deleted"));
                });
        });
        return;
    case fault::kind::close:
        // The client's own act (held back while it is paused), whatever it has in flight.
        w_.at(f.at, f.client, [this, f] {
            if (f.after_release) {
                SIM_TRACE(w_, who(f.client), "will close() once a release completes");
                clients_[static_cast<std::size_t>(f.client)].close_after_release = true;
                return;
            }
            close_client(f.client);
        });
        return;
    }
}

void schedule::close_client(int c) {
    auto& slot = clients_[static_cast<std::size_t>(c)];
    if (slot.close_called) {
        return;
    }
    slot.close_called = true;
    SIM_TRACE(w_, who(c), "close()");
    slot.client->close();
    // Posted behind the shutdown close() queued on the strand: runs right after it.
    asio::post(detail::client_access::impl(*slot.client)->strand(), [this, c] {
        clients_[static_cast<std::size_t>(c)].closed = true;
        h_.client_closed(c);
    });
}

void schedule::released(int c) {
    if (clients_[static_cast<std::size_t>(c)].close_after_release) {
        close_client(c);
    }
}

std::int64_t schedule::local(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t schedule::local_now(int c) const {
    return h_.clock(c).local(w_.now());
}

std::list<schedule::watch>::iterator schedule::add_watch(const watchdog& dog, int holder,
                                                         int client) {
    return watches_.insert(watches_.end(), watch{&dog, holder, client, dog.renewals(), false});
}

void schedule::remove_watch(std::list<watch>::iterator it) {
    poll(*it);
    if (clients_[static_cast<std::size_t>(it->client)].closed && !it->lost) {
        h_.violation("(j) close() did not stop a watchdog",
                     who(it->client) + " h" + std::to_string(it->holder) +
                         ": its client was closed, yet its holder was never told");
    }
    h_.watch_ended(it->holder, it->lost);
    watches_.erase(it);
}

void schedule::poll(watch& wt) {
    if (wt.dog->renewals() != wt.renewals) {
        wt.renewals = wt.dog->renewals();
        h_.renew(wt.holder, local(wt.dog->valid_until()));
    }
    if (wt.dog->lost() && !wt.lost) {
        wt.lost = true;
        h_.loss(wt.holder, local(wt.dog->valid_until()));
    }
}

void schedule::poll_watches() {
    for (auto& wt : watches_) {
        poll(wt);
    }
}

schedule_result schedule::run() {
    schedule_result result;
    result.seed = seed_;
    result.summary = describe(sc_);
    SIM_TRACE(w_, "sim", "seed " + std::to_string(seed_) + ": " + result.summary);
    if (w_.tracing()) {
        for (const auto& line : describe_plan(sc_)) {
            w_.trace("plan", line);
        }
    }
    for (std::size_t c = 0; c < clients_.size(); ++c) {
        int lanes = 1;
        for (const auto& op : sc_.ops[c]) {
            lanes = std::max(lanes, op.lane + 1);
        }
        clients_[c].lanes_running = lanes;
        for (int lane = 0; lane < lanes; ++lane) {
            asio::co_spawn(
                w_.io(), client_task(static_cast<int>(c), lane), [this, c](std::exception_ptr e) {
                    if (e) {
                        try {
                            std::rethrow_exception(e);
                        } catch (const std::exception& ex) {
                            h_.violation("exception", who(static_cast<int>(c)) + ": " + ex.what());
                        }
                    }
                    clients_[c].done = --clients_[c].lanes_running == 0;
                });
        }
    }
    w_.after_event = [this] { poll_watches(); };
    const auto all_done = [this] {
        for (const auto& c : clients_) {
            if (!c.done) {
                return false;
            }
        }
        return true;
    };
    if (!w_.run(all_done, 600 * sec) || !all_done()) {
        stuck_ = true;
        h_.violation("(f) workload stuck",
                     "some client task never completed (a handler never ran)");
    }
    // Quiescence: every fault over, and what was in flight then landed or failed. A client's
    // connections read their nodes every refresh_interval for as long as they are up, so the
    // world never runs dry while a client lives: 400 ms past the last fault, each client is
    // closed (close() drains what is still on its way), and then no event may be left.
    // 400 ms: a connect attempt cut by the fault's end fails within connect_timeout (20 ms),
    // the next starts within reconnect_delay_max (100 ms), its handshake takes three replies
    // of at most 50 ms each on a slowed node, and every node_timeout of the workloads is
    // below 100 ms. It was a second: the idle refreshes of the rest of that second were a
    // quarter of the simulation's events and exercised nothing the workloads do not.
    real_ns faults_over = w_.now();
    for (const auto& f : sc_.faults) {
        faults_over = std::max(faults_over, f.at + f.duration);
    }
    w_.run(nullptr, faults_over + 400 * ms);
    for (std::size_t c = 0; c < clients_.size(); ++c) {
        close_client(static_cast<int>(c));
    }
    if (!w_.run(nullptr, w_.now() + 600 * sec)) {
        stuck_ = true;
        h_.violation("quiescence", "events still pending 600 s after every client closed");
    }
    // (e): one largest TTL (and its drift) later, no lock key may remain.
    auto wait = std::chrono::nanoseconds(sc_.max_ttl).count() * 11 / 10 + 10 * ms;
    // A node whose clock stepped back keeps its keys that much longer.
    for (const auto& f : sc_.faults) {
        if (f.what == fault::kind::clock_step && f.step < 0) {
            wait -= f.step;
        }
    }
    w_.after(wait, -1, [this] {
        for (const auto& node : nodes_) {
            for (const auto& key : node->live_lock_keys()) {
                h_.violation("(e) key left behind",
                             key + " still on " + node->name() + " after quiescence + max ttl");
            }
        }
    });
    w_.run(nullptr, w_.now() + 600 * sec);
    SIM_TRACE(w_, "sim", "clients shut down");
    for (auto& c : clients_) {
        c.client.reset();
    }
    w_.run(nullptr, w_.now() + 600 * sec);
    h_.check_end();
    result.grants = h_.grants();
    result.violations = h_.violations();
    result.residue = h_.residue();
    for (const auto& f : sc_.faults) {
        result.clock_steps += f.what == fault::kind::clock_step ? 1 : 0;
        result.role_changes += f.what == fault::kind::role_change ? 1 : 0;
    }
    result.notes = h_.notes();
    result.trace = std::move(w_.trace_lines());
    return result;
}

schedule_result run_schedule(std::uint64_t seed, bool tracing) {
    auto s = std::make_unique<schedule>(seed, tracing);
    auto result = s->run();
    if (s->stuck()) {
        // Coroutines and operations are still suspended in it; tearing that down is not
        // worth the risk in a run that already failed: keep it.
        static_cast<void>(s.release());
    }
    return result;
}

} // namespace redlock::sim
