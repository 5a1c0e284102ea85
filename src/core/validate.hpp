#ifndef REDLOCK_SRC_VALIDATE_HPP
#define REDLOCK_SRC_VALIDATE_HPP

#include "redlock/config.hpp"
#include "redlock/node_address.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

// Each returns an empty string when the input is acceptable, otherwise what is wrong
// with it, phrased so the user knows what to change.

std::string check_key(std::string_view key);
std::string check_ttl(std::chrono::milliseconds ttl);
/// A ttl to set on the nodes must not exceed client_config::fleet_max_ttl: the restart
/// quarantine covers no longer lock.
std::string check_fleet_ttl(std::chrono::milliseconds ttl, std::chrono::milliseconds fleet_max_ttl);
std::string check_lock_options(const lock_options& options);
/// The keys of one lock: 1 to max_keys_per_lock valid keys, none twice,
/// several only for an exclusive lock, and for a fenced lock no key that is another's
/// fencing counter.
std::string check_lock_keys(const std::vector<std::string>& keys, const lock_options& options);
std::string check_renewal_options(const renewal_options& options);
/// Also parses the node addresses into `addresses`.
std::string check_client_config(const client_config& config, std::vector<node_address>& addresses);

} // namespace redlock::detail

#endif
