#ifndef REDLOCK_SRC_TRANSPORT_REPLY_PIPELINE_HPP
#define REDLOCK_SRC_TRANSPORT_REPLY_PIPELINE_HPP

#include "transport/node_reply.hpp"
#include "transport/reply_reader.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::detail {

/// A command written to a connection and not answered yet.
struct sent_command {
    /// Who gets the reply; null for the connection's own handshake steps.
    std::shared_ptr<reply_target> target;
    std::uint64_t tag = 0;
    std::chrono::steady_clock::time_point sent_at;
};

/// Matches what a node sends on one connection to the commands sent on it, in order:
/// Redis answers one connection's commands in sequence, so the n-th reply belongs to the
/// n-th command. Anything else (a reply to no command, malformed or oversized input) breaks
/// the stream, and the connection carrying it must go. Sans-io.
class reply_pipeline {
public:
    /// Gets each command with its reply; `reply.message` is the server's error text made
    /// printable, without any of the secrets given at construction. Runs inside consume(); returns
    /// false to stop there (the connection is being dropped), leaving what else was read unparsed.
    using deliver_fn = std::function<bool(sent_command&& command, const node_reply& reply)>;

    /// `secrets`: see configured_secrets().
    reply_pipeline(std::size_t max_reply_size, std::vector<std::string> secrets);

    void expect(sent_command command) { sent_.push_back(std::move(command)); }

    /// On a subscriber connection: sees every reply first and returns true for a pushed
    /// message, which answers no command.
    using push_fn = std::function<bool(const redisReply& reply)>;
    void take_pushes(push_fn push) { push_ = std::move(push); }

    /// Feeds what the node sent and delivers every reply it completes. Returns empty while
    /// the stream is sound, else why it broke (the commands still waiting stay here, and
    /// every later call returns the same reason).
    std::string consume(std::string_view bytes, const deliver_fn& deliver);

    bool idle() const noexcept { return sent_.empty(); }
    std::size_t waiting() const noexcept { return sent_.size(); }
    /// The command waiting longest; only when !idle().
    const sent_command& oldest() const { return sent_.front(); }
    /// Every command still waiting, oldest first, leaving none.
    std::deque<sent_command> take_waiting() { return std::exchange(sent_, {}); }

private:
    reply_reader reader_;
    std::vector<std::string> secrets_;
    std::deque<sent_command> sent_;
    push_fn push_;
    std::string broken_;
};

} // namespace redlock::detail

#endif
