#include "sim_subscriber.hpp"

#include <boost/asio/post.hpp>

#include <cmath>
#include <set>

namespace redlock::sim {

class subscriber_core : public std::enable_shared_from_this<subscriber_core> {
public:
    subscriber_core(world& w, sim_node& node, int client, std::size_t node_index,
                    boost::asio::any_io_executor strand, detail::subscription_events& events,
                    notify_faults faults, std::uint64_t seed)
        : w_(w)
        , node_(node)
        , client_(client)
        , index_(node_index)
        , strand_(std::move(strand))
        , events_(&events)
        , faults_(faults)
        , rng_(seed)
        , id_(next_id++)
        , who_("c" + std::to_string(client) + "~n" + std::to_string(node.id())) {}

    void attach() {
        node_.on_crash[id_] = [weak = weak_from_this()] {
            if (auto self = weak.lock()) {
                self->cut("node crashed");
            }
        };
    }

    void detach() {
        shut_ = true;
        node_.on_crash.erase(id_);
        node_.unsubscribe_all(id_);
    }

    void subscribe(const std::string& channel, std::uint64_t generation) {
        if (shut_) {
            return;
        }
        if (chance(faults_.cut_rate)) {
            const auto at = w_.now() + uniform(0, faults_.cut_within);
            w_.at(at, -1, [weak = weak_from_this()] {
                if (auto self = weak.lock()) {
                    self->cut("subscriber connection cut");
                }
            });
        }
        pending_.insert(generation);
        const auto connection = connection_;
        w_.at(arrival(), -1, [weak = weak_from_this(), channel, generation, connection] {
            auto self = weak.lock();
            if (!self || self->shut_ || connection != self->connection_ || !self->node_.up()) {
                return; // the cut reported it
            }
            self->node_.subscribe(channel, self->id_,
                                  [weak](const std::string& ch, const std::string& payload) {
                                      if (auto s = weak.lock()) {
                                          s->published(ch, payload);
                                      }
                                  });
            self->deliver(connection, [channel, generation](subscriber_core& s) {
                s.pending_.erase(generation);
                s.events_->on_subscribed(s.index_, channel, generation);
            });
        });
    }

    void unsubscribe(const std::string& channel) {
        if (shut_) {
            return;
        }
        const auto connection = connection_;
        w_.at(arrival(), -1, [weak = weak_from_this(), channel, connection] {
            auto self = weak.lock();
            if (self && !self->shut_ && connection == self->connection_) {
                self->node_.unsubscribe(channel, self->id_);
            }
        });
    }

    void cut(const char* why) {
        if (shut_) {
            return;
        }
        SIM_TRACE(w_, who_, std::string("subscriber lost: ") + why);
        ++connection_;
        node_.unsubscribe_all(id_);
        auto failed = std::exchange(pending_, {});
        w_.at(w_.now(), client_, [weak = weak_from_this(), failed] {
            auto self = weak.lock();
            if (!self || self->shut_) {
                return;
            }
            boost::asio::post(self->strand_, [weak, failed] {
                auto s = weak.lock();
                if (!s || s->shut_) {
                    return;
                }
                s->events_->on_subscriptions_lost(s->index_);
                for (auto g : failed) {
                    s->events_->on_subscribe_failed(s->index_, g);
                }
            });
        });
    }

private:
    bool chance(double p) {
        return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p;
    }
    real_ns uniform(real_ns lo, real_ns hi) {
        return std::uniform_int_distribution<real_ns>(lo, hi)(rng_);
    }
    real_ns latency() {
        if (chance(faults_.tail_rate)) {
            return uniform(50 * us, faults_.tail_max);
        }
        const double u = std::uniform_real_distribution<double>(1e-9, 1.0)(rng_);
        return 50 * us + static_cast<real_ns>(-std::log(u) * 300.0 * us);
    }
    real_ns arrival() {
        last_arrival_ = std::max(w_.now() + latency(), last_arrival_ + 1);
        return last_arrival_;
    }

    void published(const std::string& channel, const std::string& payload) {
        if (chance(faults_.lost_rate)) {
            SIM_TRACE(w_, who_, "notification lost: " + channel);
            return;
        }
        deliver(connection_, [channel, payload](subscriber_core& s) {
            s.events_->on_message(s.index_, channel, payload);
        });
    }

    /// Runs `what` on the client's strand once it crossed back, in order with everything
    /// else on this connection, unless the connection broke meanwhile.
    template <typename What>
    void deliver(std::uint64_t connection, What what) {
        last_delivery_ = std::max(w_.now() + latency(), last_delivery_ + 1);
        w_.at(last_delivery_, client_, [weak = weak_from_this(), connection, what] {
            auto self = weak.lock();
            if (!self || self->shut_ || connection != self->connection_) {
                return;
            }
            boost::asio::post(self->strand_, [weak, connection, what] {
                auto s = weak.lock();
                if (s && !s->shut_ && connection == s->connection_) {
                    what(*s);
                }
            });
        });
    }

    static inline std::uint64_t next_id = 1'000'000'000;

    world& w_;
    sim_node& node_;
    int client_;
    std::size_t index_;
    boost::asio::any_io_executor strand_;
    detail::subscription_events* events_;
    notify_faults faults_;
    std::mt19937_64 rng_;
    std::uint64_t id_;
    std::string who_;
    bool shut_ = false;
    std::uint64_t connection_ = 0;
    std::set<std::uint64_t> pending_;
    real_ns last_arrival_ = 0;
    real_ns last_delivery_ = 0;
};

sim_subscriber::sim_subscriber(world& w, sim_node& node, int client, std::size_t node_index,
                               boost::asio::any_io_executor strand,
                               detail::subscription_events& events, notify_faults faults,
                               std::uint64_t seed)
    : core_(std::make_shared<subscriber_core>(w, node, client, node_index, std::move(strand),
                                              events, faults, seed)) {
    core_->attach();
}

sim_subscriber::~sim_subscriber() {
    core_->detach();
}

void sim_subscriber::subscribe(const std::string& channel, std::uint64_t generation) {
    core_->subscribe(channel, generation);
}

void sim_subscriber::unsubscribe(const std::string& channel) {
    core_->unsubscribe(channel);
}

void sim_subscriber::shutdown() {
    core_->detach();
}

} // namespace redlock::sim
