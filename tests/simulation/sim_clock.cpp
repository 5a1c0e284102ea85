#include "sim_clock.hpp"

#include <boost/asio/post.hpp>

#include <cmath>
#include <memory>

namespace redlock::sim {

real_ns drift_clock::real_at(std::int64_t t, real_ns not_before) const {
    auto real = static_cast<real_ns>(std::ceil(static_cast<double>(t - offset) / rate));
    while (local(real) < t) {
        ++real;
    }
    return real < not_before ? not_before : real;
}

detail::clock::time_point sim_time_source::now() const {
    return detail::clock::time_point(std::chrono::nanoseconds(clock_.local(world_.now())));
}

namespace {

class sim_alarm final : public detail::alarm {
public:
    sim_alarm(world& w, int client, drift_clock clock, boost::asio::any_io_executor strand)
        : world_(w)
        , client_(client)
        , clock_(clock)
        , strand_(std::move(strand)) {}

    ~sim_alarm() override { state_->fn = nullptr; }

    void arm(detail::clock::time_point at, std::function<void()> fn) override {
        const auto generation = ++state_->generation;
        state_->fn = std::move(fn);
        const auto when =
            clock_.real_at(std::chrono::nanoseconds(at.time_since_epoch()).count(), world_.now());
        world_.at(when, client_,
                  [strand = strand_, weak = std::weak_ptr<shared>(state_), generation] {
                      boost::asio::post(strand, [weak, generation] {
                          auto s = weak.lock();
                          // A stale wake-up (re-armed or cancelled since) does nothing.
                          if (!s || s->generation != generation || !s->fn) {
                              return;
                          }
                          auto f = std::exchange(s->fn, nullptr);
                          f();
                      });
                  });
    }

    void cancel() override {
        ++state_->generation;
        state_->fn = nullptr;
    }

private:
    struct shared {
        std::uint64_t generation = 0;
        std::function<void()> fn;
    };
    world& world_;
    int client_;
    drift_clock clock_;
    boost::asio::any_io_executor strand_;
    std::shared_ptr<shared> state_ = std::make_shared<shared>();
};

} // namespace

std::unique_ptr<detail::alarm> sim_time_source::make_alarm() {
    return std::make_unique<sim_alarm>(world_, client_, clock_, strand_);
}

} // namespace redlock::sim
