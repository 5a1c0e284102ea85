#include "transport/tls_context.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace redlock::detail {

namespace ssl = boost::asio::ssl;

namespace {

std::string openssl_reason(const boost::system::error_code& ec) {
    std::string text = ec.message();
    return text.empty() ? "unknown TLS error" : text;
}

} // namespace

std::shared_ptr<ssl::context> make_tls_context(const tls_options& options, std::string& why) {
    auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    const auto failed = [&](const std::string& what) {
        why = what + ": " + openssl_reason(ec);
        return nullptr;
    };
    // Redis speaks TLS 1.2 and 1.3; nothing older is safe.
    SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
    context->set_options(ssl::context::default_workarounds | ssl::context::no_compression, ec);
    if (ec) {
        return failed("cannot set TLS options");
    }
    if (options.ca_file.empty() && options.ca_directory.empty()) {
        if (context->set_default_verify_paths(ec); ec) {
            return failed("cannot load the system's trusted certificates");
        }
    }
    if (!options.ca_file.empty() && (context->load_verify_file(options.ca_file, ec), ec)) {
        return failed("cannot load CA file " + options.ca_file);
    }
    if (!options.ca_directory.empty() && (context->add_verify_path(options.ca_directory, ec), ec)) {
        return failed("cannot use CA directory " + options.ca_directory);
    }
    if (options.certificate_file.empty() != options.private_key_file.empty()) {
        why = "a client certificate needs its private key, and a key its certificate";
        return nullptr;
    }
    if (!options.certificate_file.empty()) {
        if (context->use_certificate_chain_file(options.certificate_file, ec); ec) {
            return failed("cannot load client certificate " + options.certificate_file);
        }
        if (context->use_private_key_file(options.private_key_file, ssl::context::pem, ec); ec) {
            return failed("cannot load client key " + options.private_key_file);
        }
        if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
            why = "client key " + options.private_key_file + " does not match certificate " +
                  options.certificate_file;
            return nullptr;
        }
    }
    context->set_verify_mode(
        options.dangerously_skip_verification ? ssl::verify_none : ssl::verify_peer, ec);
    if (ec) {
        return failed("cannot set the verification mode");
    }
    why.clear();
    return context;
}

bool prepare_tls_session(SSL* session, const tls_options& options, const std::string& host,
                         std::string& why) {
    const std::string& name = options.server_name.empty() ? host : options.server_name;
    boost::system::error_code not_an_address;
    boost::asio::ip::make_address(name, not_an_address);
    X509_VERIFY_PARAM* checks = SSL_get0_param(session);
    if (not_an_address) {
        // SNI is for names only (RFC 6066).
        if (SSL_set_tlsext_host_name(session, name.c_str()) != 1 ||
            X509_VERIFY_PARAM_set1_host(checks, name.c_str(), name.size()) != 1) {
            why = "cannot set the TLS server name " + name;
            return false;
        }
        // The name must be in the subjectAltName: OpenSSL would otherwise accept it in the
        // subject's common name of a certificate without DNS names (RFC 6125 6.4.4).
        X509_VERIFY_PARAM_set_hostflags(checks, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS |
                                                    X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    } else if (X509_VERIFY_PARAM_set1_ip_asc(checks, name.c_str()) != 1) {
        why = "cannot set the TLS server address " + name;
        return false;
    }
    return true;
}

std::string tls_failure_reason(const SSL* session, const boost::system::error_code& ec) {
    const long verified = SSL_get_verify_result(session);
    if (verified != X509_V_OK) {
        return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verified);
    }
    if (ec == boost::asio::error::eof || ec == ssl::error::stream_truncated) {
        return "TLS handshake failed: the node closed the connection (is it a TLS port? does "
               "it require a client certificate?)";
    }
    return "TLS handshake failed: " + openssl_reason(ec);
}

} // namespace redlock::detail
