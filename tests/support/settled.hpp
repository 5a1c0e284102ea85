#ifndef REDLOCK_TESTS_SUPPORT_SETTLED_HPP
#define REDLOCK_TESTS_SUPPORT_SETTLED_HPP

#include <boost/system/error_code.hpp>

#include <future>
#include <memory>
#include <utility>

namespace redlock::test {

/// A completion handler that fulfils a future with the error and the result, never throwing:
/// what `asio::as_tuple(asio::use_future)` would give, which Boost 1.81 cannot compile.
///
///     settled<acquire_result> acquired;
///     client.async_acquire(key, options, acquired);
///     auto [error, result] = acquired.get();
template <typename Result>
class settled {
public:
    using outcome = std::pair<boost::system::error_code, Result>;

    settled()
        : promise_(std::make_shared<std::promise<outcome>>())
        , future_(std::make_shared<std::shared_future<outcome>>(promise_->get_future())) {}

    void operator()(boost::system::error_code error, Result result) {
        promise_->set_value({error, std::move(result)});
    }

    outcome get() const { return future_->get(); }
    bool ready() const {
        return future_->wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }

private:
    std::shared_ptr<std::promise<outcome>> promise_;
    std::shared_ptr<std::shared_future<outcome>> future_;
};

} // namespace redlock::test

#endif
