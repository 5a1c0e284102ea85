#include "core/ceiling_cover.hpp"

#include <algorithm>

namespace redlock::detail {
namespace {

std::chrono::microseconds drift_of(const ceiling_terms& terms, std::chrono::milliseconds span) {
    lock_options o;
    o.ttl = span;
    o.clock_drift_factor = terms.drift_factor;
    o.drift_allowance = terms.drift_allowance;
    return drift(o);
}

} // namespace

std::chrono::milliseconds ceiling_keep(const ceiling_terms& terms) noexcept {
    return 2 * terms.fleet_max_ttl;
}

clock::time_point ceiling_cover::covers_until(clock::time_point sent) const noexcept {
    const auto keep = ceiling_keep(terms_);
    return sent + keep - drift_of(terms_, keep) - terms_.fleet_max_ttl -
           drift_of(terms_, terms_.fleet_max_ttl);
}

void ceiling_cover::forget_if_new(std::uint64_t connection) {
    if (connection != connection_) {
        connection_ = connection;
        confirmed_ttl_ = std::chrono::milliseconds{0};
        confirmed_until_.reset();
        in_flight_.reset();
    }
}

ceiling_cover::plan ceiling_cover::cover(std::chrono::milliseconds ttl, clock::time_point now,
                                         std::uint64_t connection) {
    forget_if_new(connection);
    const bool confirmed = confirmed_until_ && now < *confirmed_until_;
    if (confirmed && confirmed_ttl_ >= ttl) {
        return {};
    }
    if (in_flight_ && in_flight_->ttl >= ttl && now < covers_until(in_flight_->sent_at)) {
        return {nullptr, in_flight_};
    }
    // What is still confirmed is raised along, so that one confirmation keeps covering both.
    auto raise = std::make_shared<ceiling_raise>();
    raise->ttl = std::max(ttl, confirmed ? confirmed_ttl_ : std::chrono::milliseconds{0});
    if (in_flight_ && now < covers_until(in_flight_->sent_at)) {
        raise->ttl = std::max(raise->ttl, in_flight_->ttl);
    }
    raise->sent_at = now;
    raise->connection = connection;
    in_flight_ = raise;
    return {raise, raise};
}

void ceiling_cover::raise_answered(const std::shared_ptr<ceiling_raise>& raise, bool ok,
                                   std::string why) {
    raise->outcome = ok ? ceiling_raise::state::raised : ceiling_raise::state::refused;
    raise->refusal = std::move(why);
    if (in_flight_ == raise) {
        in_flight_.reset();
    }
    if (!ok || raise->connection != connection_) {
        return;
    }
    const auto until = covers_until(raise->sent_at);
    const bool stale = !confirmed_until_ || *confirmed_until_ <= raise->sent_at;
    if (stale || raise->ttl >= confirmed_ttl_) {
        // Raises are answered in send order and carry the confirmed ttl along: the newer
        // one covers as much for longer.
        confirmed_ttl_ = raise->ttl;
        confirmed_until_ = until;
    }
}

} // namespace redlock::detail
