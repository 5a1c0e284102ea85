// nodes: what an operator looks at first, one line per node: reachable, role, version,
// run_id, uptime, persistence, eviction policy, quarantine, TLS. Read through the library's
// own connections (TLS, AUTH, SELECT, bounded replies, passwords cut from server text), so
// that what is shown is what the locks meet, and the quarantine and vetoes are the client's
// own decisions, not a second reading of INFO.
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/terminal.hpp"
#include "client/client_access.hpp"
#include "core/validate.hpp"
#include "transport/server_info.hpp"
#include "transport/server_text.hpp"

#include <redlock/client.hpp>
#include <redlock/node_address.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using std::chrono::milliseconds;

/// What an ACL refusal of a field reads as.
constexpr std::string_view not_permitted = "unknown (not permitted)";

/// What is asked of each node, in this order, each a separate command so that an ACL that
/// refuses one (CONFIG, typically) leaves the others readable.
enum asked : std::uint64_t { info, config_save, config_appendfsync, time, asked_count };

/// A field as read: its value, or why there is none ("unknown (not permitted)").
struct field {
    std::string value;
    bool known = false;
};

struct node_report {
    bool answered = false;       ///< some reply came back (even a refusal)
    std::string unreachable;     ///< why not, when the connection failed before the deadline
    detail::info_field_map info; ///< INFO's fields
    std::optional<std::string> info_refused; ///< how INFO was refused, when it was
    field save;
    field appendfsync;
    /// The node's TIME against this host's wall clock, read at the middle of the round trip
    /// (node minus host), and half the round trip: the offset is known to within that.
    std::optional<std::chrono::microseconds> clock_offset;
    std::chrono::microseconds clock_uncertainty{0};
    field clock{"unknown", false};
    std::optional<milliseconds> quarantined_for;
    std::string quarantine_basis;
    std::string quarantine_cause;
    std::string veto; ///< why a grant would not count now, empty when it would
    std::size_t replies = 0;
};

/// A refusal: "unknown (not permitted)" for an ACL's NOPERM, else the node's words.
field refused(std::string_view message) {
    if (message.starts_with("NOPERM")) {
        return {std::string(not_permitted), false};
    }
    return {"unknown (" + std::string(message) + ")", false};
}

/// Receives the replies of every node, on the client's strand.
class collector final : public detail::reply_target {
public:
    collector(std::shared_ptr<detail::client_impl> impl, std::vector<std::string> secrets,
              std::function<void()> done)
        : impl_(std::move(impl))
        , secrets_(std::move(secrets))
        , reports_(impl_->node_count())
        , done_(std::move(done)) {}

    void start() {
        static constexpr std::string_view info_command[] = {"INFO", "server", "replication",
                                                            "persistence", "memory"};
        static constexpr std::string_view save_command[] = {"CONFIG", "GET", "save"};
        static constexpr std::string_view fsync_command[] = {"CONFIG", "GET", "appendfsync"};
        static constexpr std::string_view time_command[] = {"TIME"};
        const auto as_command = [](std::span<const std::string_view> args) {
            detail::command c;
            c.args.assign(args.begin(), args.end());
            return c;
        };
        const detail::command commands[] = {as_command(info_command), as_command(save_command),
                                            as_command(fsync_command), as_command(time_command)};
        sent_at_ = std::chrono::system_clock::now();
        for (std::size_t node = 0; node < reports_.size(); ++node) {
            for (std::uint64_t what = 0; what < asked_count; ++what) {
                impl_->node(node).send(commands[what], self_, node * asked_count + what);
            }
        }
    }

