#include "support/fault_proxy.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <thread>
#include <vector>

namespace redlock::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

/// One direction of one connection: reads chunks, holds each until its time, writes in order.
class pipe : public std::enable_shared_from_this<pipe> {
public:
    pipe(tcp::socket& from, tcp::socket& to, std::function<bool()> discard,
         std::function<std::chrono::milliseconds()> delay, std::function<void()> on_close)
        : from_(from)
        , to_(to)
        , timer_(from.get_executor())
        , discard_(std::move(discard))
        , delay_(std::move(delay))
        , on_close_(std::move(on_close)) {}

    void start() { read(); }

private:
    struct chunk {
        clock_type::time_point due;
        std::vector<char> bytes;
    };

    void read() {
        from_.async_read_some(
            asio::buffer(buffer_),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                if (ec) {
                    self->on_close_();
                    return;
                }
                if (!self->discard_()) {
                    self->queue_.push_back(
                        {clock_type::now() + self->delay_(),
                         std::vector<char>(self->buffer_.begin(), self->buffer_.begin() + n)});
                    if (!self->writing_) {
                        self->pump();
                    }
                }
                self->read();
            });
    }

    void pump() {
        if (queue_.empty()) {
            writing_ = false;
            return;
        }
        writing_ = true;
        timer_.expires_at(queue_.front().due);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec) {
                return;
            }
            asio::async_write(self->to_, asio::buffer(self->queue_.front().bytes),
                              [self](boost::system::error_code wec, std::size_t) {
                                  if (wec) {
                                      self->on_close_();
                                      return;
                                  }
                                  self->queue_.pop_front();
                                  self->pump();
                              });
        });
    }

    tcp::socket& from_;
    tcp::socket& to_;
    asio::steady_timer timer_;
    std::function<bool()> discard_;
    std::function<std::chrono::milliseconds()> delay_;
    std::function<void()> on_close_;
    std::array<char, 16384> buffer_{};
    std::deque<chunk> queue_;
    bool writing_ = false;
};

struct connection {
    explicit connection(asio::io_context& io)
        : client(io)
        , server(io) {}
    tcp::socket client;
    tcp::socket server;
    bool closed = false;

    void close(bool reset) {
        if (closed) {
            return;
        }
        closed = true;
        boost::system::error_code ignored;
        if (reset) {
            client.set_option(asio::socket_base::linger(true, 0), ignored);
        }
        client.close(ignored);
        server.close(ignored);
    }
};

} // namespace

struct fault_proxy::impl {
    asio::io_context io;
    tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
    tcp::endpoint target;
    std::atomic<int> latency_ms{0};
    std::atomic<mode> current{mode::forward};
    std::list<std::shared_ptr<connection>> connections;
    std::thread thread;

    /// Runs `change`, then cuts every open connection with a reset, in one step of the
    /// proxy's own thread (no connection sees both sides of the change); returns once done.
    void change_and_cut(const std::function<void()>& change) {
        std::promise<void> done;
        asio::post(io, [this, &change, &done] {
            change();
            for (auto& c : connections) {
                c->close(true);
            }
            connections.clear();
            done.set_value();
        });
        done.get_future().wait();
    }

    void accept() {
        auto c = std::make_shared<connection>(io);
        acceptor.async_accept(c->client, [this, c](boost::system::error_code ec) {
            if (ec) {
                return;
            }
            connections.push_back(c);
            c->server.async_connect(target, [this, c](boost::system::error_code cec) {
                if (cec) {
                    c->close(true);
                    return;
                }
                auto closer = [c] { c->close(false); };
                auto requests = std::make_shared<pipe>(
                    c->client, c->server, [this] { return current.load() == mode::blackhole; },
                    [] { return std::chrono::milliseconds(0); }, closer);
                auto replies = std::make_shared<pipe>(
                    c->server, c->client, [this] { return current.load() != mode::forward; },
                    [this] { return std::chrono::milliseconds(latency_ms.load()); }, closer);
                requests->start();
                replies->start();
            });
            accept();
        });
    }
};

fault_proxy::fault_proxy(const std::string& target_host, std::uint16_t target_port)
    : impl_(std::make_unique<impl>()) {
    impl_->target = tcp::endpoint(asio::ip::make_address(target_host), target_port);
    impl_->accept();
    impl_->thread = std::thread([this] { impl_->io.run(); });
}

fault_proxy::~fault_proxy() {
    asio::post(impl_->io, [this] {
        boost::system::error_code ignored;
        impl_->acceptor.close(ignored);
        for (auto& c : impl_->connections) {
            c->close(false);
        }
    });
    impl_->thread.join();
}

std::uint16_t fault_proxy::port() const {
    return impl_->acceptor.local_endpoint().port();
}

std::string fault_proxy::address() const {
    return "127.0.0.1:" + std::to_string(port());
}

void fault_proxy::set_latency(std::chrono::milliseconds latency) {
    impl_->latency_ms.store(static_cast<int>(latency.count()));
}

void fault_proxy::set_mode(mode m) {
    impl_->current.store(m);
}

void fault_proxy::reset_connections() {
    impl_->change_and_cut([] {});
}

void fault_proxy::retarget(std::uint16_t target_port) {
    impl_->change_and_cut([this, target_port] { impl_->target.port(target_port); });
}

void fault_proxy::cut_over(mode m) {
    impl_->change_and_cut([this, m] { impl_->current.store(m); });
}

} // namespace redlock::test
