#ifndef REDLOCK_TESTS_SUPPORT_PROXIED_NODES_HPP
#define REDLOCK_TESTS_SUPPORT_PROXIED_NODES_HPP

#include "support/fault_proxy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace redlock::test {

/// A fault proxy in front of each of the first `count` local nodes, so that a test can cut
/// any of them off from its clients and heal them again.
class proxied_nodes {
public:
    explicit proxied_nodes(std::size_t count);

    /// The proxies' addresses, in node order, for client_config::nodes.
    std::vector<std::string> addresses() const;
    fault_proxy& proxy(int node) { return *proxies_.at(static_cast<std::size_t>(node - 1)); }

    /// A partition that outlasts TCP: open connections are cut, and new ones are accepted
    /// but never answered.
    void partition(int node);
    /// Connections made during the partition are cut, then traffic flows again.
    void heal(int node);
    void heal_all();

private:
    std::vector<std::unique_ptr<fault_proxy>> proxies_;
};

} // namespace redlock::test

#endif