    void on_reply(std::uint64_t tag, const detail::node_reply& r) override {
        const std::size_t node = tag / asked_count;
        auto& report = reports_[node];
        ++report.replies;
        if (r.error || !r.reply) {
            if (!late_) {
                report.unreachable = std::string(r.message);
            }
        } else {
            report.answered = true;
            record(report, static_cast<asked>(tag % asked_count), r);
        }
        if (report.replies == asked_count) {
            // INFO ran on connect before ours: the client knows the server's start by now.
            const auto now = impl_->now();
            report.quarantined_for = impl_->quarantine_left(node, now);
            report.quarantine_basis = impl_->quarantine_basis(node);
            if (report.quarantined_for) {
                report.quarantine_cause = impl_->quarantine_cause(node);
            }
            if (auto veto = impl_->veto_grant(node, now)) {
                report.veto = veto->message;
            }
            if (++complete_ == reports_.size()) {
                done_();
            }
        }
    }

    /// From now on a failure is the deadline's doing (the client closing), not the node's.
    void deadline_passed() { late_ = true; }
    const std::vector<node_report>& reports() const { return reports_; }
    /// Set once, to itself, so that the connections can hold it while replies are due.
    void keep(std::shared_ptr<collector> self) { self_ = std::move(self); }
    void release() { self_.reset(); }

private:
    void record(node_report& report, asked what, const detail::node_reply& r) {
        const auto* reply = r.reply;
        if (reply->type == REDIS_REPLY_ERROR) {
            if (what == info) {
                report.info_refused = refused(r.message).value;
            } else if (what == time) {
                report.clock = refused(r.message);
            } else {
                (what == config_save ? report.save : report.appendfsync) = refused(r.message);
            }
            return;
        }
        if (what == info) {
            if (reply->type == REDIS_REPLY_STRING) {
                report.info = detail::info_fields(std::string_view(reply->str, reply->len));
            }
            return;
        }
        if (what == time) {
            record_time(report, *reply);
            return;
        }
        // CONFIG GET name: [name, value], or nothing for a name the server does not know.
        auto& into = what == config_save ? report.save : report.appendfsync;
        if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
            reply->element[1]->type == REDIS_REPLY_STRING) {
            into = {detail::printable_server_text(
                        std::string_view(reply->element[1]->str, reply->element[1]->len), secrets_),
                    true};
        } else {
            into = {"unknown (unexpected reply)", false};
        }
    }

    /// TIME's [seconds, microseconds], against this host's clock when it was asked and now.
    void record_time(node_report& report, const redisReply& reply) const {
        const auto received = std::chrono::system_clock::now();
        long long seconds = 0;
        long long micros = 0;
        if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2 ||
            reply.element[0]->type != REDIS_REPLY_STRING ||
            reply.element[1]->type != REDIS_REPLY_STRING ||
            std::sscanf(reply.element[0]->str, "%lld", &seconds) != 1 ||
            std::sscanf(reply.element[1]->str, "%lld", &micros) != 1) {
            report.clock = {"unknown (unexpected reply)", false};
            return;
        }
        using std::chrono::microseconds;
        const auto node_time = microseconds(seconds * 1'000'000 + micros);
        const auto half_trip = std::chrono::duration_cast<microseconds>(received - sent_at_) / 2;
        const auto midpoint =
            std::chrono::duration_cast<microseconds>(sent_at_.time_since_epoch()) + half_trip;
        report.clock_offset = node_time - midpoint;
        report.clock_uncertainty = half_trip;
        report.clock = {clock_text(*report.clock_offset, half_trip), true};
    }

    static std::string clock_text(std::chrono::microseconds offset,
                                  std::chrono::microseconds uncertainty) {
        char text[96];
        std::snprintf(text, sizeof text, "%+.1f ms (+/- %.1f ms) against this host",
                      static_cast<double>(offset.count()) / 1000.0,
                      static_cast<double>(uncertainty.count()) / 1000.0);
        return text;
    }

    std::shared_ptr<detail::client_impl> impl_;
    std::vector<std::string> secrets_;
    std::chrono::system_clock::time_point sent_at_{};
    std::vector<node_report> reports_;
    std::function<void()> done_;
    std::size_t complete_ = 0;
    bool late_ = false;
    std::shared_ptr<collector> self_;
};

