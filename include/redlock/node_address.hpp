#ifndef REDLOCK_NODE_ADDRESS_HPP
#define REDLOCK_NODE_ADDRESS_HPP

#include <redlock/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace redlock {

/// Where one Redis master lives and how to log in to it.
struct REDLOCK_API node_address {
    /// How the node is reached.
    enum class transport {
        tcp,         ///< host and port, plain or TLS
        unix_socket, ///< a unix domain socket at path
    };

    transport kind = transport::tcp; ///< which of the fields below apply
    std::string host;                ///< tcp: host name, IPv4 or IPv6 literal (without brackets)
    std::uint16_t port = 6379;       ///< tcp: the port
    std::string path;                ///< unix_socket: path of the socket
    std::string user;                ///< ACL user; empty means the default user
    std::string password;            ///< empty means no AUTH
    int db = 0;                      ///< SELECTed on every (re)connect when not 0
    bool tls = false; ///< tcp only: `rediss://`, TLS as configured in client_config::tls

    /// `host:port` or `unix:///path`, without credentials: safe for logs and metrics labels,
    /// and parses back to the same server.
    std::string display() const;
    /// The whole address as a URL with the password replaced by `***`
    /// (`rediss://locker:***@host:6379/2`): what errors, logs and `status` show.
    std::string redacted() const;

    /// The same server regardless of credentials or database: two such entries
    /// would not be independent nodes.
    bool same_server(const node_address& other) const noexcept;
};

/// Parses one of
///   `host:port`, `host` (port 6379), `[v6]:port`,
///   `redis://[user:password@]host[:port][/db]`, `rediss://...` (the same, over TLS),
///   `redis://user:@host...` (an ACL user whose password is supplied separately: a client
///   refuses it while the password is still missing),
///   `unix:///path/to.sock[?db=N&user=U&password=P]`, `/path/to.sock`.
/// A unix socket path must fit sockaddr_un (107 bytes); a longer one is refused, never cut.
/// On failure returns errc::invalid_argument and puts the reason in `why`, which never
/// contains the password.
REDLOCK_API std::error_code parse_node_address(std::string_view text, node_address& out,
                                               std::string& why);

} // namespace redlock

#endif
