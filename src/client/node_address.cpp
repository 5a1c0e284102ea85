#include "redlock/node_address.hpp"

#include "client/percent_encoding.hpp"

#include "redlock/error.hpp"

#include <charconv>
#include <limits>
#include <sys/un.h>

namespace redlock {
namespace {

struct parse_failure {
    std::string why;
};

/// How much of the address text an error may repeat. A password may hold '/', '&', ':' or
/// '?', and then a fragment the parser took for a port, a database or a query parameter is
/// a piece of the password: errors about an address that has credentials quote nothing.
class quoting {
public:
    explicit quoting(std::string_view address)
        : allowed_(address.find('@') == std::string_view::npos &&
                   address.find("password") == std::string_view::npos) {}

    /// ` "fragment"` when the address has no credentials, else a hint at what may be wrong.
    std::string operator()(std::string_view fragment) const {
        return allowed_ ? " \"" + std::string(fragment) + "\"" : hint();
    }
    /// `, got "fragment"` when the address has no credentials, else that hint.
    std::string got(std::string_view fragment) const {
        return allowed_ ? ", got" + (*this)(fragment) : hint();
    }

private:
    static std::string hint() {
        return " (in a password, percent-encode / ? # & @ : as %2F %3F %23 %26 %40 %3A)";
    }

    bool allowed_;
};

bool parse_number(std::string_view text, long long max, long long& out) {
    if (text.empty()) {
        return false;
    }
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc{} && ptr == end && out >= 0 && out <= max;
}

bool same_host(const std::string& a, const std::string& b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
        if (lower(a[i]) != lower(b[i])) {
            return false;
        }
    }
    return true;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) {
            throw parse_failure{"incomplete percent escape"};
        }
        const int hi = hex_value(text[i + 1]);
        const int lo = hex_value(text[i + 2]);
        if (hi < 0 || lo < 0) {
            throw parse_failure{"bad percent escape"};
        }
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

void parse_db(std::string_view text, node_address& out, const quoting& quote) {
    long long db = 0;
    if (!parse_number(text, std::numeric_limits<int>::max(), db)) {
        throw parse_failure{"database must be a non-negative integer" + quote.got(text)};
    }
    out.db = static_cast<int>(db);
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
void parse_host_port(std::string_view text, node_address& out, const quoting& quote) {
    std::string_view host;
    std::string_view port;
    if (text.starts_with('[')) {
        const auto close = text.find(']');
        if (close == std::string_view::npos) {
            throw parse_failure{"missing ']' after IPv6 address"};
        }
        host = text.substr(1, close - 1);
        const auto rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') {
                throw parse_failure{"expected ':port' after ']'"};
            }
            port = rest.substr(1);
            if (port.empty()) {
                throw parse_failure{"empty port"};
            }
        }
    } else {
        const auto colon = text.rfind(':');
        if (colon != std::string_view::npos && text.find(':') != colon) {
            throw parse_failure{"IPv6 addresses must be written in brackets: [addr]:port"};
        }
        host = text.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = text.substr(colon + 1);
            if (port.empty()) {
                throw parse_failure{"empty port"};
            }
        }
    }
    if (host.empty()) {
        throw parse_failure{"empty host"};
    }
    for (char c : host) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == ':' ||
                        c == '%';
        if (!ok) {
            throw parse_failure{"invalid character in host" + quote(std::string(1, c))};
        }
    }
    out.host = std::string(host);
    if (!port.empty()) {
        long long value = 0;
        if (!parse_number(port, 65535, value) || value == 0) {
            throw parse_failure{"port must be 1-65535" + quote.got(port)};
        }
        out.port = static_cast<std::uint16_t>(value);
    }
}

void parse_userinfo(std::string_view text, node_address& out) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) {
        // redis://secret@host follows redis-cli: a lone value is the password.
        out.password = percent_decode(text);
    } else {
        out.user = percent_decode(text.substr(0, colon));
        out.password = percent_decode(text.substr(colon + 1));
    }
    // redis://user:@host names the ACL user and leaves the password to come from elsewhere
    // (the CLI's --password-file); a client refuses it if none came (check_client_config).
    if (out.password.empty() && out.user.empty()) {
        throw parse_failure{"empty password in address"};
    }
}

void parse_redis_url(std::string_view rest, node_address& out, const quoting& quote) {
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        const auto path = rest.substr(slash + 1);
        if (!path.empty()) {
            parse_db(path, out, quote);
        }
    }
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
        parse_userinfo(authority.substr(0, at), out);
        authority = authority.substr(at + 1);
    }
    parse_host_port(authority, out, quote);
}

