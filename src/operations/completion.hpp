#ifndef REDLOCK_SRC_COMPLETION_HPP
#define REDLOCK_SRC_COMPLETION_HPP

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <utility>

namespace redlock::detail {

/// The user's handler of one operation: keeps its executor busy while the operation
/// runs, hooks its cancellation slot, and invokes it exactly once on its own executor.
template <typename Signature>
class completion {
public:
    completion(boost::asio::any_completion_handler<Signature> handler,
               const boost::asio::any_io_executor& fallback)
        : handler_(std::move(handler))
        , fallback_(fallback)
        , work_(boost::asio::prefer(boost::asio::get_associated_executor(handler_, fallback),
                                    boost::asio::execution::outstanding_work.tracked)) {}

    /// `cancel` runs on the emitting thread: it must only post to the operation's strand.
    template <typename Cancel>
    void on_cancellation(Cancel cancel) {
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) {
            slot.assign([cancel = std::move(cancel)](boost::asio::cancellation_type) { cancel(); });
        }
    }

    bool done() const noexcept { return !handler_; }

    /// Invokes the handler on its executor, never from inside this call: not inside the
    /// initiating function, and not inside a reply being parsed, where a handler that throws
    /// would unwind through the connection's own code.
    template <typename... Args>
    void complete(Args&&... args) {
        if (!handler_) {
            return;
        }
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) {
            slot.clear();
        }
        auto work = std::move(work_);
        auto invoke = [handler = std::move(handler_),
                       ... values = std::forward<Args>(args)]() mutable {
            std::move(handler)(std::move(values)...);
        };
        // A type-erased completion executor cannot promise blocking.never itself: hop
        // through the client's executor, which can.
        boost::asio::post(fallback_,
                          [work = std::move(work), invoke = std::move(invoke)]() mutable {
                              boost::asio::dispatch(work, std::move(invoke));
                          });
    }

private:
    boost::asio::any_completion_handler<Signature> handler_;
    boost::asio::any_io_executor fallback_;
    boost::asio::any_completion_executor work_;
};

} // namespace redlock::detail

#endif
