#ifndef REDLOCK_SRC_INSPECT_OP_HPP
#define REDLOCK_SRC_INSPECT_OP_HPP

#include "operations/completion.hpp"
#include "operations/operation.hpp"

#include "redlock/client.hpp"

#include <cstdint>
#include <optional>
#include <utility>

namespace redlock::detail {

/// client::async_inspect: GET, PTTL, HGETALL and TIME of one key to every node, one deadline
/// for all, nothing decided by quorum and nothing written: it only reports what it read.
/// HGETALL and TIME matter only where GET finds the hash of shared or permit holders, so
/// that a reader user without them still inspects exclusive locks.
class inspect_op final : public operation {
public:
    inspect_op(std::shared_ptr<client_impl> impl, std::string key,
               std::chrono::milliseconds timeout, completion<client::inspect_signature> done);

    void start();
    void cancel() override;
    void on_reply(std::uint64_t tag, const node_reply& reply) override;

private:
    void on_timer() override;
    /// Every reply is in: finishes, or first waits for the TTL ceilings a quarantine reads.
    void wait_for_ceilings_or_finish();
    void finish(std::error_code error);
    void read_fields(const node_reply& reply, std::size_t node);
    void read_time(const node_reply& reply, std::size_t node);
    /// Once GET, HGETALL and TIME of `node` are in: the holders of a hash, if GET found one.
    void read_holders(std::size_t node);

    std::string key_;
    std::chrono::milliseconds timeout_;
    completion<client::inspect_signature> completion_;
    inspect_result result_;
    clock::time_point sent_at_{};
    /// Per node: whether GET and PTTL were answered.
    std::vector<bool> got_value_;
    std::vector<bool> got_pttl_;
    /// Per node: GET found another type than a string (WRONGTYPE), and the replies to
    /// HGETALL and TIME, kept until all three are in.
    std::vector<bool> not_a_string_;
    std::vector<std::vector<std::pair<std::string, std::string>>> fields_;
    std::vector<std::optional<std::int64_t>> node_time_ms_;
    std::vector<std::error_code> holders_error_;
    std::vector<std::string> holders_failure_;
    std::vector<std::string> time_failure_;
    std::vector<unsigned> hash_replies_;
    std::size_t replies_ = 0;
    // A quarantined node's TTL ceilings were just read from the others: a PING behind the
    // reads on every connection tells when their answers are in (same connection, in order).
    bool syncing_ = false;
    std::size_t sync_replies_ = 0;
};

} // namespace redlock::detail

#endif
