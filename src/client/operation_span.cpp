#include "redlock/metrics.hpp"

#include <string>
#include <utility>

namespace redlock {

namespace {

std::string_view mode_name(lock_mode mode) {
    switch (mode) {
    case lock_mode::shared:
        return "shared";
    case lock_mode::permit:
        return "permit";
    case lock_mode::exclusive:
        break;
    }
    return "exclusive";
}

} // namespace

std::vector<std::pair<std::string, std::string>> span_attributes(const operation_span& span) {
    std::vector<std::pair<std::string, std::string>> out;
    // OpenTelemetry's database client conventions: the system, the operation, and on failure
    // error.type, a low-cardinality name of the error class.
    out.emplace_back("db.system.name", "redis");
    out.emplace_back("db.operation.name", std::string(span.operation));
    if (span.error) {
        out.emplace_back("error.type", std::string(outcome_label(span.error)));
    }
    std::string keys;
    for (const auto& key : span.lock.keys) {
        keys.append(keys.empty() ? "" : ",").append(key);
    }
    out.emplace_back("redlock.keys", std::move(keys));
    out.emplace_back("redlock.mode", std::string(mode_name(span.lock.mode)));
    out.emplace_back("redlock.attempts", std::to_string(span.attempts));
    out.emplace_back("redlock.nodes", std::to_string(span.nodes));
    out.emplace_back("redlock.nodes.succeeded", std::to_string(span.succeeded));
    return out;
}

} // namespace redlock
