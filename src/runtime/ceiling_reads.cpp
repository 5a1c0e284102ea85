#include "runtime/ceiling_reads.hpp"

#include <algorithm>
#include <string_view>

namespace redlock::detail {

ceiling_reads::ceiling_reads(std::size_t nodes)
    : rounds_(nodes) {}

void ceiling_reads::begin(std::size_t node, clock::time_point started, clock::time_point now) {
    auto& r = rounds_.at(node);
    r.started = started;
    r.sent_at = now;
    r.id = ++next_id_;
    r.readings.assign(rounds_.size(), std::nullopt);
    r.outstanding.assign(rounds_.size(), 0);
    r.odd_reported.assign(rounds_.size(), false);
    r.largest_known = std::chrono::milliseconds{0};
    r.above_maximum = false;
}

void ceiling_reads::read_again(std::size_t node, clock::time_point now) {
    rounds_.at(node).sent_at = now;
}

void ceiling_reads::sent(std::size_t node, std::size_t reader) {
    ++rounds_.at(node).outstanding.at(reader);
}

std::uint64_t ceiling_reads::tag(std::size_t node, std::size_t reader) const {
    // 16 bits each for the nodes (client_impl reads ceilings only with fewer than 2^16
    // nodes), the rest for the round.
    return (rounds_.at(node).id << 32) | (std::uint64_t(node) << 16) | std::uint64_t(reader);
}

void ceiling_reads::on_reply(std::uint64_t tag, const node_reply& reply) {
    const auto node = static_cast<std::size_t>((tag >> 16) & 0xffff);
    const auto reader = static_cast<std::size_t>(tag & 0xffff);
    if (node >= rounds_.size() || reader >= rounds_.size()) {
        return;
    }
    auto& r = rounds_[node];
    if (r.id != (tag >> 32)) {
        return; // a round since replaced by a newer restart
    }
    if (r.outstanding[reader] > 0) {
        --r.outstanding[reader];
    }
    ceiling_reading reading;
    if (reply.error || !reply.reply || reply.reply->type != REDIS_REPLY_ARRAY) {
        reading.what = ceiling_reading::kind::odd;
        reading.note =
            "ceiling not read: " +
            (reply.message.empty() ? std::string("unexpected reply") : std::string(reply.message));
    } else {
        std::vector<std::string_view> items;
        items.reserve(reply.reply->elements);
        bool strings = true;
        for (std::size_t i = 0; i < reply.reply->elements; ++i) {
            const auto* e = reply.reply->element[i];
            if (e->type != REDIS_REPLY_STRING) {
                strings = false;
                break;
            }
            items.emplace_back(e->str, e->len);
        }
        if (strings) {
            reading = parse_ceiling(items);
        } else {
            reading.what = ceiling_reading::kind::odd;
            reading.note = "ceiling read answered in an unexpected form";
        }
    }
    if (reading.what == ceiling_reading::kind::known) {
        r.largest_known = std::max(r.largest_known, reading.ttl);
    }
    r.readings[reader] = std::move(reading);
}

} // namespace redlock::detail
