#include "transport/tls_stream.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace redlock::detail {

namespace {

tls_ciphertext& input_of(BIO* bio) {
    return *static_cast<tls_ciphertext*>(BIO_get_data(bio));
}

bool would_block(int error) {
    return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE when the node has gone;
// send(2) with MSG_NOSIGNAL reports EPIPE instead, as Asio's sockets do.
int socket_write(BIO* bio, const char* data, int size) {
    BIO_clear_retry_flags(bio);
    const auto sent =
        ::send(input_of(bio).socket, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
    if (sent < 0 && would_block(errno)) {
        BIO_set_retry_write(bio);
    }
    return static_cast<int>(sent);
}

// Reads only what the socket's asynchronous read brought in; "retry" asks for another.
int buffered_read(BIO* bio, char* data, int size) {
    BIO_clear_retry_flags(bio);
    auto& input = input_of(bio);
    const std::size_t available = input.end - input.begin;
    if (available == 0) {
        BIO_set_retry_read(bio);
        return -1;
    }
    const std::size_t taken = std::min(available, static_cast<std::size_t>(size));
    std::memcpy(data, input.bytes.data() + input.begin, taken);
    input.begin += taken;
    return static_cast<int>(taken);
}

long socket_control(BIO*, int command, long, void*) {
    return command == BIO_CTRL_FLUSH ? 1 : 0; // every write already went to the kernel
}

const BIO_METHOD* socket_method() {
    static const BIO_METHOD* const method = [] {
        BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "redlock socket");
        if (m != nullptr) {
            BIO_meth_set_write(m, socket_write);
            BIO_meth_set_read(m, buffered_read);
            BIO_meth_set_ctrl(m, socket_control);
        }
        return m;
    }();
    return method;
}

boost::system::error_code openssl_error(unsigned long code) {
    return {static_cast<int>(code), boost::asio::error::get_ssl_category()};
}

} // namespace

tls_stream::tls_stream(tcp_socket socket, SSL_CTX* context, boost::system::error_code& error)
    : socket_(std::move(socket))
    , input_(std::make_unique<tls_ciphertext>())
    , session_(SSL_new(context)) {
    error.clear();
    BIO* bio = socket_method() != nullptr ? BIO_new(socket_method()) : nullptr;
    if (!session_ || bio == nullptr) {
        BIO_free(bio);
        session_.reset();
        error = openssl_error(ERR_get_error());
        if (!error) {
            error = boost::asio::error::no_memory;
        }
        return;
    }
    input_->socket = socket_.native_handle();
    BIO_set_data(bio, input_.get());
    BIO_set_init(bio, 1);
    SSL_set_bio(session_.get(), bio, bio);
    SSL_set_connect_state(session_.get());
    SSL_set_options(session_.get(), SSL_OP_NO_RENEGOTIATION);
    // A write resumed after WANT_WRITE passes the rest of the buffer, not the same pointer.
    SSL_set_mode(session_.get(),
                 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    socket_.non_blocking(true, error);
}

void tls_stream::close() noexcept {
    closed_ = true;
    if (input_) {
        input_->socket = -1; // a send from OpenSSL now fails instead of reaching a reused fd
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
}

// errno is read before anything else can change it.
tls_stream::progress tls_stream::outcome_of(SSL* session, int result,
                                            boost::system::error_code& error) {
    const int saved_errno = errno;
    switch (SSL_get_error(session, result)) {
    case SSL_ERROR_NONE:
        return progress::finished;
    case SSL_ERROR_WANT_READ:
        return progress::wants_read;
    case SSL_ERROR_WANT_WRITE:
        return progress::wants_write;
    case SSL_ERROR_ZERO_RETURN:
        error = boost::asio::error::eof;
        return progress::finished;
    case SSL_ERROR_SYSCALL:
        if (const auto code = ERR_get_error(); code != 0) {
            error = openssl_error(code);
        } else if (saved_errno != 0) {
            error.assign(saved_errno, boost::system::system_category());
        } else {
            error = boost::asio::error::eof;
        }
        return progress::finished;
    default: {
        const auto code = ERR_get_error();
        error = code != 0 ? openssl_error(code) : boost::asio::ssl::error::stream_truncated;
        return progress::finished;
    }
    }
}

tls_stream::progress tls_stream::handshake_step(boost::system::error_code& error) {
    ERR_clear_error();
    errno = 0;
    return outcome_of(session_.get(), SSL_connect(session_.get()), error);
}

tls_stream::progress tls_stream::write_step(boost::asio::const_buffer buffer, std::size_t& written,
                                            boost::system::error_code& error) {
    const auto* data = static_cast<const char*>(buffer.data());
    while (written < buffer.size()) {
        std::size_t now = 0;
        ERR_clear_error();
        errno = 0;
        const int ok = SSL_write_ex(session_.get(), data + written, buffer.size() - written, &now);
        if (ok != 1) {
            return outcome_of(session_.get(), ok, error);
        }
        written += now;
    }
    return progress::finished;
}

tls_stream::progress tls_stream::read_step(boost::asio::mutable_buffer buffer, std::size_t& read,
                                           boost::system::error_code& error) {
    if (buffer.size() == 0) {
        return progress::finished; // as every Asio read: nothing asked, nothing waited for
    }
    ERR_clear_error();
    errno = 0;
    const int ok = SSL_read_ex(session_.get(), buffer.data(), buffer.size(), &read);
    return ok == 1 ? progress::finished : outcome_of(session_.get(), ok, error);
}

} // namespace redlock::detail
