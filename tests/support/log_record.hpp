#ifndef REDLOCK_TESTS_SUPPORT_LOG_RECORD_HPP
#define REDLOCK_TESTS_SUPPORT_LOG_RECORD_HPP

#include <redlock/config.hpp>

#include <mutex>
#include <string>
#include <string_view>

namespace redlock::test {

/// Every line a client logs, warnings marked "warning: ", to search afterwards (for a
/// node's error, a warning that must be given, a password that must not appear).
class log_record {
public:
    logger sink() {
        return [this](log_level level, std::string_view line) {
            std::lock_guard guard(mutex_);
            text_.append(level == log_level::warning ? "warning: " : "").append(line).append("\n");
        };
    }
    std::string text() {
        std::lock_guard guard(mutex_);
        return text_;
    }

private:
    std::mutex mutex_;
    std::string text_;
};

} // namespace redlock::test

#endif
