#ifndef REDLOCK_TESTS_SUPPORT_NEMESIS_HPP
#define REDLOCK_TESTS_SUPPORT_NEMESIS_HPP

#include "support/proxied_nodes.hpp"
#include "support/topology.hpp"

#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace redlock::test {

/// Faults, one at a time or two at once, never more than two nodes out: the lock must stay
/// available as well as safe.
class nemesis {
public:
    nemesis(proxied_nodes& nodes, unsigned seed)
        : nodes_(nodes)
        , random_(seed) {}

    /// Injects faults until `until`, then heals everything.
    void run(std::chrono::steady_clock::time_point until) {
        std::uniform_int_distribution<int> node(1, 5), action(0, 5), hold(100, 400);
        while (std::chrono::steady_clock::now() < until) {
            const int first = node(random_);
            int second = node(random_);
            while (second == first) {
                second = node(random_);
            }
            inject(action(random_), first);
            if (action(random_) < 2) {
                inject(action(random_), second);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(hold(random_)));
            heal();
            std::this_thread::sleep_for(std::chrono::milliseconds(hold(random_)));
        }
        heal();
    }

    int faults() const { return faults_; }

private:
    void inject(int action, int node) {
        ++faults_;
        switch (action) {
        case 0:
            topology::pause(node);
            paused_.push_back(node);
            return;
        case 1:
            topology::restart(node); // kill -9, back empty: the quarantine must hold
            return;
        case 2:
            nodes_.proxy(node).set_mode(fault_proxy::mode::drop_replies);
            cut_off_.push_back(node);
            return;
        case 3:
            nodes_.proxy(node).set_latency(std::chrono::milliseconds(80));
            slowed_.push_back(node);
            return;
        case 4:
            nodes_.proxy(node).reset_connections();
            return;
        default:
            nodes_.partition(node);
            cut_off_.push_back(node);
            return;
        }
    }

    void heal() {
        for (int node : paused_) {
            topology::resume(node);
        }
        paused_.clear();
        for (int node : slowed_) {
            nodes_.proxy(node).set_latency(std::chrono::milliseconds(0));
        }
        slowed_.clear();
        for (int node : cut_off_) {
            nodes_.heal(node);
        }
        cut_off_.clear();
    }

    proxied_nodes& nodes_;
    std::mt19937 random_;
    std::vector<int> paused_, slowed_, cut_off_;
    int faults_ = 0;
};

} // namespace redlock::test

#endif
