#include "transport/commands.hpp"

#include "redlock/error.hpp"

#include <charconv>

namespace redlock::detail {

command set_nx_px(std::string_view key, std::string_view token, std::string_view ttl_text) {
    return {{"SET", key, token, "NX", "PX", ttl_text}, 6};
}

command script_call(const script& s, bool as_eval, std::string_view key, std::string_view token,
                    std::string_view first, std::string_view second) {
    command c{
        {as_eval ? "EVAL" : "EVALSHA", as_eval ? s.text : s.sha1, "1", key, token, first, second},
        5};
    c.count += first.empty() ? 0 : (second.empty() ? 1 : 2);
    return c;
}

command fence_script_call(const script& s, bool as_eval, std::string_view key,
                          std::string_view counter_key, std::string_view token,
                          std::string_view value) {
    return {{as_eval ? "EVAL" : "EVALSHA", as_eval ? s.text : s.sha1, "2", key, counter_key, token,
             value},
            7};
}

namespace {

classified failure(errc e) {
    return {node_outcome::failed, make_error_code(e), false};
}

/// Everything but a well-formed answer; `handled` is false when the reply needs a
/// command-specific look.
classified common(const node_reply& r, bool& handled) {
    handled = true;
    if (r.error) {
        return {node_outcome::failed, r.error, false};
    }
    if (r.reply->type == REDIS_REPLY_ERROR) {
        return failure(errc::server_error);
    }
    handled = false;
    return {};
}

} // namespace

classified classify_set_reply(const node_reply& r) {
    bool handled = false;
    auto c = common(r, handled);
    if (handled) {
        return c;
    }
    if (r.reply->type == REDIS_REPLY_STATUS &&
        std::string_view(r.reply->str, r.reply->len) == "OK") {
        return {node_outcome::granted, {}, false};
    }
    if (r.reply->type == REDIS_REPLY_NIL) {
        return {node_outcome::refused, {}, false};
    }
    return failure(errc::unexpected_reply);
}

namespace {

/// common(), and NOSCRIPT recognised.
classified common_script(const node_reply& r, bool& handled) {
    auto c = common(r, handled);
    if (handled && r.reply && r.reply->type == REDIS_REPLY_ERROR &&
        r.message.starts_with("NOSCRIPT")) {
        c.noscript = true;
    }
    return c;
}

} // namespace

classified classify_script_reply(const node_reply& r) {
    bool handled = false;
    auto c = common_script(r, handled);
    if (handled) {
        return c;
    }
    if (r.reply->type == REDIS_REPLY_INTEGER && (r.reply->integer == 0 || r.reply->integer == 1)) {
        return {r.reply->integer == 1 ? node_outcome::granted : node_outcome::refused, {}, false};
    }
    return failure(errc::unexpected_reply);
}

classified classify_fence_acquire_reply(const node_reply& r) {
    bool handled = false;
    auto c = common_script(r, handled);
    if (handled) {
        return c;
    }
    if (r.reply->type == REDIS_REPLY_NIL) {
        return {node_outcome::refused, {}, false};
    }
    if (r.reply->type != REDIS_REPLY_STRING) {
        return failure(errc::unexpected_reply);
    }
    // A counter someone else wrote may be anything: only a canonical decimal counts.
    const std::string_view text(r.reply->str, r.reply->len);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
        (text.size() > 1 && text.front() == '0')) {
        return failure(errc::unexpected_reply);
    }
    classified granted{node_outcome::granted, {}, false};
    granted.counter = value;
    return granted;
}

} // namespace redlock::detail
