#ifndef REDLOCK_TESTS_SUPPORT_MANUAL_TIME_HPP
#define REDLOCK_TESTS_SUPPORT_MANUAL_TIME_HPP

#include "core/time_source.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace redlock::test {

/// Time that moves only when the test says; alarms fire only when the test says
/// (fire_due()), and hold their function until cancelled, as real ones do. The clock, the
/// flag and the list of alarms belong to the test, so that one test drives every source.
struct manual_time final : detail::time_source {
    struct idle_alarm final : detail::alarm {
        explicit idle_alarm(std::vector<idle_alarm*>& all)
            : all_(all) {
            all_.push_back(this);
        }
        ~idle_alarm() override { all_.erase(std::find(all_.begin(), all_.end(), this)); }
        idle_alarm(const idle_alarm&) = delete;
        idle_alarm& operator=(const idle_alarm&) = delete;
        void arm(detail::clock::time_point at, std::function<void()> fn) override {
            at_ = at;
            fn_ = std::move(fn);
        }
        void cancel() override { const auto dropped = std::exchange(fn_, nullptr); }
        std::vector<idle_alarm*>& all_;
        detail::clock::time_point at_{};
        std::function<void()> fn_;
    };
    manual_time(detail::clock::time_point& now, const bool& ticking,
                std::vector<idle_alarm*>& alarms)
        : now_(now)
        , ticking_(ticking)
        , alarms_(alarms) {}
    detail::clock::time_point now() const override {
        if (ticking_) {
            now_ += std::chrono::nanoseconds(1);
        }
        return now_;
    }
    std::unique_ptr<detail::alarm> make_alarm() override {
        return std::make_unique<idle_alarm>(alarms_);
    }
    detail::clock::time_point& now_;
    /// Every reading moves the clock on by 1 ns: two readings of one event differ.
    const bool& ticking_;
    std::vector<idle_alarm*>& alarms_;
};

/// Runs the function of every armed alarm that is due at `now` (each once).
inline void fire_due(const std::vector<manual_time::idle_alarm*>& alarms,
                     detail::clock::time_point now) {
    std::vector<std::function<void()>> due;
    for (auto* a : alarms) {
        if (a->fn_ && a->at_ <= now) {
            due.push_back(std::exchange(a->fn_, nullptr));
        }
    }
    for (auto& fn : due) {
        fn();
    }
}

} // namespace redlock::test

#endif
