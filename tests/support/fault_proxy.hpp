#ifndef REDLOCK_TESTS_SUPPORT_FAULT_PROXY_HPP
#define REDLOCK_TESTS_SUPPORT_FAULT_PROXY_HPP

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace redlock::test {

/// A TCP proxy on 127.0.0.1 in front of one node, with faults switched on and off at run
/// time. Runs its own I/O thread; loopback only; stops with its destructor.
class fault_proxy {
public:
    enum class mode {
        forward,      ///< pass everything (after `latency`)
        blackhole,    ///< accept and read, never forward nor answer
        drop_replies, ///< forward requests, throw the node's replies away (the SET lands,
                      ///< the client never hears)
    };

    fault_proxy(const std::string& target_host, std::uint16_t target_port);
    ~fault_proxy();
    fault_proxy(const fault_proxy&) = delete;
    fault_proxy& operator=(const fault_proxy&) = delete;

    /// `127.0.0.1:port` to give a client instead of the node.
    std::string address() const;
    std::uint16_t port() const;

    /// Added before forwarding each chunk of the node's replies.
    void set_latency(std::chrono::milliseconds latency);
    void set_mode(mode m);
    /// Cuts every open connection with a TCP reset (SO_LINGER 0).
    void reset_connections();
    /// Sets the mode and cuts every open connection in one step of the proxy's own thread:
    /// no connection carries traffic under both modes, so none swallows a request and then
    /// answers later ones (which real TCP never does).
    void cut_over(mode m);
    /// From now on connects to another port of the same host, and cuts every open connection
    /// in the same step: the address now reaches another server, as after a failover or a
    /// DNS change, and no connection spans both.
    void retarget(std::uint16_t target_port);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace redlock::test

#endif