/// `name` from INFO, made printable without secrets; "unknown (not permitted)" (or the
/// node's reason) when INFO was refused, "unknown" when the server does not say.
field info_field(const node_report& report, std::string_view name,
                 const std::vector<std::string>& secrets) {
    if (report.info_refused) {
        return {*report.info_refused, false};
    }
    const auto at = report.info.find(name);
    if (at == report.info.end()) {
        return {"unknown", false};
    }
    return {detail::printable_server_text(at->second, secrets), true};
}

std::string seconds_text(milliseconds d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
    return text;
}

/// 93784 s as "1d2h3m4s".
std::string uptime_text(const std::string& seconds) {
    long long s = 0;
    if (std::sscanf(seconds.c_str(), "%lld", &s) != 1 || s < 0) {
        return seconds;
    }
    std::string text;
    const auto part = [&](long long unit, const char* name) {
        if (s >= unit || (!text.empty())) {
            text += std::to_string(s / unit) + name;
            s %= unit;
        }
    };
    part(86400, "d");
    part(3600, "h");
    part(60, "m");
    return text + std::to_string(s) + "s";
}

/// `value` as one word of a `name=value` line: quoted when it holds a space or is empty.
std::string word(const std::string& value) {
    if (!value.empty() && value.find(' ') == std::string::npos) {
        return value;
    }
    return "\"" + value + "\"";
}

/// The save points as CONFIG GET gives them ("3600 1 300 100"), or "none" for "".
field save_points(const field& save) {
    if (save.known && save.value.empty()) {
        return {"none", true};
    }
    return save;
}

std::string quarantine_text(const node_report& report) {
    return report.quarantined_for
               ? report.quarantine_cause + ": votes count again in " +
                     seconds_text(*report.quarantined_for) + " (" + report.quarantine_basis + ")"
               : "none";
}

json::value json_field(const field& f, bool number = false) {
    if (!f.known) {
        return json::value(f.value);
    }
    if (number) {
        long long n = 0;
        if (std::sscanf(f.value.c_str(), "%lld", &n) == 1) {
            return json::value(n);
        }
    }
    return json::value(f.value);
}

} // namespace

