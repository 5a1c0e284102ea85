#ifndef REDLOCK_SRC_RENEWAL_RUNNER_HPP
#define REDLOCK_SRC_RENEWAL_RUNNER_HPP

#include "core/renewal_fsm.hpp"
#include "operations/completion.hpp"
#include "runtime/client_impl.hpp"

#include "redlock/watchdog.hpp"

#include <boost/asio/bind_executor.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace redlock::detail {

/// What a watchdog and its runner share: written on the strand, read from any thread.
struct watchdog_state {
    /// The lock renewed, sharing its keys, token and options with the holder's copy; its
    /// validity is the one it was granted with (the current one is `valid_until`).
    lock held;
    std::atomic<clock::rep> valid_until{0};
    std::atomic<bool> lost{false};
    std::atomic<std::uint64_t> renewals{0};
    watchdog::loss_handler on_loss;
    // Weak: a watchdog may outlive its client, and must then touch nothing of it. The
    // runner is kept alive by its own pending timer or extend round.
    std::weak_ptr<client_impl> impl;
    std::weak_ptr<class renewal_runner> runner;
};

/// Carries out what renewal_fsm decides: waits (on the client's shared renewal_timers) and
/// extend rounds, on the client's strand.
class renewal_runner final : public cancellable,
                             public timed,
                             public std::enable_shared_from_this<renewal_runner> {
public:
    renewal_runner(std::shared_ptr<client_impl> impl, std::shared_ptr<watchdog_state> state,
                   renewal_options options);
    ~renewal_runner();

    void start();
    /// Client shutdown: renewal ends and the holder hears errc::cancelled.
    void cancel() override;
    void stop(boost::asio::any_completion_handler<void()> done);

private:
    void on_due() override;
    void wait_until(clock::time_point at);
    void cancel_wait();
    void act(const renewal_action& action);
    void extend();
    void declare_lost(std::error_code why);
    /// The nodes where the round sent at `sent` may have written or extended the key (all of
    /// them when `votes` is empty: the acquire's, at the start) hold it as of then. `rewrote`:
    /// the nodes the round asked to write the key back.
    void confirm_landed(const std::vector<node_vote>& votes, const std::vector<bool>& rewrote,
                        clock::time_point sent);
    void finish_stop();

    std::shared_ptr<client_impl> impl_;
    std::shared_ptr<watchdog_state> state_;
    renewal_fsm fsm_;
    std::optional<renewal_timers::entry> waiting_;
    std::weak_ptr<cancellable> in_flight_;
    std::vector<completion<void()>> stop_waiters_;
    /// With recreate_missing (else empty): per node, the start of the last round that wrote
    /// or extended the key there; only a node that forgot keys after that gets it written back.
    std::vector<clock::time_point> confirmed_at_;
    bool over_ = false;
};

} // namespace redlock::detail

#endif
