#ifndef REDLOCK_SRC_CLIENT_CLIENT_ACCESS_HPP
#define REDLOCK_SRC_CLIENT_CLIENT_ACCESS_HPP

#include "runtime/client_impl.hpp"

#include "redlock/client.hpp"

namespace redlock::detail {

/// Builds a public client over a client_impl of one's own making: the deterministic
/// simulation runs the real client on simulated links and clocks through this.
struct client_access {
    static client make(client::executor_type executor, std::shared_ptr<client_impl> impl) {
        return client(std::move(executor), std::move(impl));
    }
    static const std::shared_ptr<client_impl>& impl(const client& c) { return c.impl_; }
};

} // namespace redlock::detail

#endif