int nodes_command(const options& o) {
    if (!o.positional.empty()) {
        std::cerr << "redlock nodes: takes no arguments (see redlock nodes --help)\n";
        return exit_usage;
    }
    const client_config config = make_config(o);
    std::vector<node_address> addresses;
    if (auto why = detail::check_client_config(config, addresses); !why.empty()) {
        std::cerr << "redlock nodes: " << why << "\n";
        return exit_usage;
    }
    const auto secrets = detail::configured_secrets(config, "");

    asio::io_context io;
    std::optional<client> locks;
    try {
        locks.emplace(io.get_executor(), config);
    } catch (const std::system_error& e) {
        std::cerr << "redlock nodes: " << printable(e.what()) << "\n";
        return exit_usage;
    }
    const auto impl = detail::client_access::impl(*locks);
    const auto bound = config.connect_timeout + std::max(o.node_timeout, milliseconds(200));
    asio::steady_timer deadline(io, bound);
    auto finish = [&] {
        deadline.cancel();
        locks->close();
    };
    auto replies = std::make_shared<collector>(impl, secrets, [&] { finish(); });
    replies->keep(replies);
    asio::post(impl->strand(), [&] {
        impl->note_node_timeout(bound);
        replies->start();
    });
    deadline.async_wait([&](const boost::system::error_code& e) {
        if (!e) {
            asio::post(impl->strand(), [&] {
                replies->deadline_passed();
                finish();
            });
        }
    });
    io.run();
    replies->release();

    const auto& reports = replies->reports();
    const auto names = node_names(o);
    std::size_t reachable = 0;
    json::array nodes;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto& r = reports[i];
        const bool up = r.answered;
        reachable += up ? 1 : 0;
        const std::string why_not =
            !r.unreachable.empty() ? r.unreachable
                                   : "no answer within " + std::to_string(bound.count()) + " ms";
        const auto role = info_field(r, "role", secrets);
        const auto version = info_field(r, "redis_version", secrets);
        const auto run_id = info_field(r, "run_id", secrets);
        const auto uptime = info_field(r, "uptime_in_seconds", secrets);
        const auto aof = info_field(r, "aof_enabled", secrets);
        const auto policy = info_field(r, "maxmemory_policy", secrets);
        const auto save = save_points(r.save);
        const bool tls = addresses[i].tls;
        if (o.json) {
            json::object n;
            n["node"] = names[i];
            n["reachable"] = up;
            if (!up) {
                n["reason"] = why_not;
                n["tls"] = tls;
                nodes.push_back(std::move(n));
                continue;
            }
            n["reason"] = nullptr;
            n["role"] = json_field(role);
            n["version"] = json_field(version);
            n["run_id"] = json_field(run_id);
            n["uptime_s"] = json_field(uptime, true);
            n["aof_enabled"] = aof.known ? json::value(aof.value == "1") : json::value(aof.value);
            n["save"] = json_field(save);
            n["appendfsync"] = json_field(r.appendfsync);
            n["maxmemory_policy"] = json_field(policy);
            n["clock"] = r.clock.value;
            n["clock_offset_ms"] =
                r.clock_offset ? json::value(static_cast<double>(r.clock_offset->count()) / 1000.0)
                               : json::value(nullptr);
            n["clock_uncertainty_ms"] =
                r.clock_offset
                    ? json::value(static_cast<double>(r.clock_uncertainty.count()) / 1000.0)
                    : json::value(nullptr);
            n["quarantined_for_ms"] =
                r.quarantined_for ? json::value(r.quarantined_for->count()) : json::value(nullptr);
            n["quarantine_basis"] =
                r.quarantine_basis.empty() ? json::value(nullptr) : json::value(r.quarantine_basis);
            n["quarantine_cause"] =
                r.quarantine_cause.empty() ? json::value(nullptr) : json::value(r.quarantine_cause);
            n["votes_count"] = r.veto.empty();
            n["why_not_counted"] = r.veto.empty() ? json::value(nullptr) : json::value(r.veto);
            n["tls"] = tls;
            nodes.push_back(std::move(n));
            continue;
        }
        std::cout << names[i] << " ";
        if (!up) {
            std::cout << "unreachable (" << printable(why_not) << ") tls=" << (tls ? "yes" : "no")
                      << "\n";
            continue;
        }
        std::cout << "reachable role=" << word(role.value) << " version=" << word(version.value)
                  << " run_id=" << word(run_id.value)
                  << " uptime=" << word(uptime.known ? uptime_text(uptime.value) : uptime.value)
                  << " aof=" << word(aof.known ? (aof.value == "1" ? "yes" : "no") : aof.value)
                  << " save=" << word(save.value) << " appendfsync=" << word(r.appendfsync.value)
                  << " maxmemory-policy=" << word(policy.value) << " clock=" << word(r.clock.value)
                  << " quarantine=" << word(quarantine_text(r))
                  << " votes=" << word(r.veto.empty() ? "count" : "do not count: " + r.veto)
                  << " tls=" << (tls ? "yes" : "no") << "\n";
    }
    const std::size_t quorum = addresses.size() / 2 + 1;
    const int status = reachable >= quorum ? exit_ok : exit_unreachable;
    if (o.json) {
        json::object out;
        out["command"] = "nodes";
        out["outcome"] = status == exit_ok ? "ok" : "quorum_unreachable";
        out["exit_status"] = status;
        out["quorum"] = quorum;
        out["reachable"] = reachable;
        out["nodes"] = std::move(nodes);
        print_json(out);
    }
    if (const auto note = built_in_nodes_note(o); !note.empty() && !o.quiet) {
        std::cerr << "redlock nodes: reporting on" << note << "\n";
    }
    return status;
}

} // namespace redlock::cli
