// Must not compile: with_lock's work returns an int, not an awaitable. The test around it
// (tests/CMakeLists.txt) expects the static_assert's text, not "incomplete type awaited<int>".
#include <redlock/with_lock.hpp>

boost::asio::awaitable<void> misuse(redlock::client& c) {
    co_await redlock::with_lock(c, "k", {}, {}, [](const redlock::watchdog&) { return 42; });
}
