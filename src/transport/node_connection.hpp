#ifndef REDLOCK_SRC_NODE_CONNECTION_HPP
#define REDLOCK_SRC_NODE_CONNECTION_HPP

#include "transport/hiredis_adapter.hpp"
#include "transport/node_link.hpp"

#include "redlock/config.hpp"
#include "redlock/error.hpp"
#include "redlock/node_address.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <hiredis/async.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

/// One Redis master: a single hiredis connection, (re)connected on demand with AUTH and
/// SELECT (host names resolved in the background first, never on the strand), on which every
/// command of every operation is pipelined in send order. That order is what makes a cleanup safe:
/// Redis runs one connection's commands in sequence, so a compare-and-delete can never overtake the
/// SET it cleans up.
///
/// Every command sent gets exactly one reply_target::on_reply, possibly long after its
/// operation stopped caring. Lives on (and must only be used from) a strand.
class node_connection final : public node_link {
public:
    node_connection(boost::asio::any_io_executor strand, node_address address,
                    const client_config& config);
    ~node_connection() override;
    node_connection(const node_connection&) = delete;
    node_connection& operator=(const node_connection&) = delete;

    void send(const command& cmd, const std::shared_ptr<reply_target>& target,
              std::uint64_t tag) override;
    void shutdown(std::chrono::milliseconds drain) override;

    /// When the server was last (re)started, as far as INFO server told us on connect;
    /// empty until known. A changed run_id counts as a restart at the moment it was seen.
    std::optional<clock::time_point> started_at() const noexcept override { return started_at_; }
    std::string_view run_id() const noexcept override { return run_id_; }
    std::string_view restarts_undetectable() const noexcept override { return info_refused_; }

    const node_address& address() const noexcept override { return address_; }

private:
    enum class state { idle, resolving, connecting, connected, backing_off, shut_down };

    struct pending {
        std::shared_ptr<reply_target> target; ///< null for the AUTH/SELECT handshake
        std::uint64_t tag;
    };
    /// A command waiting for the host name or the handshake, with its own copy of the arguments.
    struct held_back {
        std::vector<std::string> args;
        std::shared_ptr<reply_target> target;
        std::uint64_t tag;
    };

    static void on_reply_thunk(redisAsyncContext* context, void* reply, void* self);
    static void on_connect_thunk(const redisAsyncContext* context, int status);
    static void on_disconnect_thunk(const redisAsyncContext* context, int status);

    bool connect();
    void resolve();
    void on_resolved(const boost::system::error_code& ec,
                     const boost::asio::ip::tcp::resolver::results_type& results);
    bool connect_to(const std::string& host);
    void hold_back(const command& cmd, const std::shared_ptr<reply_target>& target,
                   std::uint64_t tag);
    void issue(const command& cmd, const std::shared_ptr<reply_target>& target, std::uint64_t tag);
    void release_held_back();
    /// False when hiredis could not queue a step.
    bool queue_handshake();
    void let_go(std::shared_ptr<reply_target> target);
    void on_reply(redisReply* reply);
    void on_handshake_reply(const redisReply* reply, std::uint64_t step);
    void on_server_info(const redisReply* reply);
    /// The context is gone or going: no sends on it from now on.
    void closed(std::string why);
    /// closed(), then frees the context: its pending callbacks run with no reply (inside a
    /// hiredis callback the free waits until it returns).
    void drop_connection(std::string why);
    void fail_later(const std::shared_ptr<reply_target>& target, std::uint64_t tag, errc error,
                    std::string message);
    void log(log_level level, const std::string& message) const;

    boost::asio::any_io_executor strand_;
    node_address address_;
    const client_config& config_;
    std::string display_;

    state state_ = state::idle;
    redisAsyncContext* context_ = nullptr;
    std::shared_ptr<hiredis_adapter> adapter_;
    std::deque<pending> pending_;
    // Commands pipelined behind a failing AUTH would run as the default user, and behind a
    // failing SELECT in the wrong database: until the handshake succeeds they wait here.
    std::deque<held_back> held_back_;
    std::size_t handshake_outstanding_ = 0;
    std::string last_error_;
    unsigned consecutive_failures_ = 0;
    // Resolving and connecting share one deadline; a resolve or its timer from an earlier
    // connect() recognises itself as stale by its attempt number.
    std::uint64_t connect_attempts_ = 0;
    std::chrono::steady_clock::time_point connect_deadline_;
    std::string run_id_;
    // Set while the latest INFO server was refused (an ACL user without +info), else empty.
    std::string info_refused_;
    std::optional<std::chrono::steady_clock::time_point> started_at_;
    bool destroying_ = false;
    // A resolve under way when this object goes completes later anyway (getaddrinfo cannot
    // be interrupted) and may even report success: its handler checks this first.
    std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
    boost::asio::steady_timer connect_timer_;
    boost::asio::steady_timer backoff_timer_;
    boost::asio::ip::tcp::resolver resolver_;
};

} // namespace redlock::detail

#endif
