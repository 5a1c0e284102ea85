#include "support/hostile_server.hpp"
#include "support/resp_command.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/uuid/detail/sha1.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <thread>

namespace redlock::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t flood_chunk_size = 64 * 1024;
constexpr std::chrono::milliseconds flood_interval{2};

std::string upper(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
}

std::string bulk(std::string_view text) {
    return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}

std::string sha1_hex(std::string_view text) {
    boost::uuids::detail::sha1 hash;
    hash.process_bytes(text.data(), text.size());
    boost::uuids::detail::sha1::digest_type digest;
    hash.get_digest(digest);
    std::string hex;
    for (unsigned word : digest) {
        std::array<char, 9> eight{};
        std::snprintf(eight.data(), eight.size(), "%08x", word);
        hex += eight.data();
    }
    return hex;
}

std::string random_run_id() {
    std::random_device entropy;
    std::string id;
    constexpr std::string_view digits = "0123456789abcdef";
    for (int i = 0; i < 40; ++i) {
        id += digits[entropy() % 16];
    }
    return id;
}

/// What a terminal would act on, several megabytes of it: colour changes, a bell, a
/// backspace, a form feed, a tab, a NUL, DEL. No CR or LF: RESP forbids them in an error
/// line, and a parser refusing them would make this a garbage test instead of a size test.
std::string huge_error_reply() {
    std::string pattern = "\x1b[31mred alert";
    pattern += '\x07';
    pattern += "\x1b[0m";
    pattern += '\0';
    pattern += "\b\f\t";
    pattern += '\x7f';
    pattern += " pwned ";
    std::string reply = "-ERR ";
    while (reply.size() < 4 * 1024 * 1024) {
        reply += pattern;
    }
    return reply + "\r\n";
}

using payload = std::shared_ptr<const std::string>;

/// The large bytes a mode sends again and again (the whole error reply, one chunk of a flood),
/// built once, before a test takes its first memory reading: this server shares the process
/// with the client under test, and its own copies must not count as the client's growth.
payload large_bytes(hostile_server::mode m) {
    using mode = hostile_server::mode;
    switch (m) {
    case mode::huge_error:
        return std::make_shared<const std::string>(huge_error_reply());
    case mode::huge_bulk_slow:
        return std::make_shared<const std::string>(flood_chunk_size, 'x');
    case mode::huge_array: {
        // A quarter of the bulk's pace: a client that builds every element grows by a
        // dozen times what it reads.
        std::string elements;
        while (elements.size() < flood_chunk_size / 4) {
            elements += ":0\r\n";
        }
        return std::make_shared<const std::string>(std::move(elements));
    }
    default:
        return nullptr;
    }
}

/// Well-formed RESP of a type that `command` never returns, a different one on each turn.
/// huge_counter: a grant, with a counter near the top for a fenced acquire. EVAL[SHA] script
/// numkeys keys... args...: the fenced acquire has 2n keys and the ARGV token, ttl, n.
std::string lying_grant(const std::string& command, const std::vector<std::string>& args) {
    if (command == "SET") {
        return "+OK\r\n";
    }
    if (command == "SUBSCRIBE") {
        return {};
    }
    if (args.size() >= 3) {
        const auto keys = std::strtoull(args[2].c_str(), nullptr, 10);
        const auto argv = args.size() - 3 - std::min<std::size_t>(keys, args.size() - 3);
        if (argv == 3 && keys % 2 == 0 &&
            keys == 2 * std::strtoull(args.back().c_str(), nullptr, 10)) {
            return "$20\r\n18446744073709551614\r\n";
        }
    }
    return ":1\r\n";
}

std::string wrong_type_reply(const std::string& command, unsigned turn) {
    // SET answers +OK or nil.
    static const std::array<std::string, 4> for_set = {
        "*2\r\n+OK\r\n+OK\r\n",           // an array
        ":1\r\n",                         // an integer
        "*1\r\n*2\r\n$2\r\nOK\r\n:1\r\n", // a map-like nested array
        "$2\r\nOK\r\n",                   // a bulk string, not a status
    };
    // Our scripts answer the integers 0 or 1.
    static const std::array<std::string, 4> for_script = {
        "+OK\r\n",                  // a status
        "$1\r\n1\r\n",              // a bulk string
        "*2\r\n*1\r\n:1\r\n:1\r\n", // a nested array
        "$-1\r\n",                  // nil
    };
    const auto& replies = command == "SET" ? for_set : for_script;
    return replies[turn % replies.size()];
}

} // namespace

struct hostile_server::impl {
    class session;

    explicit impl(hostile_server::mode m)
        : current(m)
        , large(large_bytes(m)) {}

    hostile_server::mode current;
    payload large;
    asio::io_context io;
    tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
    // Read once here: the I/O thread owns the acceptor from then on.
    const std::uint16_t port = acceptor.local_endpoint().port();
    std::string run_id = random_run_id();
    std::list<std::weak_ptr<session>> sessions;
    std::uint64_t accepted = 0; // on the I/O thread only
    unsigned wrong_type_turn = 0;
    std::thread thread;

