#include "runtime/renewal_timers.hpp"

#include <vector>

namespace redlock::detail {

renewal_timers::renewal_timers(time_source& time)
    : time_(time)
    , alarm_(time.make_alarm()) {}

renewal_timers::entry renewal_timers::schedule(clock::time_point at,
                                               std::shared_ptr<timed> target) {
    auto e = due_.emplace(at, std::move(target));
    if (!armed_for_ || at < *armed_for_) {
        arm();
    }
    return e;
}

void renewal_timers::cancel(entry e) {
    // The timer may stay armed for it: waking up to nothing due is harmless.
    due_.erase(e);
}

void renewal_timers::clear() {
    due_.clear();
    armed_for_.reset();
    alarm_->cancel();
}

void renewal_timers::arm() {
    if (due_.empty()) {
        armed_for_.reset();
        return;
    }
    armed_for_ = due_.begin()->first;
    alarm_->arm(*armed_for_, [weak = weak_from_this()] {
        if (auto self = weak.lock()) {
            self->on_timer();
        }
    });
}

void renewal_timers::on_timer() {
    armed_for_.reset();
    const auto now = time_.now();
    std::vector<std::shared_ptr<timed>> ready;
    while (!due_.empty() && due_.begin()->first <= now) {
        ready.push_back(std::move(due_.begin()->second));
        due_.erase(due_.begin());
    }
    arm();
    for (auto& target : ready) {
        target->on_due();
    }
}

} // namespace redlock::detail
