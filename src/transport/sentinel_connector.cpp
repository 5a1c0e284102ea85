#include "transport/sentinel_connector.hpp"

#include "transport/commands.hpp"
#include "transport/reply_reader.hpp"
#include "transport/server_text.hpp"
#include "transport/socket_connector.hpp"

#include <boost/asio/buffer.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// What one Sentinel's replies are allowed to take: an address, and SENTINEL MASTER's few
/// dozen short fields.
constexpr std::size_t max_sentinel_reply = 64 * 1024;

std::string_view text_of(const redisReply* r) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ||
                 r->type == REDIS_REPLY_ERROR)
               ? std::string_view(r->str, r->len)
               : std::string_view();
}

template <typename Number>
std::optional<Number> number_of(std::string_view text) {
    Number value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

/// How old a Sentinel may say a role is: beyond a year (a hostile or broken Sentinel) the
/// clock arithmetic could overflow, and a year is longer than any quarantine.
constexpr std::chrono::milliseconds max_role_age = std::chrono::hours(24 * 365);

/// `host:port` as node_address shows it (IPv6 in brackets).
std::string host_and_port(std::string host, std::uint16_t port) {
    node_address a;
    a.host = std::move(host);
    a.port = port;
    return a.display();
}

} // namespace

struct sentinel_connector::exchange {
    std::string display; ///< the Sentinel's host:port, for messages
    std::unique_ptr<socket_connector> connector;
    std::unique_ptr<byte_stream> stream;
    std::unique_ptr<reply_reader> reader;
    std::vector<reply_ptr> replies;
    std::array<char, 4096> buffer{};
    bool done = false;
};

struct sentinel_connector::attempt {
    /// A primary some Sentinels named, with how many, and the youngest age of its role
    /// that one of them reported (0 from one that did not say).
    struct named {
        std::string host;
        std::uint16_t port = 0;
        unsigned votes = 0;
        std::chrono::milliseconds youngest_role{0};
    };

    opened_fn opened;
    bool over = false;
    std::string step = "asking the Sentinels";
    std::vector<exchange> asked;
    std::vector<named> names;
    /// What each Sentinel that is done said, joined: what a failure or a timeout quotes.
    std::string so_far;
    std::size_t done = 0;
    std::unique_ptr<socket_connector> primary;

    void heard(const std::string& what) { so_far += (so_far.empty() ? "" : "; ") + what; }

    /// Ends every Sentinel's exchange (the answers still to come no longer matter).
    void close_asked() noexcept {
        for (auto& e : asked) {
            e.done = true;
            if (e.connector) {
                e.connector->abort();
            }
            if (e.stream) {
                e.stream->close();
            }
        }
    }

    void finish(std::unique_ptr<byte_stream> stream, std::string why) {
        if (over) {
            return;
        }
        over = true;
        close_asked();
        std::exchange(opened, nullptr)(std::move(stream), std::move(why));
    }
};

sentinel_connector::sentinel_connector(asio::any_io_executor strand, node_address address,
                                       const client_config& config,
                                       std::shared_ptr<asio::ssl::context> tls,
                                       std::function<clock::time_point()> now,
                                       std::string_view role)
    : strand_(std::move(strand))
    , address_(std::move(address))
    , config_(config)
    , tls_(std::move(tls))
    , now_(std::move(now))
    , role_(role)
    , secrets_(configured_secrets(config_, address_.password)) {
    if (!address_.sentinel_password.empty()) {
        secrets_.insert(secrets_.begin(), address_.sentinel_password);
    }
    if (!address_.sentinel_password.empty()) {
        std::vector<std::string_view> auth{"AUTH"};
        if (!address_.sentinel_user.empty()) {
            auth.emplace_back(address_.sentinel_user);
        }
        auth.emplace_back(address_.sentinel_password);
        request_ += wire_bytes(auth.data(), auth.size());
        ++replies_expected_;
    }
    const std::string_view where[] = {"SENTINEL", "get-master-addr-by-name", address_.master_name};
    const std::string_view state[] = {"SENTINEL", "MASTER", address_.master_name};
    request_ += wire_bytes(std::data(where), std::size(where));
    request_ += wire_bytes(std::data(state), std::size(state));
    replies_expected_ += 2;
}

sentinel_connector::~sentinel_connector() {
    abort();
}

void sentinel_connector::abort() noexcept {
    if (!current_) {
        return;
    }
    auto a = std::exchange(current_, nullptr);
    a->over = true;
    a->opened = nullptr;
    a->close_asked();
    if (a->primary) {
        a->primary->abort();
    }
}

