#ifndef REDLOCK_TESTS_SUPPORT_HOSTILE_SERVER_HPP
#define REDLOCK_TESTS_SUPPORT_HOSTILE_SERVER_HPP

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

/// A Redis impostor on 127.0.0.1 (ephemeral port, its own I/O thread) that passes a client's
/// connection handshake like a real master (AUTH, SELECT, INFO server, SCRIPT LOAD, PING) and
/// then misbehaves on every lock command (SET, EVALSHA, EVAL) and on SUBSCRIBE (a waiter's
/// subscriber connection) in the way its mode says.
/// It reads RESP arrays of bulk strings however the bytes are split or pipelined, records
/// every command, never closes a connection on its own (but in mode denied), and stops with
/// its destructor.
class hostile_server {
public:
    enum class mode {
        unsolicited,    ///< answers each lock command twice: the second reply was never asked for
        garbage,        ///< `?` and random non-RESP bytes
        wrong_types,    ///< well-formed RESP of a type the command never returns, a new one
                        ///< each time (arrays, nested arrays, integers, bulks, statuses, nil)
        deep_nesting,   ///< `*1\r\n` ten thousand times deep
        huge_error,     ///< `-ERR ` and 4 MiB of text full of control characters and ANSI escapes
        huge_bulk_slow, ///< `$4294967296\r\n`, then a body that never ends, 64 KiB every 2 ms
        huge_array,     ///< `*2147483647\r\n`, then elements that never end, 16 KiB every 2 ms
        control_chars,  ///< `-ERR \x1b[31mred\x07\r\n`: an error text that paints a terminal
        silent,         ///< never answers a lock command (a stuck node)
        /// Grants every lock command (SET: `+OK`, scripts: `:1`), but answers a fenced
        /// acquire (the script whose ARGV is token, ttl, n over 2n keys) with the fencing
        /// counter 18446744073709551614, and never confirms a subscription. Not in
        /// all_modes: it is a lying voter, not a broken one.
        huge_counter,
        // Not among all_modes: these refuse the handshake, so no lock command ever comes.
        echoes_password, ///< refuses AUTH with `-WRONGPASS the password <what it got> is wrong`
        denied,          ///< on accept, writes the `-DENIED` error of a Redis in protected mode
                         ///< and closes, as such a Redis does with a remote client
    };
    /// The modes that misbehave on lock commands.
    static constexpr mode all_modes[] = {
        mode::unsolicited,  mode::garbage,       mode::wrong_types,
        mode::deep_nesting, mode::huge_error,    mode::huge_bulk_slow,
        mode::huge_array,   mode::control_chars, mode::silent};
    static std::string_view name(mode m);

    /// One command as received, its arguments verbatim.
    struct received_command {
        std::uint64_t connection = 0; ///< 1 for the first connection accepted, and so on
        std::vector<std::string> args;
    };

    explicit hostile_server(mode m);
    ~hostile_server();
    hostile_server(const hostile_server&) = delete;
    hostile_server& operator=(const hostile_server&) = delete;

    /// `127.0.0.1:port` to give a client as a node address.
    std::string address() const;
    std::uint16_t port() const;
    /// The run_id its INFO server reports (40 hex digits, random per server).
    const std::string& run_id() const;

    std::vector<received_command> received() const;
    /// SET, EVALSHA and EVAL received so far, on all connections.
    std::size_t lock_commands() const;
    std::size_t connections_accepted() const;
    /// Connections the client closed or reset (this server never closes one itself).
    std::size_t connections_closed_by_client() const;
    /// Bytes written to clients so far, replies and floods alike.
    std::uint64_t bytes_sent() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// For test names and failure messages: the mode's name.
void PrintTo(hostile_server::mode m, std::ostream* out);

/// Whether `text` holds a byte a terminal or a log would interpret rather than print: the C0
/// controls (newlines and tabs included) and DEL.
bool has_control_characters(std::string_view text);

} // namespace redlock::test

#endif