/// `name=value&...` after a `?`; `apply` takes each pair and says whether it knew the name.
template <typename Apply>
void parse_query(std::string_view query, const quoting& quote, std::string_view known,
                 Apply apply) {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto item = query.substr(0, amp);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) {
            throw parse_failure{"expected name=value in query" + quote.got(item)};
        }
        const auto name = item.substr(0, eq);
        if (!apply(name, item.substr(eq + 1))) {
            throw parse_failure{"unknown query parameter" + quote(name) +
                                " (known: " + std::string(known) + ")"};
        }
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    }
}

/// `[user:password@]host[:port][,host[:port]...][/db][?query]#master-name`, the form
/// Lettuce reads; the Sentinels' port is 26379 unless given.
void parse_sentinel_url(std::string_view rest, node_address& out, const quoting& quote) {
    out.kind = node_address::transport::sentinel;
    const auto hash = rest.rfind('#');
    if (hash == std::string_view::npos || hash + 1 == rest.size()) {
        throw parse_failure{"a Sentinel address ends in #master-name (the name the Sentinels "
                            "monitor the primary by)"};
    }
    out.master_name = percent_decode(rest.substr(hash + 1));
    for (unsigned char c : out.master_name) {
        if (c <= ' ' || c == 0x7f) {
            throw parse_failure{"the master name contains whitespace or a control character"};
        }
    }
    rest = rest.substr(0, hash);
    const auto question = rest.find('?');
    if (question != std::string_view::npos) {
        parse_query(rest.substr(question + 1), quote, "sentinel_user, sentinel_password",
                    [&out](std::string_view name, std::string_view value) {
                        if (name == "sentinel_user") {
                            out.sentinel_user = percent_decode(value);
                        } else if (name == "sentinel_password") {
                            out.sentinel_password = percent_decode(value);
                        } else {
                            return false;
                        }
                        return true;
                    });
        rest = rest.substr(0, question);
    }
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos && slash + 1 < rest.size()) {
        parse_db(rest.substr(slash + 1), out, quote);
    }
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
        parse_userinfo(authority.substr(0, at), out);
        authority = authority.substr(at + 1);
    }
    while (true) {
        const auto comma = authority.find(',');
        node_address one;
        one.port = 26379;
        parse_host_port(authority.substr(0, comma), one, quote);
        for (const auto& earlier : out.sentinels) {
            if (earlier.port == one.port && same_host(earlier.host, one.host)) {
                // One Sentinel twice would count twice toward the majority that names the
                // primary, and outvote the others alone.
                throw parse_failure{"a Sentinel is listed twice" +
                                    quote(authority.substr(0, comma))};
            }
        }
        out.sentinels.push_back({std::move(one.host), one.port});
        if (comma == std::string_view::npos) {
            break;
        }
        authority = authority.substr(comma + 1);
    }
    constexpr std::size_t max_sentinels = 16;
    if (out.sentinels.size() > max_sentinels) {
        throw parse_failure{"at most " + std::to_string(max_sentinels) +
                            " Sentinels per node, got " + std::to_string(out.sentinels.size())};
    }
}

void parse_unix_query(std::string_view query, node_address& out, const quoting& quote) {
    parse_query(query, quote, "db, user, password",
                [&](std::string_view name, std::string_view value) {
                    if (name == "db") {
                        parse_db(value, out, quote);
                    } else if (name == "user") {
                        out.user = percent_decode(value);
                    } else if (name == "password") {
                        out.password = percent_decode(value);
                    } else {
                        return false;
                    }
                    return true;
                });
}

void parse_unix(std::string_view rest, node_address& out, const quoting& quote) {
    const auto question = rest.find('?');
    const auto path = rest.substr(0, question);
    if (path.empty() || path[0] != '/') {
        throw parse_failure{"unix socket path must be absolute"};
    }
    if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
        throw parse_failure{"unix socket path is " + std::to_string(path.size()) +
                            " bytes long, over the system's limit of " +
                            std::to_string(sizeof(sockaddr_un{}.sun_path) - 1)};
    }
    out.kind = node_address::transport::unix_socket;
    out.path = std::string(path);
    if (question != std::string_view::npos) {
        parse_unix_query(rest.substr(question + 1), out, quote);
    }
}

