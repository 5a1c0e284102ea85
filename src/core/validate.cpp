#include "core/validate.hpp"

#include "redlock/fencing.hpp"

#include "core/validity.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

std::string ms(std::chrono::microseconds d) {
    return std::to_string(static_cast<double>(d.count()) / 1000.0) + " ms";
}

/// Every duration is bounded like the ttl, so that no sum of them with a clock reading
/// can overflow. `positive`: zero is refused too.
std::string check_duration(const char* name, milliseconds d, bool positive) {
    if (positive ? d <= milliseconds::zero() : d < milliseconds::zero()) {
        return std::string(name) + (positive ? " must be positive" : " must not be negative") +
               ", got " + std::to_string(d.count()) + " ms";
    }
    if (d > max_ttl) {
        return std::string(name) + " of " + std::to_string(d.count()) +
               " ms is over the limit of " + std::to_string(max_ttl.count()) + " ms";
    }
    return {};
}

} // namespace

std::string check_key(std::string_view key) {
    if (key.empty()) {
        return "key must not be empty";
    }
    if (key.size() > max_key_size) {
        return "key is " + std::to_string(key.size()) + " bytes; at most " +
               std::to_string(max_key_size) + " are accepted";
    }
    return {};
}

std::string check_ttl(milliseconds ttl) {
    if (ttl <= milliseconds::zero()) {
        return "ttl must be positive, got " + std::to_string(ttl.count()) + " ms";
    }
    if (ttl > max_ttl) {
        return "ttl of " + std::to_string(ttl.count()) + " ms is over the limit of " +
               std::to_string(max_ttl.count()) + " ms";
    }
    return {};
}

std::string check_fleet_ttl(milliseconds ttl, milliseconds fleet_max_ttl) {
    if (ttl <= fleet_max_ttl) {
        return {};
    }
    // The quarantine after a node restart lasts the fleet's maximum: a longer lock could
    // still be held elsewhere when the restarted node votes again.
    return "ttl of " + std::to_string(ttl.count()) + " ms is above the fleet's maximum of " +
           std::to_string(fleet_max_ttl.count()) +
           " ms (client_config::fleet_max_ttl; redlock --max-ttl or $REDLOCK_MAX_TTL): raise "
           "it on every client of these nodes, or use a shorter ttl and renew the lock";
}

std::string check_lock_options(const lock_options& o) {
    if (auto why = check_ttl(o.ttl); !why.empty()) {
        return why;
    }
    if (!std::isfinite(o.clock_drift_factor) || o.clock_drift_factor < 0.0 ||
        o.clock_drift_factor >= 1.0) {
        return "clock_drift_factor must be in [0, 1), got " + std::to_string(o.clock_drift_factor);
    }
    const auto& r = o.retry;
    for (const auto& [name, d, positive] :
         {std::tuple{"node_timeout", o.node_timeout, true},
          std::tuple{"drift_allowance", o.drift_allowance, false},
          std::tuple{"min_validity", o.min_validity, false},
          std::tuple{"retry.wait_budget", r.wait_budget, false},
          std::tuple{"retry.backoff_initial", r.backoff_initial, false},
          std::tuple{"retry.backoff_max", r.backoff_max, false}}) {
        if (auto why = check_duration(name, d, positive); !why.empty()) {
            return why;
        }
    }
    if (o.ttl <= drift(o) + o.min_validity) {
        return "ttl (" + std::to_string(o.ttl.count()) +
               " ms) must be larger than the clock drift allowance (" + ms(drift(o)) +
               ") plus min_validity (" + std::to_string(o.min_validity.count()) + " ms)";
    }
    if (r.max_attempts == 0 && r.wait_budget == milliseconds::zero()) {
        return "retry is unbounded: set retry.max_attempts or retry.wait_budget";
    }
    // Above a second it would be a backoff of its own (and an early wake never comes later
    // than the backoff's anyway).
    if (r.handoff_stagger < std::chrono::microseconds::zero() ||
        r.handoff_stagger > std::chrono::seconds(1)) {
        return "retry.handoff_stagger must be in [0, 1 s], got " +
               std::to_string(r.handoff_stagger.count()) + " us";
    }
    if (r.backoff_max < r.backoff_initial) {
        return "retry backoff must satisfy 0 <= backoff_initial <= backoff_max";
    }
    if (o.mode != lock_mode::exclusive && o.mode != lock_mode::shared &&
        o.mode != lock_mode::permit) {
        return "mode must be lock_mode::exclusive, shared or permit";
    }
    if (o.mode == lock_mode::permit && (o.permits == 0 || o.permits > max_permits)) {
        return "a semaphore (lock_mode::permit) needs permits from 1 to " +
               std::to_string(max_permits) + ", got " + std::to_string(o.permits);
    }
    if (o.fencing && o.max_counter_lead == 0) {
        // Counters that must agree exactly refuse every node that missed one raise.
        return "max_counter_lead must be at least 1";
    }
    if (o.mode != lock_mode::permit && o.permits != 0) {
        return "permits is for lock_mode::permit only (got " + std::to_string(o.permits) +
               " permits for another mode)";
    }
    return {};
}

