#include "runtime/client_impl.hpp"

#include "transport/scripts.hpp"
#include "transport/server_text.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace redlock::detail {
namespace {

/// "2.1 s": how long ago a node restarted, how long until it votes again.
std::string seconds_text(clock::duration d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s",
                  std::chrono::duration<double>(std::max(d, clock::duration::zero())).count());
    return text;
}

} // namespace

std::shared_ptr<client_impl> client_impl::create(const boost::asio::any_io_executor& executor,
                                                 client_config config,
                                                 std::vector<node_address> addresses,
                                                 environment env) {
    struct destroy_on_strand {
        void operator()(client_impl* impl) const noexcept {
            struct owner {
                void operator()(client_impl* p) const noexcept { delete p; }
            };
            std::unique_ptr<client_impl, owner> owned(impl);
            try {
                const auto strand = impl->strand_;
                boost::asio::post(strand, [owned = std::move(owned)] {});
            } catch (...) {
                // Out of memory: destroyed here, as before the strand could be asked.
            }
        }
    };
    return std::shared_ptr<client_impl>(
        new client_impl(executor, std::move(config), std::move(addresses), std::move(env)),
        destroy_on_strand{});
}

client_impl::client_impl(const boost::asio::any_io_executor& executor, client_config config,
                         std::vector<node_address> addresses, environment env)
    : strand_(boost::asio::make_strand(executor))
    , config_(std::move(config))
    , env_(std::move(env))
    , time_(env_.make_time(strand_))
    , jitter_(env_.jitter_seed)
    , reported_quarantined_(addresses.size(), false)
    , quarantine_basis_(addresses.size())
    , ceiling_reads_(std::make_shared<ceiling_reads>(addresses.size()))
    , servers_(addresses.size())
    , reported_duplicate_(addresses.size())
    , timers_(std::make_shared<renewal_timers>(*time_)) {
    release_watch::link_factory subscriber;
    if (env_.make_subscriber) {
        subscriber = [this, addresses](std::size_t node, subscription_events& events) {
            return env_.make_subscriber(strand_, addresses[node], config_, node, events);
        };
    }
    releases_ = std::make_unique<release_watch>(addresses, std::move(subscriber));
    nodes_.reserve(addresses.size());
    const auto ceiling_key = config_.quarantine.node_key_prefix + "ttl-ceiling";
    for (auto& address : addresses) {
        // Every link keeps its node's TTL ceiling above the ttls it sets, whether or not this
        // client quarantines: other clients' quarantines read it (docs/safety.md).
        auto link = std::make_unique<ceiling_link>(
            env_.make_link(strand_, std::move(address), config_), ceiling_key, ceiling_terms_now(),
            [this] { return time_->now(); });
        ceilings_.push_back(link.get());
        // Links live no longer than this client, and call back on its strand.
        link->on_server_read([this, node = nodes_.size()] { notice_restart(node, now()); });
        link->on_readiness_changed([this] { link_waiters_.notify(); });
        nodes_.push_back(std::move(link));
    }
}

std::pair<std::size_t, std::size_t> client_impl::links_ready_and_connecting() const noexcept {
    std::size_t ready = 0;
    std::size_t connecting = 0;
    for (const auto& link : nodes_) {
        const auto r = link->readiness();
        ready += r == link_readiness::ready ? 1 : 0;
        connecting += r == link_readiness::connecting ? 1 : 0;
    }
    return {ready, connecting};
}

void client_impl::warm_up_links() {
    for (auto& link : nodes_) {
        link->warm_up();
    }
}

ceiling_terms client_impl::ceiling_terms_now() const noexcept {
    return {config_.fleet_max_ttl, largest_drift_factor_, largest_drift_allowance_};
}

std::chrono::microseconds client_impl::largest_drift(std::chrono::milliseconds ttl) const noexcept {
    lock_options longest;
    longest.ttl = ttl;
    longest.clock_drift_factor = largest_drift_factor_;
    longest.drift_allowance = largest_drift_allowance_;
    return drift(longest);
}

void client_impl::log(log_level level, const std::string& message) const {
    if (config_.log) {
        config_.log(level, message);
    }
}

void client_impl::note_options(const lock_options& options) noexcept {
    if (options.clock_drift_factor > largest_drift_factor_ ||
        options.drift_allowance > largest_drift_allowance_) {
        largest_drift_factor_ = std::max(largest_drift_factor_, options.clock_drift_factor);
        largest_drift_allowance_ = std::max(largest_drift_allowance_, options.drift_allowance);
        for (auto* link : ceilings_) {
            link->set_terms(ceiling_terms_now());
        }
    }
    if (options.clock_drift_factor > clock_drift_allowed_) {
        // The rate a node's clock may run at without counting as a step: the one the
        // validity of the locks in use subtracts (the quarantine uses the same).
        clock_drift_allowed_ = options.clock_drift_factor;
        for (auto& node : nodes_) {
            node->allow_clock_drift(clock_drift_allowed_);
        }
    }
    note_node_timeout(options.node_timeout);
}

