#include "transport/commands.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace redlock::detail {

std::string wire_bytes(const std::string_view* args, std::size_t count) {
    boost::container::small_vector<const char*, 16> argv(count);
    boost::container::small_vector<std::size_t, 16> lengths(count);
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        argv[i] = args[i].data();
        lengths[i] = args[i].size();
        total += args[i].size();
    }
    // hiredis 0.14 counts a command's bytes in an int and formats a length as an unsigned
    // int: anything near 2 GiB would be corrupted, not refused. The library's commands
    // are kilobytes (keys are capped at 1 KiB); this keeps a bug from becoming a bad write.
    if (total > std::numeric_limits<int>::max() / 2) {
        throw std::length_error("redlock: a command of " + std::to_string(total) + " bytes");
    }
    // The sds form, not redisFormatCommandArgv: that one writes every length with sprintf;
    // sds formats them itself, in a fifth fewer instructions per command (callgrind).
    sds formatted = nullptr;
    const int length =
        redisFormatSdsCommandArgv(&formatted, static_cast<int>(count), argv.data(), lengths.data());
    const std::unique_ptr<char, void (*)(sds)> owned(formatted, redisFreeSdsCommand);
    if (length < 0) {
        throw std::bad_alloc();
    }
    return std::string(formatted, static_cast<std::size_t>(length));
}

std::string wire_bytes(const command& cmd) {
    return wire_bytes(cmd.args.data(), cmd.args.size());
}

command set_nx_px(std::string_view key, std::string_view token, std::string_view ttl_text) {
    return {{"SET", key, token, "NX", "PX", ttl_text}};
}

command ceiling_raise_call(std::string_view ceiling_key, std::string_view ttl_text,
                           std::string_view keep_text) {
    return {{"EVAL", ttl_ceiling_raise_script.text, "1", ceiling_key, ttl_text, keep_text}};
}

std::string kind_argument(const lock_options& options) {
    switch (options.mode) {
    case lock_mode::shared:
        return "shared";
    case lock_mode::permit:
        return std::to_string(options.permits);
    case lock_mode::exclusive:
        break;
    }
    return {};
}

std::string announcement_text(std::uint64_t random) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(random));
    return text;
}

std::string_view small_decimal(std::size_t n) {
    // numkeys of the largest call: a fenced lock's keys and their counters.
    static const auto table = [] {
        std::vector<std::string> t;
        for (std::size_t i = 0; i <= 2 * max_keys_per_lock; ++i) {
            t.push_back(std::to_string(i));
        }
        return t;
    }();
    return table.at(n);
}

command script_call(const script& s, bool as_eval, script_keys keys,
                    std::initializer_list<std::string_view> argv) {
    command c;
    c.args.reserve(3 + keys.locks.size() + keys.counters.size() + argv.size());
    c.args.push_back(as_eval ? "EVAL" : "EVALSHA");
    c.args.push_back(as_eval ? s.text : s.sha1);
    c.args.push_back(small_decimal(keys.locks.size() + keys.counters.size()));
    c.args.insert(c.args.end(), keys.locks.begin(), keys.locks.end());
    c.args.insert(c.args.end(), keys.counters.begin(), keys.counters.end());
    c.args.insert(c.args.end(), argv.begin(), argv.end());
    return c;
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

classified classify_refusal_ttl(const node_reply& r) {
    const classified held{node_outcome::refused, {}, false};
    if (r.error || !r.reply || r.reply->type != REDIS_REPLY_INTEGER || r.reply->integer != -1) {
        return held;
    }
    return {node_outcome::failed, make_error_code(errc::lock_mismatch), false};
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

classified classify_acquire_script_reply(const node_reply& r) {
    bool handled = false;
    auto c = common_script(r, handled);
    if (handled) {
        if (r.reply && r.reply->type == REDIS_REPLY_ERROR &&
            r.message.starts_with("REDLOCK_MISMATCH ")) {
            c.error = make_error_code(errc::lock_mismatch);
        }
        return c;
    }
    if (r.reply->type == REDIS_REPLY_NIL) {
        return {node_outcome::refused, {}, false};
    }
    if (r.reply->type == REDIS_REPLY_INTEGER && r.reply->integer == 1) {
        return {node_outcome::granted, {}, false};
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
