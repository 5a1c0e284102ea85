#include "sim_reply.hpp"

namespace redlock::sim {

std::string sim_reply::resp() const {
    switch (kind) {
    case type::status:
        return "+" + text + "\r\n";
    case type::error:
        return "-" + text + "\r\n";
    case type::integer:
        return ":" + std::to_string(integer) + "\r\n";
    case type::bulk:
        return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
    case type::array: {
        std::string out = "*" + std::to_string(elements.size()) + "\r\n";
        for (const auto& e : elements) {
            out += e.resp();
        }
        return out;
    }
    case type::nil:
        break;
    }
    return "$-1\r\n";
}

} // namespace redlock::sim
