#ifndef REDLOCK_SRC_RUNTIME_CEILING_READS_HPP
#define REDLOCK_SRC_RUNTIME_CEILING_READS_HPP

#include "core/learned_ceiling.hpp"
#include "core/validity.hpp"
#include "transport/node_reply.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace redlock::detail {

/// The TTL ceilings read from the other nodes after a node restarted (or its clock stepped),
/// one round per quarantined node and restart (docs/safety.md, "The TTL ceiling"): the
/// replies of lua/ttl_ceiling_read.lua land here. Decides nothing (core/learned_ceiling does).
class ceiling_reads final : public reply_target {
public:
    explicit ceiling_reads(std::size_t nodes);

    struct round {
        /// The restart (started_at) this round is for; empty before the first.
        std::optional<clock::time_point> started;
        /// When its reads were sent. They cover every lock the node granted before a restart
        /// placed no later than this: started_at() never moves later for the same server
        /// (the earliest placement from INFO's whole-second uptime is kept: uptime_start),
        /// and a new restart, eviction or clock step moves it past this.
        clock::time_point sent_at;
        /// The restart's: the replies of every read sent for it carry it.
        std::uint64_t id = 0;
        /// Per reading node: its latest reading, empty until one answered.
        std::vector<std::optional<ceiling_reading>> readings;
        /// Per reading node: its reads sent for this restart and not answered yet (a second
        /// round, read_again, queues behind the first on the same connection).
        std::vector<unsigned> outstanding;
        /// Per reading node: its odd reading was logged (each odd node once per round, in
        /// whatever order their replies came: one node's report hides no other's).
        std::vector<bool> odd_reported;
        /// The largest ceiling any reader answered in this round, eligible or not: the
        /// quarantine is looked at again until a ceiling this large has passed since the
        /// restart, not only within the maximum (whether it counts is decided at that time).
        std::chrono::milliseconds largest_known{0};
        /// A figure above fleet_max_ttl was logged (once per round).
        bool above_maximum = false;

        /// Whether a read for this restart, to a node other than `node`, is still on its way
        /// (a failed one is answered: an odd reading).
        bool awaiting(std::size_t node) const {
            for (std::size_t reader = 0; reader < outstanding.size(); ++reader) {
                if (reader != node && outstanding[reader] > 0) {
                    return true;
                }
            }
            return false;
        }
    };

    /// The round of `node`; begin() starts a new one (the old readings are forgotten) and
    /// returns the tag base for its reads: tag(node, reader).
    const round& of(std::size_t node) const { return rounds_.at(node); }
    round& of(std::size_t node) { return rounds_.at(node); }
    void begin(std::size_t node, clock::time_point started, clock::time_point now);
    /// A new round of reads for the same restart: sent_at moves to now; what the earlier
    /// round told, and its reads still on their way, stay (their answers still count).
    void read_again(std::size_t node, clock::time_point now);
    /// Counts a read of `reader`'s ceiling for `node`'s restart as sent.
    void sent(std::size_t node, std::size_t reader);
    std::uint64_t tag(std::size_t node, std::size_t reader) const;

    void on_reply(std::uint64_t tag, const node_reply& reply) override;

private:
    std::vector<round> rounds_;
    std::uint64_t next_id_ = 0;
};

} // namespace redlock::detail

#endif
