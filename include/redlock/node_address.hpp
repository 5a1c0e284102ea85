#ifndef REDLOCK_NODE_ADDRESS_HPP
#define REDLOCK_NODE_ADDRESS_HPP

#include <redlock/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace redlock {

/// Where one Redis master lives and how to log in to it.
struct REDLOCK_API node_address {
    /// How the node is reached.
    enum class transport {
        tcp,         ///< host and port, plain or TLS
        unix_socket, ///< a unix domain socket at path
        /// the primary that a majority of `sentinels` name for `master_name`, asked again
        /// at every (re)connect; host and port are unused
        sentinel,
    };

    /// One Sentinel of a `sentinel` node.
    struct sentinel_endpoint {
        std::string host;           ///< host name, IPv4 or IPv6 literal (without brackets)
        std::uint16_t port = 26379; ///< the Sentinel's port
    };

    transport kind = transport::tcp; ///< which of the fields below apply
    std::string host;                ///< tcp: host name, IPv4 or IPv6 literal (without brackets)
    std::uint16_t port = 6379;       ///< tcp: the port
    std::string path;                ///< unix_socket: path of the socket
    std::string user;                ///< ACL user; empty means the default user
    std::string password;            ///< empty means no AUTH
    int db = 0;                      ///< SELECTed on every (re)connect when not 0
    bool tls = false; ///< tcp and sentinel: `rediss://`, TLS as configured in client_config::tls

    /// sentinel: the Sentinels, all asked at every (re)connect; a majority of them must name
    /// the same primary (docs/operations.md, "Sentinel-managed nodes"). TLS
    /// (`rediss-sentinel://`) applies to them too. No Sentinel twice.
    std::vector<sentinel_endpoint> sentinels;
    std::string master_name; ///< sentinel: the name the Sentinels monitor the primary by
    /// sentinel: the Sentinels' own ACL user (empty: the default user). The data node's
    /// `user` and `password` are never sent to a Sentinel.
    std::string sentinel_user;
    /// sentinel: the Sentinels' own password (empty: no AUTH to them).
    std::string sentinel_password;

    /// `host:port`, `unix:///path` or `redis-sentinel://h1:p1,h2:p2#name`, without
    /// credentials: safe for logs and metrics labels, and parses back to the same server.
    std::string display() const;
    /// The whole address as a URL with the password replaced by `***`
    /// (`rediss://locker:***@host:6379/2`): what errors, logs and `status` show.
    std::string redacted() const;

    /// The same server regardless of credentials or database: two such entries
    /// would not be independent nodes. Two sentinel addresses are the same server when they
    /// name the same primary and share a Sentinel (sameness across kinds is found at run
    /// time, by the duplicate-server check).
    bool same_server(const node_address& other) const noexcept;
};

/// Parses one of
///   `host:port`, `host` (port 6379), `[v6]:port`,
///   `redis://[user:password@]host[:port][/db]`, `rediss://...` (the same, over TLS),
///   `redis://user:@host...` (an ACL user whose password is supplied separately: a client
///   refuses it while the password is still missing),
///   `unix:///path/to.sock[?db=N&user=U&password=P]`, `/path/to.sock`,
///   `redis-sentinel://[user:password@]host[:port][,host[:port]...][/db]
///       [?sentinel_user=U&sentinel_password=P]#master-name` (Sentinels' port 26379 by
///   default; the credentials before `@` are the data node's), `rediss-sentinel://...`.
/// A unix socket path must fit sockaddr_un (107 bytes); a longer one is refused, never cut.
/// On failure returns errc::invalid_argument and puts the reason in `why`, which never
/// contains the password.
REDLOCK_API std::error_code parse_node_address(std::string_view text, node_address& out,
                                               std::string& why);

} // namespace redlock

#endif
