#ifndef REDLOCK_SRC_TRANSPORT_TLS_CONTEXT_HPP
#define REDLOCK_SRC_TRANSPORT_TLS_CONTEXT_HPP

#include "redlock/config.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>

namespace redlock::detail {

/// What every TLS connection of one client shares: TLS 1.2 or later, the trust anchors
/// (tls_options' CA file/directory, else the system store), verification of the peer, and
/// the client certificate when one is configured. Null with `why` set when a file cannot be
/// used: that is a configuration error, reported before anything connects.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_options& options,
                                                            std::string& why);

/// Readies one connection's TLS session before its handshake: SNI, and the name (or, for an
/// IP literal, the address) the certificate must match, checked by OpenSSL's verification.
/// `host` is the node's host, used unless options.server_name is set. False with `why` set
/// on failure.
bool prepare_tls_session(SSL* session, const tls_options& options, const std::string& host,
                         std::string& why);

/// Why a TLS handshake failed, as a person reads it, e.g. "certificate verify failed:
/// unable to get local issuer certificate".
std::string tls_failure_reason(const SSL* session, const boost::system::error_code& ec);

} // namespace redlock::detail

#endif
