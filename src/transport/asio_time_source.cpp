#include "transport/asio_time_source.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <utility>

namespace redlock::detail {

namespace {

/// A cancelled steady_timer wait whose handler is already queued still runs, with success:
/// the generation number recognises it as belonging to an earlier arming.
class asio_alarm final : public alarm {
public:
    explicit asio_alarm(const boost::asio::any_io_executor& strand)
        : timer_(strand) {}

    void arm(clock::time_point at, std::function<void()> fn) override {
        const auto generation = ++generation_;
        fn_ = std::move(fn);
        timer_.expires_at(at);
        timer_.async_wait([this, generation, alive = std::weak_ptr<const bool>(alive_)](
                              const boost::system::error_code& ec) {
            if (ec || alive.expired() || generation != generation_ || !fn_) {
                return;
            }
            // The function may re-arm or destroy this alarm: take it out first.
            auto fn = std::exchange(fn_, nullptr);
            fn();
        });
    }

    void cancel() override {
        ++generation_;
        timer_.cancel();
        // The function may own whoever owns this alarm: it goes last, when nothing of this
        // alarm is touched any more.
        const auto dropped = std::exchange(fn_, nullptr);
    }

private:
    boost::asio::steady_timer timer_;
    std::function<void()> fn_;
    std::uint64_t generation_ = 0;
    std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
};

} // namespace

asio_time_source::asio_time_source(boost::asio::any_io_executor strand)
    : strand_(std::move(strand)) {}

std::unique_ptr<alarm> asio_time_source::make_alarm() {
    return std::make_unique<asio_alarm>(strand_);
}

} // namespace redlock::detail
