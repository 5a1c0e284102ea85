#ifndef REDLOCK_SRC_RUNTIME_TOKEN_HPP
#define REDLOCK_SRC_RUNTIME_TOKEN_HPP

#include <array>
#include <cstddef>
#include <string>

#include <cstdint>

namespace redlock::detail {

/// Lock tokens: 128 bits from the kernel's CSPRNG (getrandom), hex encoded. Reads the
/// kernel in blocks so that a token costs no getrandom call on average. Safe across fork():
/// a child never hands out bytes of the pool it inherited. Not thread-safe: one per client,
/// used on the client's strand.
class token_source {
public:
    static constexpr std::size_t token_bytes = 16;

    std::string next();

private:
    void refill();

    std::array<unsigned char, 4096> pool_{};
    std::size_t used_ = pool_.size();
    // The fork generation the pool was filled in. A fork()ed child inherits the pool: drawing
    // from it would give the child the parent's next tokens, and two holders one token. A
    // generation counted by a pthread_atfork child handler, not the pid: a descendant can be
    // given the pid of an ancestor that has exited.
    std::uint64_t filled_in_ = 0;
};

} // namespace redlock::detail

#endif
