// libFuzzer target for everything that turns outside text or numbers into configuration:
// node addresses, lock options, client configs, CLI arguments and durations. Beyond "no
// crash, no leak, no UB", what is accepted must be usable: the invariants are checked.
//   scripts/fuzz.sh [seconds]
#include "cli/options.hpp"
#include "core/validate.hpp"
#include "core/validity.hpp"

#include <redlock/node_address.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

void require(bool condition) {
    if (!condition) {
        std::abort();
    }
}

/// Reads fixed-size values off the front of the input; zeros once it runs out.
class reader {
public:
    reader(const std::uint8_t* data, std::size_t size)
        : data_(data)
        , size_(size) {}

    template <typename T>
    T take() {
        T value{};
        const auto n = std::min(sizeof(T), size_);
        std::memcpy(&value, data_, n);
        data_ += n;
        size_ -= n;
        return value;
    }
    std::string_view rest() const { return {reinterpret_cast<const char*>(data_), size_}; }

private:
    const std::uint8_t* data_;
    std::size_t size_;
};

void fuzz_address(std::string_view text) {
    redlock::node_address a;
    std::string why;
    if (redlock::parse_node_address(text, a, why)) {
        require(!why.empty());
        return;
    }
    require(why.empty());
    require(a.db >= 0);
    if (a.kind == redlock::node_address::transport::tcp) {
        require(!a.host.empty() && a.port != 0);
    } else {
        require(!a.path.empty());
    }
    // What display() prints parses back to the same server.
    redlock::node_address again;
    if (!redlock::parse_node_address(a.display(), again, why)) {
        require(again.same_server(a));
    }
}

void fuzz_lock_options(reader& in) {
    redlock::lock_options o;
    o.ttl = std::chrono::milliseconds(in.take<std::int64_t>());
    o.node_timeout = std::chrono::milliseconds(in.take<std::int64_t>());
    o.clock_drift_factor = in.take<double>();
    o.drift_allowance = std::chrono::milliseconds(in.take<std::int64_t>());
    o.min_validity = std::chrono::milliseconds(in.take<std::int64_t>());
    o.retry.max_attempts = in.take<unsigned>();
    o.retry.wait_budget = std::chrono::milliseconds(in.take<std::int64_t>());
    o.retry.backoff_initial = std::chrono::milliseconds(in.take<std::int64_t>());
    o.retry.backoff_max = std::chrono::milliseconds(in.take<std::int64_t>());
    if (!redlock::detail::check_lock_options(o).empty()) {
        return;
    }
    // Accepted options leave a validity window that starts after it opens, and an attempt
    // deadline inside it.
    const auto start = redlock::detail::clock::time_point(std::chrono::hours(1));
    const auto until = redlock::detail::valid_until(start, o);
    require(until > start);
    require(redlock::detail::attempt_deadline(start, o) <= until);
    require(redlock::detail::attempt_deadline(start, o) > start);
}

void fuzz_client_config(std::string_view text) {
    redlock::client_config c;
    std::size_t begin = 0;
    while (begin <= text.size() && c.nodes.size() < 16) {
        const auto end = std::min(text.find('\n', begin), text.size());
        c.nodes.emplace_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    std::vector<redlock::node_address> addresses;
    if (redlock::detail::check_client_config(c, addresses).empty()) {
        require(addresses.size() == c.nodes.size());
        for (std::size_t i = 0; i < addresses.size(); ++i) {
            for (std::size_t j = i + 1; j < addresses.size(); ++j) {
                require(!addresses[i].same_server(addresses[j]));
            }
        }
    }
}

void fuzz_cli(std::string_view text) {
    std::vector<std::string> args{"redlock"};
    std::size_t begin = 0;
    while (begin <= text.size() && args.size() < 32) {
        const auto end = std::min(text.find(' ', begin), text.size());
        args.emplace_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    std::vector<const char*> argv;
    for (const auto& a : args) {
        argv.push_back(a.c_str());
    }
    std::string error;
    const auto parsed =
        redlock::cli::parse_options(static_cast<int>(argv.size()), argv.data(), nullptr, error);
    require(parsed.has_value() || !error.empty());
    std::string why;
    const auto d = redlock::cli::parse_duration(text, why);
    require(d ? d->count() >= 0 && *d <= redlock::cli::max_duration : !why.empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    reader in(data, size);
    switch (in.take<std::uint8_t>() % 4) {
    case 0:
        fuzz_address(in.rest());
        break;
    case 1:
        fuzz_lock_options(in);
        break;
    case 2:
        fuzz_client_config(in.rest());
        break;
    default:
        fuzz_cli(in.rest());
        break;
    }
    return 0;
}