    mutable std::mutex mutex;
    std::vector<received_command> log;
    std::size_t lock_commands = 0;
    std::size_t connections = 0;
    std::size_t closed_by_client = 0;
    std::atomic<std::uint64_t> bytes_sent{0};

    void accept();
    void record(std::uint64_t connection, const std::vector<std::string>& args, bool lock) {
        std::lock_guard guard(mutex);
        log.push_back({connection, args});
        lock_commands += lock ? 1 : 0;
    }
};

class hostile_server::impl::session : public std::enable_shared_from_this<session> {
public:
    session(hostile_server::impl& server, tcp::socket socket, std::uint64_t number)
        : server_(server)
        , socket_(std::move(socket))
        , flood_timer_(socket_.get_executor())
        , number_(number) {}

    void start() {
        if (server_.current == hostile_server::mode::denied) {
            // What Redis 7.0 writes (networking.c) before it closes the connection.
            send("-DENIED Redis is running in protected mode because protected mode is "
                 "enabled and no password is set for the default user.\r\n");
            closing_ = true;
            return;
        }
        read();
    }

    /// The server is going away: not the client's doing.
    void stop() {
        closed_ = true;
        boost::system::error_code ignored;
        socket_.close(ignored);
        flood_timer_.cancel();
    }

private:
    void read() {
        socket_.async_read_some(
            asio::buffer(buffer_),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                if (ec) {
                    self->client_left();
                    return;
                }
                self->inbox_.append(self->buffer_.data(), n);
                if (!self->serve_inbox()) {
                    self->client_left();
                    return;
                }
                self->read();
            });
    }

    /// Every complete command in the inbox, in order; false on bytes that are not RESP.
    bool serve_inbox() {
        std::vector<std::string> args;
        for (;;) {
            std::size_t used = 0;
            switch (parse_command(inbox_, used, args)) {
            case parse_result::need_more:
                return true;
            case parse_result::malformed:
                return false;
            case parse_result::command:
                inbox_.erase(0, used);
                if (!args.empty()) {
                    on_command(args);
                }
                break;
            }
        }
    }

    void on_command(const std::vector<std::string>& args) {
        const std::string name = upper(args[0]);
        // SUBSCRIBE too: what a waiter's subscriber connection sends.
        const bool lock =
            name == "SET" || name == "EVALSHA" || name == "EVAL" || name == "SUBSCRIBE";
        server_.record(number_, args, lock);
        if (lock) {
            misbehave(name, args);
        } else if (name == "AUTH" && server_.current == hostile_server::mode::echoes_password) {
            send("-WRONGPASS the password " + args.back() + " is wrong\r\n");
        } else if (name == "AUTH" || name == "SELECT") {
            send("+OK\r\n");
        } else if (name == "PING") {
            send("+PONG\r\n");
        } else if (name == "INFO") {
            send(bulk("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:" +
                      server_.run_id + "\r\ntcp_port:" + std::to_string(server_.port) +
                      "\r\nuptime_in_seconds:100000\r\nuptime_in_days:1\r\n\r\n# Memory\r\n"
                      "maxmemory:0\r\nmaxmemory_policy:noeviction\r\n\r\n# Stats\r\n"
                      "evicted_keys:0\r\n"));
        } else if (name == "SCRIPT" && args.size() == 3 && upper(args[1]) == "LOAD") {
            send(bulk(sha1_hex(args[2])));
        } else {
            send("-ERR unknown command '" + args[0] + "'\r\n");
        }
    }

    void misbehave(const std::string& command, const std::vector<std::string>& args) {
        using mode = hostile_server::mode;
        switch (server_.current) {
        case mode::unsolicited: {
            const std::string answer = command == "SET" ? "+OK\r\n" : ":1\r\n";
            send(answer + answer);
            break;
        }
        case mode::garbage: {
            // Seeded: a failure replays with the same bytes.
            std::mt19937 bytes(static_cast<unsigned>(number_ * 7919 + ++garbage_replies_));
            std::string junk = "?";
            junk += '\x01';
            junk += '\xff';
            while (junk.size() < 4096) {
                junk += static_cast<char>(bytes() & 0xff);
            }
            send(junk + "\r\n");
            break;
        }
        case mode::wrong_types:
            send(wrong_type_reply(command, server_.wrong_type_turn++));
            break;
        case mode::deep_nesting: {
            std::string nested;
            for (int depth = 0; depth < 10000; ++depth) {
                nested += "*1\r\n";
            }
            send(nested + ":1\r\n");
            break;
        }
        case mode::huge_error:
            send(server_.large);
            break;
        case mode::huge_bulk_slow:
            flood("$4294967296\r\n");
            break;
        case mode::huge_array:
            flood("*2147483647\r\n");
            break;
        case mode::control_chars: {
            std::string reply = "-ERR \x1b[31mred";
            reply += '\x07';
            send(reply + "\r\n");
            break;
        }
        case mode::silent:
        case mode::echoes_password:
        case mode::denied:
            break;
        case mode::huge_counter:
            if (auto reply = lying_grant(command, args); !reply.empty()) {
                send(reply);
            }
            break;
        }
    }

    /// Starts a reply that never ends: `header`, then the mode's large bytes every
    /// flood_interval for as long as the client keeps reading. Later commands on this
    /// connection are never reached.
    void flood(std::string header) {
        if (flooding_) {
            return;
        }
        flooding_ = true;
        send(std::move(header));
        next_flood_chunk();
    }

    void next_flood_chunk() {
        flood_timer_.expires_after(flood_interval);
        flood_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->closed_) {
                return;
            }
            // Only as fast as the client reads: this server must not buffer its own flood.
            if (!self->writing_) {
                self->send(self->server_.large);
            }
            self->next_flood_chunk();
        });
    }

    void send(std::string bytes) { send(std::make_shared<const std::string>(std::move(bytes))); }
    void send(payload bytes) {
        outbox_.push_back(std::move(bytes));
        if (!writing_) {
            write_next();
        }
    }

    void write_next() {
        if (outbox_.empty() && closing_ && !closed_) {
            stop();
        }
        if (outbox_.empty() || closed_) {
            writing_ = false;
            return;
        }
        writing_ = true;
        asio::async_write(socket_, asio::buffer(*outbox_.front()),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                              self->server_.bytes_sent += n;
                              if (ec) {
                                  self->client_left();
                                  return;
                              }
                              self->outbox_.pop_front();
                              self->write_next();
                          });
    }

    void client_left() {
        if (closed_) {
            return;
        }
        stop();
        std::lock_guard guard(server_.mutex);
        ++server_.closed_by_client;
    }

    hostile_server::impl& server_;
    tcp::socket socket_;
    asio::steady_timer flood_timer_;
    std::uint64_t number_;
    std::array<char, 16384> buffer_{};
    std::string inbox_;
    std::deque<payload> outbox_;
    bool writing_ = false;
    bool closed_ = false;
    bool closing_ = false; ///< closes once the outbox is written
    bool flooding_ = false;
    unsigned garbage_replies_ = 0;
};

