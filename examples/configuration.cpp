// The configuration snippets of docs/security.md (TLS with mutual authentication) and
// docs/observability.md (Prometheus metrics), as one program: it builds the configuration,
// records one simulated outcome and prints what a /metrics endpoint would serve. It connects
// to nothing (the nodes below are examples), so it runs anywhere.
#include <redlock/redlock.hpp>

#include <iostream>
#include <memory>

int main() {
    redlock::client_config config;
    config.nodes = {"rediss://locker:secret@redis-a.internal:6380",
                    "rediss://locker:secret@redis-b.internal:6380",
                    "rediss://locker:secret@redis-c.internal:6380"};
    config.tls.ca_file = "/etc/redlock/ca.crt";
    config.tls.certificate_file = "/etc/redlock/client.crt"; // only for mutual TLS
    config.tls.private_key_file = "/etc/redlock/client.key";

    auto metrics = std::make_shared<redlock::prometheus_metrics>(config.nodes);
    config.metrics = metrics;
    // ... in the HTTP handler:  body = metrics->render();
    metrics->on_acquire({}, {}, std::chrono::milliseconds(2), 1);
    std::cout << metrics->render();
}
