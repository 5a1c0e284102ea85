#ifndef REDLOCK_SRC_TOKEN_HPP
#define REDLOCK_SRC_TOKEN_HPP

#include <array>
#include <cstddef>
#include <string>

namespace redlock::detail {

/// Lock tokens: 128 bits from the kernel's CSPRNG (getrandom), hex encoded. Reads the
/// kernel in blocks so that a token costs no system call on average. Not thread-safe:
/// one per client, used on the client's strand.
class token_source {
public:
    static constexpr std::size_t token_bytes = 16;

    std::string next();

private:
    void refill();

    std::array<unsigned char, 4096> pool_{};
    std::size_t used_ = pool_.size();
};

} // namespace redlock::detail

#endif
