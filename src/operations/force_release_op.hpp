#ifndef REDLOCK_SRC_FORCE_RELEASE_OP_HPP
#define REDLOCK_SRC_FORCE_RELEASE_OP_HPP

#include "operations/completion.hpp"
#include "operations/operation.hpp"

#include "redlock/client.hpp"

namespace redlock::detail {

/// client::async_force_release: force_release.lua to every node, one deadline for all. No
/// quorum decides anything: it waits for every node (or the deadline) and reports what each
/// one deleted, since an operator wants to know where a lock may still be held.
class force_release_op final : public operation {
public:
    force_release_op(std::shared_ptr<client_impl> impl, std::vector<std::string> keys,
                     std::chrono::milliseconds timeout, completion<client::release_signature> done);

    void start();
    void cancel() override;
    void on_reply(std::uint64_t tag, const node_reply& reply) override;

private:
    void on_timer() override;
    void finish(std::error_code error);

    std::vector<std::string> keys_;
    std::chrono::milliseconds timeout_;
    completion<client::release_signature> completion_;
    std::size_t replies_ = 0;
    std::size_t deleted_on_ = 0;
    std::size_t answered_ = 0;
};

} // namespace redlock::detail

#endif
