#ifndef REDLOCK_SRC_TRANSPORT_ASIO_TIME_SOURCE_HPP
#define REDLOCK_SRC_TRANSPORT_ASIO_TIME_SOURCE_HPP

#include "core/time_source.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>

namespace redlock::detail {

/// steady_clock, and alarms on the client's strand. All the alarms of one source share one
/// steady_timer, set for the earliest of them and moved only ever earlier: the timeouts
/// armed and cancelled on every round (an operation's, a connection's reply patience) rarely
/// fire, and each of them would otherwise cost a timer call and a cancelled wait to run.
class asio_time_source final : public time_source {
public:
    class alarm_queue;

    explicit asio_time_source(boost::asio::any_io_executor strand);
    ~asio_time_source() override;
    asio_time_source(const asio_time_source&) = delete;
    asio_time_source& operator=(const asio_time_source&) = delete;

    clock::time_point now() const override { return clock::now(); }
    /// The alarms may outlive this source.
    std::unique_ptr<alarm> make_alarm() override;

private:
    std::shared_ptr<alarm_queue> queue_;
};

} // namespace redlock::detail

#endif
