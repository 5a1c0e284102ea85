#ifndef REDLOCK_TESTS_SIMULATION_SIM_REPLY_HPP
#define REDLOCK_TESTS_SIMULATION_SIM_REPLY_HPP

#include <string>
#include <vector>

namespace redlock::sim {

/// One RESP2 reply of a simulated node, as data: what a command hands to a script's
/// redis.call (converted to Lua the way Redis converts it) and what goes on the wire.
struct sim_reply {
    enum class type { status, error, integer, bulk, nil, array };
    type kind = type::nil;
    std::string text; ///< status, error (without the '-'), bulk
    long long integer = 0;
    std::vector<sim_reply> elements;

    static sim_reply status(std::string s) { return {type::status, std::move(s), 0, {}}; }
    static sim_reply error(std::string s) { return {type::error, std::move(s), 0, {}}; }
    static sim_reply number(long long v) { return {type::integer, {}, v, {}}; }
    static sim_reply bulk(std::string s) { return {type::bulk, std::move(s), 0, {}}; }
    static sim_reply nil() { return {}; }
    static sim_reply array(std::vector<sim_reply> items) {
        return {type::array, {}, 0, std::move(items)};
    }

    bool is_error() const noexcept { return kind == type::error; }
    /// The RESP2 bytes.
    std::string resp() const;
};

} // namespace redlock::sim

#endif
