// A bridge from the client's operation spans to a tracer: docs/observability.md shows it.
// OpenTelemetry's C++ SDK is not a Debian package, so this one writes each span as a line;
// the comments say what the OpenTelemetry calls would be.
#include <redlock/metrics.hpp>

#include <iostream>
#include <memory>

class tracing_bridge final : public redlock::metrics_observer {
public:
    void on_operation(const redlock::operation_span& span) override {
        // OpenTelemetry: auto s = tracer->StartSpan("redlock." + operation,
        //     {{"db.system.name", "redis"}, ...}, {.start_system_time = span.start});
        std::cout << "redlock." << span.operation
                  << " start=" << span.start.time_since_epoch().count()
                  << " took=" << span.duration.count() << "ns";
        for (const auto& [name, value] : redlock::span_attributes(span)) {
            std::cout << ' ' << name << '=' << value; // OpenTelemetry: s->SetAttribute(name, value)
        }
        // OpenTelemetry: if (span.error) s->SetStatus(StatusCode::kError); s->End(...)
        std::cout << '\n';
    }
};

int main() {
    redlock::client_config config;
    config.nodes = {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"};
    config.metrics = std::make_shared<tracing_bridge>();
    // Show one span without nodes: what the client reports after each operation.
    const std::vector<std::string> keys{"stock:42"};
    redlock::operation_span span;
    span.operation = "acquire";
    span.lock = {keys, redlock::lock_mode::exclusive};
    span.nodes = 3;
    span.succeeded = 3;
    config.metrics->on_operation(span);
}
