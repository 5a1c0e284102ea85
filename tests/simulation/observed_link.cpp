#include "observed_link.hpp"

#include "history.hpp"

#include "transport/scripts.hpp"

#include "redlock/error.hpp"

#include <cstdlib>

namespace redlock::sim {

namespace {

/// A script command's reply on its way to the operation that sent it.
class observed_reply final : public detail::reply_target {
public:
    observed_reply(std::shared_ptr<detail::reply_target> inner, history& h, int client, int node,
                   std::shared_ptr<const std::vector<std::string>> args, real_ns sent_at)
        : inner_(std::move(inner))
        , h_(h)
        , client_(client)
        , node_(node)
        , args_(std::move(args))
        , sent_at_(sent_at) {}

    void on_reply(std::uint64_t tag, const detail::node_reply& reply) override {
        if (!reply.error && reply.reply && reply.reply->type == REDIS_REPLY_ERROR &&
            reply.message.starts_with("REDLOCK_MISMATCH")) {
            h_.mismatch_heard(client_, node_, *args_, sent_at_);
        }
        if (reply.error == errc::cancelled && reply.message.starts_with("client shut down; ")) {
            // The drain of a closed client ended before this command was answered.
            if (const auto token = released_token()) {
                h_.release_cut_at_close(client_, *token, sent_at_);
            }
        }
        inner_->on_reply(tag, reply);
    }

private:
    std::optional<std::string> released_token() const {
        const auto& a = *args_;
        const auto& s = detail::release_script;
        if (a.size() < 5 || (a[1] != s.sha1 && a[1] != s.text)) {
            return std::nullopt;
        }
        // KEYS, then the token.
        const auto keys = std::strtoul(a[2].c_str(), nullptr, 10);
        if (keys >= a.size() - 3) {
            return std::nullopt;
        }
        return a[3 + keys];
    }

    std::shared_ptr<detail::reply_target> inner_;
    history& h_;
    int client_;
    int node_;
    std::shared_ptr<const std::vector<std::string>> args_;
    real_ns sent_at_;
};

} // namespace

observed_link::observed_link(std::unique_ptr<detail::node_link> inner,
                             std::shared_ptr<sim_path> path, world& w, history& h)
    : forwarding_link(std::move(inner))
    , path_(std::move(path))
    , w_(w)
    , h_(h) {}

void observed_link::send(const detail::command& cmd,
                         const std::shared_ptr<detail::reply_target>& target, std::uint64_t tag) {
    auto args = std::make_shared<const std::vector<std::string>>(cmd.args.begin(), cmd.args.end());
    const int client = path_->client();
    const int node = path_->node().id();
    h_.on_send(client, node, *args);
    path_->link_generation = inner_->connection_generation();
    path_->sent(args, path_->link_generation);
    const auto& verb = (*args)[0];
    if (verb == "EVALSHA" || verb == "EVAL") {
        inner_->send(
            cmd, std::make_shared<observed_reply>(target, h_, client, node, args, w_.now()), tag);
    } else {
        inner_->send(cmd, target, tag);
    }
    // Still unavailable (shut down, or backing off after a failed connect): the connection
    // failed the command at once, and no connection will carry it. Its record would match
    // a later identical command (a renewal, a resend) with this one's earlier time.
    if (inner_->readiness() == detail::link_readiness::unavailable) {
        path_->not_sent(args);
    }
}

void observed_link::warm_up() {
    path_->link_generation = inner_->connection_generation();
    inner_->warm_up();
}

} // namespace redlock::sim
