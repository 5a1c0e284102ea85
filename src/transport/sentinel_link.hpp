#ifndef REDLOCK_SRC_TRANSPORT_SENTINEL_LINK_HPP
#define REDLOCK_SRC_TRANSPORT_SENTINEL_LINK_HPP

#include "transport/forwarding_link.hpp"
#include "transport/sentinel_watch.hpp"

#include <memory>

namespace redlock::detail {

/// The link of a `redis-sentinel://` node: its node_connection, and the sentinel_watch that
/// tells it of failovers as the Sentinels announce them (node_connection::primary_moved).
/// The watch starts with the link's first use, as connections are made on first use, and
/// stops with the link.
class sentinel_link final : public forwarding_link {
public:
    sentinel_link(std::unique_ptr<node_link> connection, std::unique_ptr<sentinel_watch> watch)
        : forwarding_link(std::move(connection))
        , watch_(std::move(watch)) {}

    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override {
        watch_->start();
        forwarding_link::send(cmd, target, tag);
    }
    void warm_up() override {
        watch_->start();
        forwarding_link::warm_up();
    }
    void shutdown(std::chrono::milliseconds drain) override {
        watch_->shutdown();
        forwarding_link::shutdown(drain);
    }

private:
    std::unique_ptr<sentinel_watch> watch_;
};

} // namespace redlock::detail

#endif