void parse(std::string_view text, node_address& out) {
    const quoting quote(text);
    if (text.empty()) {
        throw parse_failure{"empty address"};
    }
    for (unsigned char c : text) {
        if (c <= ' ' || c == 0x7f) {
            throw parse_failure{"address contains whitespace or a control character"};
        }
    }
    const auto scheme_end = text.find("://");
    if (scheme_end != std::string_view::npos) {
        const auto scheme = text.substr(0, scheme_end);
        const auto rest = text.substr(scheme_end + 3);
        if (scheme == "redis" || scheme == "rediss") {
            out.tls = scheme == "rediss";
            parse_redis_url(rest, out, quote);
        } else if (scheme == "redis-sentinel" || scheme == "rediss-sentinel") {
            out.tls = scheme == "rediss-sentinel";
            parse_sentinel_url(rest, out, quote);
        } else if (scheme == "unix") {
            parse_unix(rest, out, quote);
        } else {
            throw parse_failure{"unknown scheme" + quote(scheme) +
                                " (use redis://, rediss://, redis-sentinel://, "
                                "rediss-sentinel:// or unix://)"};
        }
    } else if (text.starts_with("unix:")) {
        parse_unix(text.substr(5), out, quote);
    } else if (text.starts_with('/')) {
        parse_unix(text, out, quote);
    } else {
        parse_host_port(text, out, quote);
    }
}

std::string host_and_port(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

/// `scheme://[credentials]h1:p1,h2:p2[/db][?query]#name` of a sentinel address.
std::string sentinel_url(const node_address& a, const std::string& credentials,
                         const std::string& query) {
    std::string text = a.tls ? "rediss-sentinel://" : "redis-sentinel://";
    text.append(credentials);
    for (std::size_t i = 0; i < a.sentinels.size(); ++i) {
        text.append(i ? "," : "").append(host_and_port(a.sentinels[i].host, a.sentinels[i].port));
    }
    if (a.db != 0) {
        text.append("/").append(std::to_string(a.db));
    }
    return text.append(query).append("#").append(detail::percent_encode(a.master_name));
}

} // namespace

std::string node_address::display() const {
    if (kind == transport::sentinel) {
        return sentinel_url(*this, {}, {});
    }
    if (kind == transport::unix_socket) {
        // The URL form: "unix:" + "//x" would read back as the URL unix://x.
        return "unix://" + path;
    }
    return host_and_port(host, port);
}

std::string node_address::redacted() const {
    const std::string name = detail::percent_encode(user);
    std::string credentials;
    if (!password.empty()) {
        credentials = (user.empty() ? "" : name + ":") + "***@";
    } else if (!user.empty()) {
        credentials = name + ":@"; // redis://name@host would read as a password
    }
    if (kind == transport::sentinel) {
        std::string query;
        if (!sentinel_user.empty()) {
            query = "?sentinel_user=" + detail::percent_encode(sentinel_user);
        }
        if (!sentinel_password.empty()) {
            query += (query.empty() ? "?" : "&") + std::string("sentinel_password=***");
        }
        return sentinel_url(*this, credentials, query);
    }
    if (kind == transport::unix_socket) {
        std::string query;
        const auto add = [&query](const std::string& item) {
            query += (query.empty() ? "?" : "&") + item;
        };
        if (db != 0) {
            add("db=" + std::to_string(db));
        }
        if (!user.empty()) {
            add("user=" + name);
        }
        if (!password.empty()) {
            add("password=***");
        }
        return "unix://" + path + query;
    }
    // Appended piecewise, not `"/" + std::to_string(db)`: GCC 12 at -O3 warns -Wrestrict on
    // that in std::string's own code (a false positive, GCC PR 105329).
    std::string text = tls ? "rediss://" : "redis://";
    text.append(credentials).append(display());
    if (db != 0) {
        text.append("/").append(std::to_string(db));
    }
    return text;
}

bool node_address::same_server(const node_address& other) const noexcept {
    if (kind != other.kind) {
        return false;
    }
    if (kind == transport::unix_socket) {
        return path == other.path;
    }
    if (kind == transport::sentinel) {
        if (master_name != other.master_name) {
            return false;
        }
        for (const auto& mine : sentinels) {
            for (const auto& theirs : other.sentinels) {
                if (mine.port == theirs.port && same_host(mine.host, theirs.host)) {
                    return true;
                }
            }
        }
        return false;
    }
    return port == other.port && same_host(host, other.host);
}

std::error_code parse_node_address(std::string_view text, node_address& out, std::string& why) {
    node_address parsed;
    try {
        parse(text, parsed);
    } catch (const parse_failure& failure) {
        why = failure.why;
        return errc::invalid_argument;
    }
    out = std::move(parsed);
    why.clear();
    return {};
}

} // namespace redlock
