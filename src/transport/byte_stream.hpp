#ifndef REDLOCK_SRC_TRANSPORT_BYTE_STREAM_HPP
#define REDLOCK_SRC_TRANSPORT_BYTE_STREAM_HPP

#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <functional>

namespace redlock::detail {

/// One connected byte stream to a node: the seam under node_connection. Real sockets in
/// production (socket_stream), the simulated network in the deterministic simulation. One
/// read and one write in flight at a time, which is all a pipelined connection needs.
/// Handlers run on the connection's strand, never inside the call that started them.
class byte_stream {
public:
    using io_handler = std::function<void(const boost::system::error_code&, std::size_t)>;

    virtual ~byte_stream() = default;

    /// Writes all of `buffer`, then calls handler(error_code, bytes_written).
    virtual void async_write(boost::asio::const_buffer buffer, io_handler handler) = 0;

    /// Writes what the stream takes at once, without waiting, and returns how much that was
    /// (0 when it takes nothing now; `ec` only for a real failure). Never while an
    /// async_write is in flight: its bytes would be overtaken.
    virtual std::size_t write_now(boost::asio::const_buffer buffer,
                                  boost::system::error_code& ec) = 0;

    /// Reads what has arrived (at least one byte), then calls handler(error_code, bytes_read).
    virtual void async_read_some(boost::asio::mutable_buffer buffer, io_handler handler) = 0;

    /// Cancels what is in flight (its handlers get operation_aborted) and closes the stream.
    virtual void close() noexcept = 0;
};

} // namespace redlock::detail

#endif
