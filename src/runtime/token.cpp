#include "runtime/token.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <mutex>

namespace redlock::detail {

namespace {

std::atomic<std::uint64_t> fork_generation{1};

/// The current fork generation: 1 in the first process, one more in every child of a fork().
std::uint64_t current_fork_generation() {
    static std::once_flag registered;
    std::call_once(registered, [] {
        ::pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); });
    });
    return fork_generation.load();
}

} // namespace

void token_source::refill() {
    std::size_t filled = 0;
    while (filled < pool_.size()) {
        const ssize_t got = ::getrandom(pool_.data() + filled, pool_.size() - filled, 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            // Predictable tokens would let one client release another's lock: there is no
            // safe way to continue.
            std::fprintf(stderr, "redlock: getrandom failed: %s\n", std::strerror(errno));
            std::abort();
        }
        filled += static_cast<std::size_t>(got);
    }
    used_ = 0;
    filled_in_ = current_fork_generation();
}

std::string token_source::next() {
    if (pool_.size() - used_ < token_bytes || filled_in_ != current_fork_generation()) {
        refill();
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string token(token_bytes * 2, '\0');
    for (std::size_t i = 0; i < token_bytes; ++i) {
        const unsigned char byte = pool_[used_ + i];
        token[2 * i] = hex[byte >> 4];
        token[2 * i + 1] = hex[byte & 0x0f];
    }
    // Each byte is handed out once.
    std::memset(pool_.data() + used_, 0, token_bytes);
    used_ += token_bytes;
    return token;
}

} // namespace redlock::detail
