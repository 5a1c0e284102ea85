#include "sim_world.hpp"

#include <cstdio>

namespace redlock::sim {

world::world(std::uint64_t seed, bool tracing)
    : seed_(seed)
    , rng_(seed)
    , io_(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE) // one thread: no locking
    , tracing_(tracing) {}

std::int64_t world::uniform(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) {
        return lo;
    }
    return lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
}

double world::uniform_real(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(rng_() >> 11) * 0x1.0p-53);
}

bool world::chance(double p) {
    return p > 0 && uniform_real(0, 1) < p;
}

void world::at(real_ns when, int owner, std::function<void()> fn) {
    std::uint32_t slot = 0;
    if (free_.empty()) {
        slot = static_cast<std::uint32_t>(slots_.size());
        slots_.push_back(std::move(fn));
    } else {
        slot = free_.back();
        free_.pop_back();
        slots_[slot] = std::move(fn);
    }
    queue_.push(event{when < now_ ? now_ : when, seq_++, owner, slot});
}

void world::pause(int client) {
    paused_[client] = true;
}

void world::resume(int client) {
    paused_[client] = false;
    // Held events run now, in the order they would have run.
    for (const auto& e : held_[client]) {
        queue_.push(event{now_, seq_++, e.owner, e.slot});
    }
    held_[client].clear();
}

void world::drain() {
    while (io_.poll() > 0) {
    }
    io_.restart();
}

bool world::run(const std::function<bool()>& done, real_ns limit) {
    drain();
    while (true) {
        if (after_event) {
            after_event();
        }
        if (done && done()) {
            return true;
        }
        if (queue_.empty()) {
            return true;
        }
        if (queue_.top().when > limit) {
            return false;
        }
        const auto e = queue_.top();
        queue_.pop();
        now_ = e.when;
        if (e.owner >= 0 && paused_[e.owner]) {
            held_[e.owner].push_back(e);
            continue;
        }
        auto fn = std::move(slots_[e.slot]);
        slots_[e.slot] = nullptr;
        free_.push_back(e.slot);
        fn();
        drain();
    }
}

void world::trace(const std::string& who, const std::string& what) {
    trace_.push_back(fmt_time(now_) + "  " + who + "  " + what);
}

std::string fmt_time(real_ns t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%10.6f", static_cast<double>(t) / 1e9);
    return buf;
}

} // namespace redlock::sim