void client_impl::note_node_timeout(std::chrono::milliseconds node_timeout) noexcept {
    if (node_timeout > largest_node_timeout_) {
        largest_node_timeout_ = node_timeout;
        // Every command of ours is abandoned after its node_timeout; a connection whose
        // oldest command waited several times the longest of them serves nobody. The floor
        // keeps a busy machine's scheduling hiccups from churning connections.
        const auto patience =
            std::max<std::chrono::milliseconds>(4 * largest_node_timeout_, std::chrono::seconds(1));
        for (auto& node : nodes_) {
            node->expect_replies_within(patience);
        }
    }
}

void client_impl::extend_alive(const std::string& token) {
    ++extends_alive_[token];
}

void client_impl::extend_gone(const std::string& token) {
    const auto it = extends_alive_.find(token);
    if (it != extends_alive_.end() && --it->second == 0) {
        extends_alive_.erase(it);
        released_.erase(token);
    }
}

void client_impl::lock_granted(const lock& granted) {
    if (auto* m = metrics()) {
        held_locks_.granted(granted.token(), granted.valid_until());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::lock_extended(const lock& extended) {
    if (auto* m = metrics()) {
        held_locks_.extended(extended.token(), extended.valid_until());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::lock_released(const lock& released) {
    if (auto* m = metrics()) {
        held_locks_.released(released.token());
        m->on_locks_held(held_locks_.count(now()));
    }
}

void client_impl::note_release(const std::string& token) {
    if (extends_alive_.count(token) != 0) {
        released_.insert(token);
    }
}

bool client_impl::ceiling_eligible(std::size_t reader, clock::time_point now) const {
    const auto& link = *nodes_[reader];
    if (link.run_id().empty() || !link.restarts_undetectable().empty() ||
        !link.eviction_risk().empty() || !link.not_primary().empty()) {
        return false;
    }
    // A node that restarted (or stepped) within the maximum may have lost ceiling entries
    // of locks that still stand.
    const auto started = link.started_at();
    return started &&
           *started + config_.fleet_max_ttl + largest_drift(config_.fleet_max_ttl) <= now;
}

quarantine_figure client_impl::quarantine_figure_for(std::size_t node, clock::time_point started,
                                                     clock::time_point now) {
    auto& round = ceiling_reads_->of(node);
    if ((!round.started || started > round.sent_at) && can_read_ceilings()) {
        // Read after the restart was seen: every lock the node granted before it was
        // granted before this read (docs/safety.md, "The TTL ceiling"), though an acquire
        // still in flight may raise a reader's ceiling after its answer (quarantine_left
        // reads again once the maximum has passed).
        ceiling_reads_->begin(node, started, now);
        send_ceiling_reads(node);
    }
    // Readings sent before the restart say nothing of the locks granted just before it.
    const bool after_restart = round.started && started <= round.sent_at;
    std::vector<std::optional<ceiling_reading>> eligible(nodes_.size());
    std::vector<std::string_view> counted_servers;
    for (std::size_t reader = 0; reader < nodes_.size(); ++reader) {
        const auto& reading = after_restart && round.readings.size() > reader
                                  ? round.readings[reader]
                                  : std::optional<ceiling_reading>{};
        const auto run_id = nodes_[reader]->run_id();
        // One server counts once, however many addresses reach it.
        if (reader == node || !reading || !ceiling_eligible(reader, now) ||
            run_id == nodes_[node]->run_id() ||
            std::find(counted_servers.begin(), counted_servers.end(), run_id) !=
                counted_servers.end()) {
            continue;
        }
        counted_servers.push_back(run_id);
        eligible[reader] = reading;
        if (reading->what == ceiling_reading::kind::odd && !round.odd_reported.at(reader)) {
            round.odd_reported[reader] = true;
            log(log_level::error,
                "node " + nodes_[reader]->address().display() + ": " + reading->note + " (" +
                    config_.quarantine.node_key_prefix +
                    "ttl-ceiling); it does not count toward a learned quarantine");
        }
    }
    auto figure = quarantine_ttl(eligible, nodes_.size(), config_.fleet_max_ttl);
    if (figure.above_maximum && !round.above_maximum) {
        round.above_maximum = true;
        log(log_level::error, "node " + nodes_[node]->address().display() + " quarantined: " +
                                  figure.basis + "; every client must use the same fleet_max_ttl");
    }
    return figure;
}

bool client_impl::can_read_ceilings() const {
    // The reads' tags hold the node numbers in 16 bits (ceiling_reads::tag).
    return nodes_.size() < (std::size_t(1) << 16) && !shut_down_;
}

void client_impl::send_ceiling_reads(std::size_t node) {
    const auto key = config_.quarantine.node_key_prefix + "ttl-ceiling";
    for (std::size_t reader = 0; reader < nodes_.size(); ++reader) {
        if (reader != node) {
            ceiling_reads_->sent(node, reader);
            nodes_[reader]->send(command{{"EVAL", ttl_ceiling_read_script.text, "1", key}},
                                 ceiling_reads_, ceiling_reads_->tag(node, reader));
        }
    }
}

bool client_impl::ceiling_reads_unanswered(std::size_t node) const {
    const auto& round = std::as_const(*ceiling_reads_).of(node);
    if (!round.started) {
        return false;
    }
    for (std::size_t reader = 0; reader < round.readings.size(); ++reader) {
        if (reader != node && round.readings[reader]) {
            return false;
        }
    }
    return true;
}

std::optional<std::chrono::milliseconds> client_impl::quarantine_left(std::size_t node,
                                                                      clock::time_point now) {
    const auto& q = config_.quarantine;
    const auto started = nodes_[node]->started_at();
    std::optional<std::chrono::milliseconds> left;
    quarantine_basis_[node].clear();
    if (q.enabled && started) {
        // No client of these nodes holds a lock longer than the fleet's maximum (each refuses
        // a longer ttl): whatever ttl this client uses, that is what the node may have held,
        // unless the other nodes' ceilings tell less (or more: a client with a larger maximum).
        const auto& round = ceiling_reads_->of(node);
        const auto maximum_ends =
            *started + config_.fleet_max_ttl + largest_drift(config_.fleet_max_ttl);
        const bool within_maximum = now < maximum_ends;
        // The reads sent when the restart was seen miss an acquire that was in flight then:
        // its vote from this node came before the restart, and its raise reached a reader
        // after that reader answered (a soak's two holders, seed 800413021). Such an acquire
        // decided by its deadline, within this maximum unless its node_timeout is longer:
        // once the maximum has passed, read once more, and count the node only when every
        // read of that round has answered (`reading` below).
        if (!within_maximum && round.started && *started <= round.sent_at &&
            round.sent_at < maximum_ends && can_read_ceilings()) {
            ceiling_reads_->read_again(node, now);
            send_ceiling_reads(node);
        }
        // A ceiling above the maximum, read after this restart, may keep the node out for
        // longer: looked at again until that long has passed, whether or not the figure was
        // evaluated while its reading arrived (a client may ask nothing of the node between
        // the reading and the end of the maximum).
        const bool ceiling_beyond =
            round.started && *started <= round.sent_at &&
            round.largest_known > config_.fleet_max_ttl &&
            now < *started + round.largest_known + largest_drift(round.largest_known);
        // The reads of this restart still on their way when the maximum passes: one of them
        // may yet tell of a longer lock (a reader stalled behind other commands, review 8's
        // simulation). Bounded: a connection whose command waits past the reply patience is
        // reset, and its read then fails.
        const bool reading = round.started && *started <= round.sent_at && round.awaiting(node);
        if (within_maximum || ceiling_beyond || reading) {
            // The other nodes' ceilings are read whether or not this client learns a tighter
            // figure from them: one above this client's maximum (a client configured with a
            // larger one, or a maximum lowered less than the old one ago) lengthens the
            // quarantine to it, and a longer quarantine can never grant twice.
            auto figure = quarantine_figure_for(node, *started, now);
            if (!q.learn_from_ttl_ceilings && !figure.above_maximum) {
                figure = quarantine_figure{config_.fleet_max_ttl, false, "fleet maximum", false};
            }
            // Whoever answered it, and whatever its reader's state now (evicting, restarted,
            // refusing INFO since): a lock that long was taken, and it only lengthens.
            if (ceiling_beyond && round.largest_known > figure.ttl) {
                figure = beyond_maximum(round.largest_known, config_.fleet_max_ttl);
            }
            const auto until = *started + figure.ttl + largest_drift(figure.ttl);
            if (now < until) {
                left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
                quarantine_basis_[node] = figure.basis;
            } else if (reading) {
                left = std::chrono::milliseconds(1);
                quarantine_basis_[node] = figure.basis + "; until the other nodes' TTL ceilings "
                                                         "read since the restart have answered";
            }
        }
    }
    if (left.has_value() != reported_quarantined_[node]) {
        reported_quarantined_[node] = left.has_value();
        if (auto* m = metrics()) {
            m->on_quarantine(node, left.has_value());
        }
    }
    return left;
}

void client_impl::notice_restart(std::size_t node, clock::time_point now) {
    const auto started = nodes_[node]->started_at();
    if (!config_.quarantine.enabled || !started) {
        return;
    }
    const auto& round = std::as_const(*ceiling_reads_).of(node);
    const auto maximum_ends =
        *started + config_.fleet_max_ttl + largest_drift(config_.fleet_max_ttl);
    // The first read when the restart is seen within the maximum; the second at the first
    // INFO past it (every refresh_interval), so that a vote of the node rarely finds it
    // still on its way (quarantine_left).
    const bool read_already = round.started && *started <= round.sent_at;
    if (read_already ? now >= maximum_ends && round.sent_at < maximum_ends : now < maximum_ends) {
        (void)quarantine_left(node, now); // sends the reads
    }
}

std::string client_impl::quarantine_cause(std::size_t node) const {
    const auto cause = nodes_[node]->quarantine_cause();
    return cause.empty() ? std::string("node restarted") : std::string(cause);
}

std::optional<client_impl::veto> client_impl::veto_grant(std::size_t node, clock::time_point now) {
    const auto run_id = nodes_[node]->run_id();
    if (!run_id.empty()) {
        std::vector<std::string_view> live;
        live.reserve(nodes_.size());
        for (const auto& link : nodes_) {
            live.push_back(link->run_id());
        }
        const auto counted = servers_.counted_through(node, run_id, live);
        if (counted != node) {
            const auto& other = nodes_[counted]->address().display();
            // Compared as sent; shown without the secrets, as all server text.
            std::string message =
                "same server as " + other + " (run_id " +
                printable_server_text(
                    run_id, configured_secrets(config_, nodes_[node]->address().password)) +
                ")";
            if (reported_duplicate_[node] != run_id) {
                reported_duplicate_[node] = std::string(run_id);
                log(log_level::error,
                    "node " + nodes_[node]->address().display() + " is the " + message +
                        ": its votes do not count; list every server once in client_config::nodes");
            }
            return veto{errc::duplicate_node, std::move(message)};
        }
    }
    if (auto own = link_veto(node, now, true)) {
        return own;
    }
    // One server, however many addresses reach it: what another link of it saw (a restart,
    // a clock step, an eviction seen) holds for the vote counted through this one. Each link
    // samples on its own: a soak's double grant (seed 40546350) counted this link's vote
    // while its clock mark was refused, after the second address had seen the step. Only
    // the quarantine, which ends by itself: what another link read of the server's state
    // (its policy, INFO refused to that link's user) may be stale once it is down, and
    // this link reads its own.
    for (std::size_t other = 0; !run_id.empty() && other < nodes_.size(); ++other) {
        if (other == node || nodes_[other]->run_id() != run_id) {
            continue;
        }
        if (auto seen = link_veto(other, now, false)) {
            seen->message = "same server as " + nodes_[other]->address().display() +
                            ", there: " + seen->message;
            return seen;
        }
    }
    return std::nullopt;
}

std::optional<client_impl::veto> client_impl::link_veto(std::size_t node, clock::time_point now,
                                                        bool state_too) {
    // A replica takes no lock that the next failover or resync keeps, whatever
    // replica-read-only says: never a vote, whatever the quarantine's settings.
    if (state_too) {
        const auto replica = nodes_[node]->not_primary();
        if (!replica.empty()) {
            return veto{errc::node_not_primary, std::string(replica)};
        }
    }
    // INFO refused hides restarts from the quarantine and a memory policy from the eviction
    // veto: either one, while on, takes the node's vote.
    if (state_too && (config_.quarantine.enabled || !config_.eviction.accept_evicting_nodes)) {
        const auto undetectable = nodes_[node]->restarts_undetectable();
        if (!undetectable.empty()) {
            return veto{errc::restarts_undetectable, std::string(undetectable)};
        }
    }
    if (state_too && !config_.eviction.accept_evicting_nodes) {
        const auto risk = nodes_[node]->eviction_risk();
        if (!risk.empty()) {
            return veto{errc::node_can_evict, std::string(risk)};
        }
    }
    if (const auto left = quarantine_left(node, now)) {
        const auto started = nodes_[node]->started_at(); // set: quarantine_left needs it
        return veto{errc::node_quarantined,
                    quarantine_cause(node) + " " + seconds_text(now - *started) +
                        " ago, votes count again in " + seconds_text(*left) + " (" +
                        quarantine_basis_[node] + ")"};
    }
    return std::nullopt;
}

void client_impl::shutdown() {
    if (shut_down_) {
        return;
    }
    shut_down_ = true;
    // Cancelling may complete and unregister operations: iterate over a copy.
    const std::vector<cancellable*> live(live_.begin(), live_.end());
    for (auto* op : live) {
        if (live_.count(op)) {
            op->cancel();
        }
    }
    timers_->clear();
    releases_->shutdown();
    for (auto& node : nodes_) {
        node->shutdown(largest_node_timeout_);
    }
}

} // namespace redlock::detail
