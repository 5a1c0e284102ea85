#ifndef REDLOCK_SRC_RECREATE_WHERE_HPP
#define REDLOCK_SRC_RECREATE_WHERE_HPP

#include "core/validity.hpp"

#include <optional>
#include <vector>

namespace redlock::detail {

/// Where a renewal with recreate_missing may write a missing key back: on the nodes whose
/// link found another server behind the address (`restarted_at`: the break before the
/// connection that found it, or before an earlier one that broke unidentified; a command
/// sent after it may have reached the new server, none sent before it did) after the key was last
/// confirmed there (`confirmed_at`: for the last round whose write or extend may have
/// landed there, the later of its start and such a restart placed meanwhile;
/// renewal_runner). A key missing on a node that did not restart since was deleted on
/// purpose (`release --force`, an operator's DEL), expired or evicted: an eviction does not
/// say which keys went, so it is no reason either. Writing it back would undo a forced
/// release without anybody being told, so the renewal fails there instead and the holder
/// hears of the loss once a quorum says so. A node whose restarts are unknown
/// (`restarted_at` empty) is never written back.
std::vector<bool> recreate_where(const std::vector<std::optional<clock::time_point>>& restarted_at,
                                 const std::vector<clock::time_point>& confirmed_at);

} // namespace redlock::detail

#endif
