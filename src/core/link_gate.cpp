#include "core/link_gate.hpp"

namespace redlock::detail {

bool attempt_may_go(std::size_t ready, std::size_t connecting, std::size_t quorum) noexcept {
    // Waiting cannot bring a quorum when even every connection on its way would fall short:
    // the attempt fails the same either way, and sooner.
    return ready >= quorum || ready + connecting < quorum;
}

} // namespace redlock::detail
