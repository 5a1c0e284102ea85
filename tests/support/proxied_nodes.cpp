#include "support/proxied_nodes.hpp"

#include "support/topology.hpp"

namespace redlock::test {

proxied_nodes::proxied_nodes(std::size_t count) {
    const auto nodes = topology::addresses();
    for (std::size_t i = 0; i < count && i < nodes.size(); ++i) {
        const auto colon = nodes[i].rfind(':');
        proxies_.push_back(std::make_unique<fault_proxy>(
            nodes[i].substr(0, colon),
            static_cast<std::uint16_t>(std::stoi(nodes[i].substr(colon + 1)))));
    }
}

std::vector<std::string> proxied_nodes::addresses() const {
    std::vector<std::string> out;
    for (const auto& p : proxies_) {
        out.push_back(p->address());
    }
    return out;
}

void proxied_nodes::partition(int node) {
    proxy(node).cut_over(fault_proxy::mode::blackhole);
}

void proxied_nodes::heal(int node) {
    proxy(node).cut_over(fault_proxy::mode::forward);
}

void proxied_nodes::heal_all() {
    for (int node = 1; node <= static_cast<int>(proxies_.size()); ++node) {
        heal(node);
    }
}

} // namespace redlock::test
