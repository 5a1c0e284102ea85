#ifndef REDLOCK_SRC_TRANSPORT_ASIO_TIME_SOURCE_HPP
#define REDLOCK_SRC_TRANSPORT_ASIO_TIME_SOURCE_HPP

#include "core/time_source.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace redlock::detail {

/// steady_clock, and steady_timers on the client's strand.
class asio_time_source final : public time_source {
public:
    explicit asio_time_source(boost::asio::any_io_executor strand);

    clock::time_point now() const override { return clock::now(); }
    std::unique_ptr<alarm> make_alarm() override;

private:
    boost::asio::any_io_executor strand_;
};

} // namespace redlock::detail

#endif
