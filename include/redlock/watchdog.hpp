#ifndef REDLOCK_WATCHDOG_HPP
#define REDLOCK_WATCHDOG_HPP

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace redlock {

namespace detail {
struct watchdog_state;
}

/// Keeps a held lock alive: renews it with compare-and-pexpire on every node (a renewal
/// counts only with a quorum, its validity measured from its own start) and tells the holder,
/// once, when the lock can no longer be trusted.
///
/// The loss handler receives errc::lock_lost when a renewal found our token gone on a majority
/// or the validity deadline passed without a successful renewal (including when the process
/// only woke up after it), and errc::cancelled when the client shut down, which ends renewal.
/// It runs on the client's strand: post from it to your own executor, and do not block.
///
/// Empty when `options` can be used, else what is wrong with them: an interval or
/// retry_delay that is negative or over max_ttl.
REDLOCK_API std::string check_renewal_options(const renewal_options& options);

/// All member functions may be called from any thread.
class REDLOCK_API watchdog {
public:
    /// The monotonic clock validity is measured on.
    using clock = std::chrono::steady_clock;
    /// Called once with the reason when the lock can no longer be trusted (see above). A
    /// handler taking std::error_code works too (the error converts).
    using loss_handler = std::function<void(boost::system::error_code)>;

    /// Starts renewing `held`, which must have been acquired through `owner`.
    /// @throws std::system_error with errc::invalid_argument when check_renewal_options()
    ///         finds `options` unusable, or `held`'s ttl is above the owner's
    ///         client_config::fleet_max_ttl.
    watchdog(client& owner, const lock& held, renewal_options options = {},
             loss_handler on_loss = {});
    /// Stops renewing (without releasing). A renewal already sent still completes first on
    /// every node, before anything sent later. Never throws.
    ~watchdog();
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;

    /// The monotonic deadline until which the lock is valid, as of the last renewal.
    clock::time_point valid_until() const noexcept;
    /// Whether the loss handler was (or is being) called.
    bool lost() const noexcept;
    /// Successful renewals so far.
    std::uint64_t renewals() const noexcept;
    /// The lock with its current validity: what to release or hand on.
    lock current() const;

    /// Stops renewing; completes (signature `void()`) once no renewal is in flight, so that a
    /// release started afterwards can never be followed by a renewal.
    template <typename CompletionToken>
    auto async_stop(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void()>(
            [this](auto handler) { start_stop(std::move(handler)); }, token);
    }

private:
    void start_stop(boost::asio::any_completion_handler<void()> handler);

    std::shared_ptr<detail::watchdog_state> state_;
};

} // namespace redlock

#endif
