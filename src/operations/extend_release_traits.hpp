#ifndef REDLOCK_SRC_EXTEND_RELEASE_TRAITS_HPP
#define REDLOCK_SRC_EXTEND_RELEASE_TRAITS_HPP

#include "core/extend_fsm.hpp"
#include "core/release_fsm.hpp"
#include "runtime/client_impl.hpp"
#include "runtime/lock_access.hpp"
#include "transport/scripts.hpp"

#include "redlock/client.hpp"
#include "redlock/metrics.hpp"

namespace redlock::detail {

struct extend_traits {
    static constexpr std::string_view name = "extend";
    using signature = client::extend_signature;
    using fsm = extend_fsm;
    static constexpr bool sends_ttl = true;
    static constexpr bool quarantine_applies = true;
    /// A reply handled once the deadline is due is a timeout (the fsm counts none), also
    /// when a stalled event loop runs it before the timer: the report then says so too.
    static constexpr bool late_replies_are_timeouts = true;
    static void attach(client_impl& impl, const lock& held) { impl.extend_alive(held.token()); }
    static void detach(client_impl& impl, const lock& held) { impl.extend_gone(held.token()); }
    static void starting(client_impl&, const lock&) {}
    /// A node answered NOSCRIPT: the extend is sent again as EVAL while the round is open,
    /// or after it succeeded and within the new validity, and never once a release of the
    /// lock has started. A copy behind a release would run after it and, with
    /// recreate_missing, write the key back; after a failure the lock is in doubt.
    static bool may_resend(const client_impl& impl, const fsm& f, const lock& held, bool done,
                           bool succeeded, clock::time_point now) {
        if (impl.release_started(held.token())) {
            return false;
        }
        return !done || (succeeded && now < f.valid_until());
    }
    static constexpr std::string_view done = "extended";
    static constexpr std::string_view refusal = "token not found (expired or taken over)";

    static const script& to_run() { return extend_script; }
    static fsm make_fsm(std::size_t nodes, const lock& held, std::chrono::milliseconds ttl) {
        auto options = held.options();
        options.ttl = ttl;
        return fsm(nodes, options);
    }
    static round_action start(fsm& f, clock::time_point now, const lock& held) {
        return f.start(now, held.valid_until());
    }
    static round_action on_reply(fsm& f, std::size_t node, node_outcome o, clock::time_point now) {
        return f.on_reply(node, o, now);
    }
    static round_action on_deadline(fsm& f, clock::time_point now) { return f.on_deadline(now); }
    /// Renewals are reported by the watchdog, which knows they are renewals; the gauge of
    /// locks held learns the new validity.
    static void observe(client_impl& impl, metrics_observer&, std::error_code error, const lock&,
                        const extend_result& result, clock::time_point) {
        if (!error) {
            impl.lock_extended(result.lock);
        }
    }
    static extend_result result(const fsm& f, const lock& held, std::chrono::milliseconds ttl) {
        extend_result r;
        if (f.valid_until() == clock::time_point{}) {
            return r;
        }
        if (ttl == held.options().ttl) {
            // The same ttl (every renewal's): keys, token and options stay shared.
            r.lock = lock_access::with_validity(held, f.valid_until());
        } else {
            auto options = held.options();
            options.ttl = ttl;
            r.lock =
                lock(held.keys(), held.token(), f.valid_until(), options, held.fencing_token());
        }
        return r;
    }
};

struct release_traits {
    static constexpr std::string_view name = "release";
    using signature = client::release_signature;
    using fsm = release_fsm;
    static constexpr bool sends_ttl = false;
    /// Deleting our token is right everywhere, restarted or not.
    static constexpr bool quarantine_applies = false;
    /// A delete that succeeded late still freed the key: its reply is reported as it is.
    static constexpr bool late_replies_are_timeouts = false;
    static void attach(client_impl&, const lock&) {}
    static void detach(client_impl&, const lock&) {}
    static void starting(client_impl& impl, const lock& held) {
        impl.note_release(held.token());
        impl.lock_released(held);
    }
    /// A delete that did not run is worth running, even late (also once the release completed
    /// at quorum): it compares our token, which no later lock carries (every acquire draws
    /// its own), and nothing of this lock follows a release, so the copy, though queued behind
    /// commands sent since (a new acquire of the key), can only delete our own key.
    static bool may_resend(const client_impl&, const fsm&, const lock&, bool, bool,
                           clock::time_point) {
        return true;
    }
    static constexpr std::string_view done = "released";
    static constexpr std::string_view refusal = "token not found (expired or taken over)";

    static const script& to_run() { return release_script; }
    static fsm make_fsm(std::size_t nodes, const lock& held, std::chrono::milliseconds) {
        return fsm(nodes, held.options().node_timeout);
    }
    static round_action start(fsm& f, clock::time_point now, const lock&) { return f.start(now); }
    static round_action on_reply(fsm& f, std::size_t node, node_outcome o, clock::time_point) {
        return f.on_reply(node, o);
    }
    static round_action on_deadline(fsm& f, clock::time_point) { return f.on_deadline(); }
    static void observe(client_impl&, metrics_observer& m, std::error_code error, const lock& held,
                        const release_result&, clock::time_point now) {
        // valid_until = granting attempt's start + ttl - drift.
        const auto granted_at = held.valid_until() - (held.options().ttl - drift(held.options()));
        m.on_release(lock_info{held.keys(), held.options().mode}, error, now - granted_at);
    }
    /// `released` counts the deletes confirmed when the release completed: nodes still
    /// pending then may delete later (docs/api.md).
    static release_result result(const fsm& f, const lock&, std::chrono::milliseconds) {
        release_result r;
        r.released = f.votes().granted();
        return r;
    }
};

} // namespace redlock::detail

#endif