std::string_view sentinel_connector::step() const noexcept {
    return current_ ? std::string_view(current_->step) : std::string_view("asking the Sentinels");
}

std::string_view sentinel_connector::hint() const noexcept {
    if (current_ && current_->primary) {
        return current_->primary->hint();
    }
    if (!current_) {
        return "";
    }
    return current_->so_far.empty() ? "no Sentinel answered" : std::string_view(current_->so_far);
}

void sentinel_connector::open(opened_fn opened) {
    abort();
    current_ = std::make_shared<attempt>();
    current_->opened = std::move(opened);
    current_->asked.resize(address_.sentinels.size());
    const auto a = current_;
    for (std::size_t i = 0; i < address_.sentinels.size() && !a->over; ++i) {
        ask(a, i);
    }
}

void sentinel_connector::ask(const std::shared_ptr<attempt>& a, std::size_t sentinel) {
    const auto& endpoint = address_.sentinels[sentinel];
    auto& e = a->asked[sentinel];
    node_address target;
    target.host = endpoint.host;
    target.port = endpoint.port;
    target.tls = address_.tls;
    e.display = target.display();
    e.connector = std::make_unique<socket_connector>(
        strand_, target, config_, tls_, role_.empty() ? "Sentinel" : "Sentinel, for the " + role_);
    e.connector->open([this, a, sentinel](std::unique_ptr<byte_stream> stream, std::string why) {
        if (a->over) {
            return;
        }
        if (!stream) {
            answered(a, sentinel, {}, 0, {}, std::move(why));
            return;
        }
        auto& e = a->asked[sentinel];
        e.stream = std::move(stream);
        e.reader = std::make_unique<reply_reader>(max_sentinel_reply);
        e.stream->async_write(
            asio::buffer(request_), [this, a, sentinel](const error_code& ec, std::size_t) {
                if (a->over || a->asked[sentinel].done) {
                    return;
                }
                if (ec) {
                    answered(a, sentinel, {}, 0, {}, "cannot write: " + ec.message());
                }
            });
        read_answer(a, sentinel);
    });
}

void sentinel_connector::read_answer(const std::shared_ptr<attempt>& a, std::size_t sentinel) {
    auto& e = a->asked[sentinel];
    e.stream->async_read_some(asio::buffer(e.buffer), [this, a, sentinel](const error_code& ec,
                                                                          std::size_t n) {
        if (a->over || a->asked[sentinel].done) {
            return;
        }
        auto& e = a->asked[sentinel];
        if (ec) {
            answered(a, sentinel, {}, 0, {},
                     ec == asio::error::eof ? "connection closed by the Sentinel" : ec.message());
            return;
        }
        e.reader->feed({e.buffer.data(), n});
        reply_ptr reply;
        while (e.replies.size() < replies_expected_) {
            const auto status = e.reader->next(reply);
            if (status == reply_reader::status::need_more) {
                read_answer(a, sentinel);
                return;
            }
            if (status == reply_reader::status::broken) {
                answered(a, sentinel, {}, 0, {}, e.reader->why());
                return;
            }
            e.replies.push_back(std::move(reply));
        }
        const auto refused = [this](std::string_view what, const redisReply* r) {
            return std::string(what) + " refused: " + printable_server_text(text_of(r), secrets_);
        };
        std::size_t next = 0;
        if (!address_.sentinel_password.empty()) {
            const auto* auth = e.replies[next++].get();
            if (auth->type == REDIS_REPLY_ERROR) {
                answered(a, sentinel, {}, 0, {}, refused("AUTH", auth));
                return;
            }
        }
        const auto* where = e.replies[next++].get();
        const auto* state = e.replies[next].get();
        if (where->type == REDIS_REPLY_NIL) {
            answered(a, sentinel, {}, 0, {},
                     "knows no primary named \"" +
                         printable_server_text(address_.master_name, secrets_) + "\"");
            return;
        }
        if (where->type == REDIS_REPLY_ERROR) {
            answered(a, sentinel, {}, 0, {}, refused("SENTINEL get-master-addr-by-name", where));
            return;
        }
        const auto port = where->type == REDIS_REPLY_ARRAY && where->elements == 2
                              ? number_of<std::uint16_t>(text_of(where->element[1]))
                              : std::nullopt;
        const auto host = where->type == REDIS_REPLY_ARRAY && where->elements == 2
                              ? text_of(where->element[0])
                              : std::string_view();
        if (!port || *port == 0 || !plausible_sentinel_host(host, secrets_)) {
            answered(a, sentinel, {}, 0, {},
                     "sent an unexpected reply to SENTINEL get-master-addr-by-name");
            return;
        }
        // SENTINEL MASTER: name/value pairs. Refused (an ACL without it), or odd, the age
        // of the role is unknown and counts as "just now": another Sentinel's older age
        // must not date the role then, as it may not have seen a role change this one
        // did. A promoted server is then quarantined from the connection's first sight.
        std::chrono::milliseconds role_age{0};
        if (state->type == REDIS_REPLY_ARRAY && state->elements % 2 == 0) {
            std::string_view role;
            std::string_view ip;
            std::optional<std::uint16_t> state_port;
            std::optional<long long> reported_ms;
            for (std::size_t i = 0; i + 1 < state->elements; i += 2) {
                const auto name = text_of(state->element[i]);
                const auto value = text_of(state->element[i + 1]);
                if (name == "role-reported") {
                    role = value;
                } else if (name == "role-reported-time") {
                    reported_ms = number_of<long long>(value);
                } else if (name == "ip") {
                    ip = value;
                } else if (name == "port") {
                    state_port = number_of<std::uint16_t>(value);
                }
            }
            // Seen otherwise than as the primary it names (a failover under way, a role not
            // yet confirmed): it took its role just now, at the latest.
            const bool confirmed = role == "master" && ip == host && state_port == port;
            if (reported_ms && *reported_ms >= 0 && confirmed) {
                role_age = std::min(std::chrono::milliseconds(*reported_ms), max_role_age);
            }
        }
        answered(a, sentinel, std::string(host), *port, role_age, {});
    });
}

