#ifndef REDLOCK_SRC_INSPECT_OP_HPP
#define REDLOCK_SRC_INSPECT_OP_HPP

#include "operations/completion.hpp"
#include "operations/operation.hpp"

#include "redlock/client.hpp"

namespace redlock::detail {

/// client::async_inspect: GET and PTTL of one key to every node, one deadline for all,
/// nothing decided by quorum and nothing written: it only reports what it read.
class inspect_op final : public operation {
public:
    inspect_op(std::shared_ptr<client_impl> impl, std::string key,
               std::chrono::milliseconds timeout, completion<client::inspect_signature> done);

    void start();
    void cancel() override;
    void on_reply(std::uint64_t tag, const node_reply& reply) override;

private:
    void on_timer() override;
    void finish(std::error_code error);

    std::string key_;
    std::chrono::milliseconds timeout_;
    completion<client::inspect_signature> completion_;
    inspect_result result_;
    /// Per node: whether GET and PTTL were answered.
    std::vector<bool> got_value_;
    std::vector<bool> got_pttl_;
    std::size_t replies_ = 0;
};

} // namespace redlock::detail

#endif