void hostile_server::impl::accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
        if (ec) {
            return; // closed by the destructor
        }
        auto s = std::make_shared<session>(*this, std::move(socket), ++accepted);
        sessions.remove_if([](const std::weak_ptr<session>& w) { return w.expired(); });
        sessions.push_back(s);
        {
            std::lock_guard guard(mutex);
            ++connections;
        }
        s->start();
        accept();
    });
}

hostile_server::hostile_server(mode m)
    : impl_(std::make_unique<impl>(m)) {
    impl_->accept();
    impl_->thread = std::thread([this] { impl_->io.run(); });
}

hostile_server::~hostile_server() {
    asio::post(impl_->io, [this] {
        boost::system::error_code ignored;
        impl_->acceptor.close(ignored);
        for (auto& w : impl_->sessions) {
            if (auto s = w.lock()) {
                s->stop();
            }
        }
    });
    impl_->thread.join();
}

void PrintTo(hostile_server::mode m, std::ostream* out) {
    *out << hostile_server::name(m);
}

std::string_view hostile_server::name(mode m) {
    switch (m) {
    case mode::unsolicited:
        return "unsolicited";
    case mode::garbage:
        return "garbage";
    case mode::wrong_types:
        return "wrong_types";
    case mode::deep_nesting:
        return "deep_nesting";
    case mode::huge_error:
        return "huge_error";
    case mode::huge_bulk_slow:
        return "huge_bulk_slow";
    case mode::huge_array:
        return "huge_array";
    case mode::control_chars:
        return "control_chars";
    case mode::silent:
        return "silent";
    case mode::huge_counter:
        return "huge_counter";
    case mode::echoes_password:
        return "echoes_password";
    case mode::denied:
        return "denied";
    }
    return "unknown";
}

std::uint16_t hostile_server::port() const {
    return impl_->port;
}

std::string hostile_server::address() const {
    return "127.0.0.1:" + std::to_string(port());
}

const std::string& hostile_server::run_id() const {
    return impl_->run_id;
}

std::vector<hostile_server::received_command> hostile_server::received() const {
    std::lock_guard guard(impl_->mutex);
    return impl_->log;
}

std::size_t hostile_server::lock_commands() const {
    std::lock_guard guard(impl_->mutex);
    return impl_->lock_commands;
}

std::size_t hostile_server::connections_accepted() const {
    std::lock_guard guard(impl_->mutex);
    return impl_->connections;
}

std::size_t hostile_server::connections_closed_by_client() const {
    std::lock_guard guard(impl_->mutex);
    return impl_->closed_by_client;
}

std::uint64_t hostile_server::bytes_sent() const {
    return impl_->bytes_sent.load();
}

bool has_control_characters(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
    });
}

} // namespace redlock::test