void sentinel_connector::answered(const std::shared_ptr<attempt>& a, std::size_t sentinel,
                                  std::string host, std::uint16_t port,
                                  std::chrono::milliseconds role_age, std::string why) {
    auto& e = a->asked[sentinel];
    if (a->over || e.done) {
        return;
    }
    e.done = true;
    ++a->done;
    if (e.stream) {
        e.stream->close();
    }
    const std::size_t needed = address_.sentinels.size() / 2 + 1;
    if (host.empty()) {
        a->heard(e.display + " " + why);
    } else {
        auto it = std::find_if(a->names.begin(), a->names.end(), [&](const attempt::named& n) {
            return n.host == host && n.port == port;
        });
        if (it == a->names.end()) {
            a->names.push_back({host, port, 0, role_age});
            it = a->names.end() - 1;
        }
        ++it->votes;
        it->youngest_role = std::min(it->youngest_role, role_age);
        a->heard(e.display + " names " + host_and_port(host, port));
        if (it->votes >= needed && !a->primary) {
            connect_primary(a, static_cast<std::size_t>(it - a->names.begin()));
            return;
        }
    }
    if (a->done == a->asked.size() && !a->primary) {
        a->finish(nullptr,
                  "no majority of the Sentinels (" + std::to_string(needed) + " of " +
                      std::to_string(address_.sentinels.size()) + ") names one primary for \"" +
                      printable_server_text(address_.master_name, secrets_) + "\": " + a->so_far);
    }
}

void sentinel_connector::connect_primary(const std::shared_ptr<attempt>& a, std::size_t chosen) {
    const auto name = a->names[chosen];
    a->close_asked();
    node_address target = address_;
    target.kind = node_address::transport::tcp;
    target.host = name.host;
    target.port = name.port;
    target.sentinels.clear();
    a->step = "connect to the primary " + host_and_port(name.host, name.port) + " (named by " +
              std::to_string(name.votes) + " of " + std::to_string(address_.sentinels.size()) +
              " Sentinels)";
    // Read now, as the Sentinels answered: the role is at least this old by then.
    const auto since = now_() - name.youngest_role;
    a->primary = std::make_unique<socket_connector>(strand_, target, config_, tls_, role_);
    a->primary->open([this, a, since, reaching = std::make_pair(name.host, name.port)](
                         std::unique_ptr<byte_stream> stream, std::string why) {
        if (a->over) {
            return;
        }
        if (stream) {
            primary_since_ = since;
            reached_ = reaching;
        } else {
            why = a->step.substr(std::string_view("connect to the ").size()) + ": " + why;
        }
        a->finish(std::move(stream), std::move(why));
    });
}

bool plausible_sentinel_host(std::string_view host, const std::vector<std::string>& secrets) {
    if (host.empty() || host.size() > 255) {
        return false;
    }
    const bool characters = std::all_of(host.begin(), host.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '-' || c == '_' || c == ':' || c == '%';
    });
    return characters && std::none_of(secrets.begin(), secrets.end(), [host](const auto& s) {
               return !s.empty() && host.find(s) != std::string_view::npos;
           });
}

} // namespace redlock::detail