std::string check_lock_keys(const std::vector<std::string>& keys, const lock_options& options) {
    if (keys.empty()) {
        return "a lock needs at least one key";
    }
    if (keys.size() > max_keys_per_lock) {
        return std::to_string(keys.size()) + " keys; one lock takes at most " +
               std::to_string(max_keys_per_lock);
    }
    if (keys.size() > 1 && options.mode != lock_mode::exclusive) {
        return "shared and permit locks take one key; a lock over several keys is exclusive";
    }
    for (const auto& key : keys) {
        if (auto why = check_key(key); !why.empty()) {
            return why;
        }
    }
    auto sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        if (sorted[i] == sorted[i - 1]) {
            return "key \"" + sorted[i] + "\" is given twice; every key of a lock must differ";
        }
    }
    if (options.fencing && keys.size() > 1) {
        // The counter of one key would be locked as another key and raised as a counter.
        for (const auto& key : sorted) {
            const auto counter = fencing_counter_key(key);
            if (std::binary_search(sorted.begin(), sorted.end(), counter)) {
                return "key \"" + counter + "\" is the fencing counter of key \"" + key +
                       "\": a fenced lock cannot also lock it";
            }
        }
    }
    return {};
}

std::string check_renewal_options(const renewal_options& o) {
    for (const auto& [name, d] : {std::pair{"renewal interval", o.interval},
                                  std::pair{"renewal retry_delay", o.retry_delay}}) {
        if (auto why = check_duration(name, d, false); !why.empty()) {
            return why + " (0 means the default)";
        }
    }
    return {};
}

std::string check_client_config(const client_config& c, std::vector<node_address>& addresses) {
    if (c.nodes.empty()) {
        return "no nodes configured";
    }
    addresses.clear();
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        node_address parsed;
        std::string why;
        if (parse_node_address(c.nodes[i], parsed, why)) {
            // Not the text itself: it may hold a password.
            return "nodes[" + std::to_string(i) + "]: " + why;
        }
        if (!parsed.user.empty() && parsed.password.empty()) {
            // Without a password there is no AUTH, and the commands would run as the
            // default user instead of the one named.
            return "nodes[" + std::to_string(i) + "]: ACL user without a password";
        }
        for (std::size_t j = 0; j < addresses.size(); ++j) {
            if (addresses[j].same_server(parsed)) {
                return "nodes[" + std::to_string(i) + "] and nodes[" + std::to_string(j) +
                       "] are the same server (" + parsed.display() +
                       "): Redlock needs independent masters";
            }
        }
        addresses.push_back(std::move(parsed));
    }
    for (const auto& [name, d, positive] :
         {std::tuple{"connect_timeout", c.connect_timeout, true},
          std::tuple{"reconnect_delay_initial", c.reconnect_delay_initial, true},
          std::tuple{"reconnect_delay_max", c.reconnect_delay_max, true},
          std::tuple{"fleet_max_ttl", c.fleet_max_ttl, true}}) {
        if (auto why = check_duration(name, d, positive); !why.empty()) {
            return why;
        }
    }
    if (c.reconnect_delay_max < c.reconnect_delay_initial) {
        return "reconnect delays must satisfy 0 < reconnect_delay_initial <= reconnect_delay_max";
    }
    if (c.max_in_flight_per_node == 0) {
        return "max_in_flight_per_node must be at least 1";
    }
    if (c.max_reply_size < smallest_reply_bound || c.max_reply_size > largest_reply_bound) {
        return "max_reply_size must be " + std::to_string(smallest_reply_bound) + " to " +
               std::to_string(largest_reply_bound) + " bytes, got " +
               std::to_string(c.max_reply_size);
    }
    return {};
}

} // namespace redlock::detail
