#include "redlock/fencing.hpp"

#include "transport/scripts.hpp"

namespace redlock {

std::string fencing_counter_key(std::string_view lock_key) {
    // Without braces, wrapping the key makes all of it the hash tag. With braces, the
    // key's own tag (if it has one) is kept by appending.
    if (lock_key.find_first_of("{}") == std::string_view::npos) {
        return std::string("{").append(lock_key).append("}:fence");
    }
    return std::string(lock_key).append(":fence");
}

fenced_call_script fenced_call() noexcept {
    return {detail::fenced_call_script.text, detail::fenced_call_script.sha1};
}

} // namespace redlock
