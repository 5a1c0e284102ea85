#include "history.hpp"

#include "redlock/error.hpp"
#include "transport/scripts.hpp"

#include <algorithm>
#include <cstdlib>

namespace redlock::sim {

namespace {

std::string keys_of(const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& key : keys) {
        text += (text.empty() ? "" : "+") + key;
    }
    return text;
}

std::string mode_of(lock_mode mode, unsigned permits) {
    if (mode == lock_mode::shared) {
        return " shared";
    }
    return mode == lock_mode::permit ? " permit/" + std::to_string(permits) : "";
}

/// Holders that may hold the key at the same time: readers with readers, permit holders
/// of one permit count with each other (counted apart). Two counts exclude each other: a
/// node's hash has one mode, and a holder of the other count gets lock_mismatch there.
bool may_overlap(lock_mode a, unsigned permits_a, lock_mode b, unsigned permits_b) {
    return a == b && a != lock_mode::exclusive &&
           (a == lock_mode::shared || permits_a == permits_b);
}

} // namespace

int history::grant(int client, const lock& granted, std::int64_t valid_until_local,
                   bool with_lock) {
    holder h{client,
             granted.keys(),
             granted.options().mode,
             granted.options().permits,
             granted.token(),
             granted.fencing_token(),
             {},
             INT64_MAX,
             with_lock};
    h.windows.push_back({world_.now(), real_at(client, valid_until_local)});
    // When the winning attempt started (valid_until = start + ttl - drift): votes counted
    // from then on, so a sample answered later may have come too late to veto one.
    const auto& o = granted.options();
    const auto ttl = std::chrono::nanoseconds(o.ttl).count();
    const auto drift = static_cast<std::int64_t>(static_cast<double>(ttl) * o.clock_drift_factor) +
                       std::chrono::nanoseconds(o.drift_allowance).count();
    h.granted_at = world_.now();
    h.ttl = ttl;
    h.attempt_start = std::min(world_.now(), real_at(client, valid_until_local - ttl + drift));
    if (!o.fencing) {
        // A fenced grant is decided at its raise: only its validity bounds it.
        check_counted_in_time(client, o, valid_until_local, "granted " + keys_of(granted.keys()));
    }
    holders_.push_back(std::move(h));
    const int id = static_cast<int>(holders_.size()) - 1;
    const auto& added = holders_.back();
    watch_presence(id, added.windows.back().to);
    SIM_TRACE(world_, "c" + std::to_string(client),
              "GRANT " + keys_of(added.keys) + mode_of(added.mode, added.permits) + " holder h" +
                  std::to_string(id) + " token " + added.token.substr(0, 8) +
                  (added.fence ? " fence " + std::to_string(added.fence) : "") +
                  " valid until real " + fmt_time(added.windows.back().to));
    return id;
}

void history::check_counted_in_time(int client, const lock_options& o,
                                    std::int64_t valid_until_local, const std::string& what) {
    // (r): decided at the vote that completes the quorum, which must have been handled before
    // the round's deadline (the round began at valid_until - ttl + drift).
    const auto ttl = std::chrono::nanoseconds(o.ttl).count();
    const auto drift = static_cast<std::int64_t>(static_cast<double>(ttl) * o.clock_drift_factor) +
                       std::chrono::nanoseconds(o.drift_allowance).count();
    const auto start_local = valid_until_local - ttl + drift;
    const auto horizon = ttl - drift - std::chrono::nanoseconds(o.min_validity).count();
    const auto deadline_local =
        start_local + std::min(std::chrono::nanoseconds(o.node_timeout).count(), horizon);
    const auto decided_local = clocks_[static_cast<std::size_t>(client)].local(world_.now());
    // 1 us of slack: the library measures the drift in whole microseconds.
    if (decided_local > deadline_local + us) {
        violation("(r) vote counted after the deadline",
                  "c" + std::to_string(client) + " " + what + " " +
                      std::to_string((decided_local - deadline_local) / us) +
                      " us after its round's deadline" + paused_at(client, world_.now()));
    }
}

void history::extended(int id, const lock& l, std::int64_t valid_until_local) {
    check_counted_in_time(holders_[static_cast<std::size_t>(id)].client, l.options(),
                          valid_until_local, "extended " + keys_of(l.keys()));
    renew(id, valid_until_local);
}

void history::watch_presence(int id, real_ns to) {
    if (nodes_holding && to - us > world_.now()) {
        world_.at(to - us, -1, [this, id, to] { check_presence(id, to); });
    }
}

void history::check_presence(int id, real_ns to) {
    const auto& h = holders_[static_cast<std::size_t>(id)];
    const real_ns now = world_.now();
    if (now >= h.end) {
        return; // no longer relied on
    }
    if (const auto it = force_deletes_.find(h.token);
        it != force_deletes_.end() && it->second.front() <= now) {
        return; // an operator's override (see protected_time)
    }
    const int quorum = static_cast<int>(nodes_ / 2 + 1);
    // The round that opened this window began a ttl less the drift before its end (a
    // renewal's round, for a renewal's window; the drift covers the clocks' rates): a node
    // that crashed before then did not vote in it.
    const real_ns since = std::max(h.attempt_start, to - h.ttl);
    const auto on = nodes_holding(h.keys, h.token, since);
    const int holding = static_cast<int>(std::count(on.begin(), on.end(), true));
    if (holding >= quorum) {
        return;
    }
    const std::string what = describe(id) + ": on " + std::to_string(holding) + " of " +
                             std::to_string(nodes_) + " nodes at " + fmt_time(now) +
                             ", inside its validity";
    // A node whose wall clock stepped forward after the round began, and after the hold was
    // written there, may have expired it early: residue as for (a), when such nodes make up
    // the quorum's shortfall. A node the hold never reached excuses nothing.
    int stepped = 0;
    for (std::size_t node = 0; node < on.size(); ++node) {
        if (on[node]) {
            continue;
        }
        real_ns written = INT64_MAX;
        for (const auto& key : h.keys) {
            const auto it = holds_written_.find({static_cast<int>(node), key, h.token});
            if (it != holds_written_.end() && !it->second.empty()) {
                written = std::min(written, it->second.front());
            }
        }
        const bool step_after = std::any_of(steps_.begin(), steps_.end(), [&](const auto& st) {
            return st.node == static_cast<int>(node) && st.delta > 0 &&
                   st.at >= std::max(since, written) && st.at <= now;
        });
        stepped += written <= now && step_after ? 1 : 0;
    }
    if (holding + stepped >= quorum) {
        residue_.push_back("(u) token not on a quorum (a clock stepped): " + what);
        return;
    }
    violation("(u) token not on a quorum", what);
}

void history::renew(int id, std::int64_t valid_until_local) {
    auto& h = holders_[static_cast<std::size_t>(id)];
    h.windows.push_back({world_.now(), real_at(h.client, valid_until_local)});
    watch_presence(id, h.windows.back().to);
    SIM_TRACE(world_, "c" + std::to_string(h.client),
              "RENEWED h" + std::to_string(id) + " valid until real " +
                  fmt_time(h.windows.back().to));
}

void history::end(int id) {
    auto& h = holders_[static_cast<std::size_t>(id)];
    if (world_.now() < h.end) {
        h.end = world_.now();
        SIM_TRACE(world_, "c" + std::to_string(h.client),
                  "h" + std::to_string(id) + " stops relying on the lock");
    }
}

void history::force_deleted(const std::string& token) {
    force_deletes_[token].push_back(world_.now());
}

void history::loss(int id, std::int64_t valid_until_local) {
    auto& h = holders_[static_cast<std::size_t>(id)];
    const real_ns deadline = real_at(h.client, valid_until_local);
    const real_ns now = world_.now();
    SIM_TRACE(world_, "c" + std::to_string(h.client),
              "LOSS signalled for h" + std::to_string(id) + " (valid until real " +
                  fmt_time(deadline) + ")");
    if (now > deadline) {
        bool excused = false;
        for (const auto& p : pauses_[static_cast<std::size_t>(h.client)]) {
            if (p.from <= deadline && deadline < p.to && now == p.to) {
                excused = true;
            }
        }
        if (!excused) {
            violation("(d) late loss signal",
                      describe(id) + ": valid_until reached at " + fmt_time(deadline) +
                          " on the holder's clock, loss signalled at " + fmt_time(now));
        }
    }
    end(id);
}

std::vector<history::window> history::protected_time(const holder& h, bool cut_by_force) const {
    // A force release takes the lock away from its first delete of the holder's token: the
    // holder may have held a bare majority (one node fewer breaks it), and nothing here says
    // where its key landed. A grant delivered after that delete (its SETs landed before the
    // deletes) was never exclusive either.
    real_ns forced = INT64_MAX;
    if (const auto it = force_deletes_.find(h.token); cut_by_force && it != force_deletes_.end()) {
        forced = std::max(it->second.front(), h.windows.front().from);
    }
    std::vector<window> ws;
    for (auto w : h.windows) {
        w.to = std::min({w.to, h.end, forced});
        if (w.from < w.to) {
            ws.push_back(w);
        }
    }
    std::sort(ws.begin(), ws.end(), [](auto& a, auto& b) { return a.from < b.from; });
    std::vector<window> merged;
    for (const auto& w : ws) {
        if (!merged.empty() && w.from <= merged.back().to) {
            merged.back().to = std::max(merged.back().to, w.to);
        } else {
            merged.push_back(w);
        }
    }
    return merged;
}

real_ns history::covered_from(const holder& h, real_ns from) const {
    holder uncut = h;
    uncut.end = INT64_MAX;
    real_ns covered = from;
    for (const auto& w : protected_time(uncut, false)) {
        bool bridged = false;
        for (const auto& p : pauses_[static_cast<std::size_t>(h.client)]) {
            // A gap that the holder slept through, closed by a renewal it took in at the
            // instant it resumed (validity counts from the renewal's start): nothing of the
            // holder ran unprotected.
            bridged |= p.from <= covered && covered < p.to && w.from == p.to;
        }
        if ((w.from <= covered || bridged) && w.to > covered) {
            covered = w.to;
        }
    }
    return covered;
}

std::string history::paused_at(int client, real_ns t) const {
    for (const auto& p : pauses_[static_cast<std::size_t>(client)]) {
        if (p.from <= t && t < p.to) {
            return "; the holder was paused from " + fmt_time(p.from) + " to " + fmt_time(p.to);
        }
    }
    return {};
}

std::string history::adopted_between(const holder& h, real_ns from, real_ns to) const {
    for (std::size_t i = 1; i < h.windows.size(); ++i) {
        if (h.windows[i].from > from && h.windows[i].from <= to) {
            return "; a renewal was adopted at " + fmt_time(h.windows[i].from) +
                   ", after the validity had run out";
        }
    }
    return {};
}

void history::watch_ended(int id, bool lost) {
    const auto& h = holders_[static_cast<std::size_t>(id)];
    if (lost) {
        return;
    }
    const real_ns until = std::min(world_.now(), h.end);
    const real_ns covered = covered_from(h, h.windows.front().from);
    for (const auto& p : pauses_[static_cast<std::size_t>(h.client)]) {
        if (p.from <= covered && covered < p.to && until == p.to) {
            // Paused across valid_until, and the holder stopped relying at the very instant
            // it resumed, on a wake-up due before the deadline: no work of it ran unprotected.
            // (with_lock is held to more: its work's last step did run, see (c).)
            return;
        }
    }
    if (covered < until) {
        violation("(d) loss never signalled",
                  describe(id) + ": validity ran out at " + fmt_time(covered) +
                      " while its watchdog ran (relied on until " + fmt_time(until) +
                      "), no loss signal" + adopted_between(h, covered, until) +
                      paused_at(h.client, covered));
    }
}

void history::with_lock_success(int id, real_ns work_start) {
    auto& h = holders_[static_cast<std::size_t>(id)];
    const real_ns work_end = std::min(world_.now(), h.end);
    // Windows only, uncut: the work must lie inside the validity it was given.
    const real_ns covered = covered_from(h, work_start);
    if (covered < work_end) {
        violation("(c) with_lock success outside validity",
                  describe(id) + ": work ran " + fmt_time(work_start) + " .. " +
                      fmt_time(work_end) + " but validity covered it only until " +
                      fmt_time(covered) + adopted_between(h, covered, work_end) +
                      paused_at(h.client, covered));
    }
}

void history::on_send(int client, int node, const std::vector<std::string>& args) {
    if (args.size() < 2) {
        return;
    }
    const std::string& verb = args[0];
    const bool eval = verb == "EVAL" || verb == "EVALSHA";
    auto is = [&](const detail::script& s) {
        return eval && (args[1] == s.sha1 || args[1] == s.text);
    };
    std::string token;
    bool creates = false;
    if (verb == "SET" && args.size() >= 3) {
        token = args[2];
        creates = true;
    } else if (eval && args.size() >= 4) {
        // KEYS come first, then ARGV[1], the token, for every lock script.
        const auto keys = std::strtoul(args[2].c_str(), nullptr, 10);
        if (keys < args.size() - 3) {
            token = args[3 + keys];
        }
        if (is(detail::release_script)) {
            if (releasing_.count(token)) {
                released_.insert(token);
            }
        } else {
            creates = is(detail::extend_script) || is(detail::acquire_script) ||
                      is(detail::holders_acquire_script);
        }
    }
    if (creates && closed_.count(client)) {
        violation("(i) command after close", "client c" + std::to_string(client) + " sent " + verb +
                                                 " for token " + token +
                                                 " after its close() had run");
    }
    if (creates && released_.count(token)) {
        violation("(g) command after release",
                  "client c" + std::to_string(client) + " sent " + verb + " " +
                      (is(detail::extend_script) ? "extend" : "") + " for token " +
                      token.substr(0, 8) + " to node" + std::to_string(node) +
                      " after it had sent the release");
    }
}

void history::mismatch_heard(int client, int node, const std::vector<std::string>& args,
                             real_ns sent_at) {
    const bool eval = args.size() >= 4 && (args[0] == "EVAL" || args[0] == "EVALSHA");
    const auto keys = eval ? std::strtoul(args[2].c_str(), nullptr, 10) : 0;
    if (!eval || keys >= args.size() - 3) {
        return;
    }
    auto& m = mismatches_.try_emplace(args[3 + keys], mismatches{client, world_.now(), sent_at, {}})
                  .first->second;
    m.sent = std::min(m.sent, sent_at);
    m.nodes.emplace(node, world_.now());
}

void history::waiter_ended(int client, std::string keys, real_ns started, bool granted,
                           bool may_barge, bool queued) {
    waiters_.push_back(
        {client, std::move(keys), started, world_.now(), granted, may_barge, queued});
}

std::size_t history::acquire_began(int client) {
    if (spans_.size() <= static_cast<std::size_t>(client)) {
        spans_.resize(static_cast<std::size_t>(client) + 1);
    }
    auto& mine = spans_[static_cast<std::size_t>(client)];
    mine.emplace_back(world_.now(), INT64_MAX);
    return mine.size() - 1;
}

void history::span_ended(int client, std::size_t span) {
    spans_.at(static_cast<std::size_t>(client)).at(span).second = world_.now();
}

void history::acquire_ended(int client, std::size_t span, real_ns started, real_ns node_timeout,
                            std::error_code ec) {
    span_ended(client, span);
    const auto& spans = spans_[static_cast<std::size_t>(client)];
    for (auto it = mismatches_.begin(); it != mismatches_.end();) {
        const auto& m = it->second;
        // Answers to commands sent before this acquire started (late answers to an earlier
        // acquire of this client, after it ended) are not this acquire's votes.
        if (m.client != client || m.sent < started) {
            ++it;
            continue;
        }
        // Sent while another acquire of the client (another lane) was out: whose it was is
        // not known here (a token per attempt), so it is judged for neither.
        bool shared = false;
        for (std::size_t other = 0; other < spans.size(); ++other) {
            shared = shared || (other != span && spans[other].first <= m.sent &&
                                m.sent <= spans[other].second);
        }
        if (shared) {
            it = mismatches_.erase(it);
            continue;
        }
        // Answers well inside the node_timeout (the client's clock runs within 0.25 % of
        // real time): votes of the attempt, not late replies.
        const auto in_time = std::count_if(m.nodes.begin(), m.nodes.end(), [&](const auto& n) {
            return n.second - m.sent < node_timeout - node_timeout / 100;
        });
        // While its process was paused, the client's timer and the answers are both due at
        // its resume, in either order: the answers may come too late for the attempt.
        bool paused = false;
        for (const auto& p : pauses_[static_cast<std::size_t>(client)]) {
            paused |= p.from <= world_.now() && p.to >= m.first;
        }
        // A quorum: once a mismatch is heard, the attempt waits for the votes still out while
        // they could make a quorum of mismatches (acquire_fsm::decide).
        if (static_cast<std::size_t>(in_time) >= nodes_ / 2 + 1 && !paused &&
            ec != errc::lock_mismatch && ec != errc::cancelled) {
            violation("(q) lock_mismatch silent",
                      "c" + std::to_string(client) + "'s attempt with token " +
                          it->first.substr(0, 8) + " heard REDLOCK_MISMATCH from " +
                          std::to_string(in_time) + " of " + std::to_string(nodes_) +
                          " nodes in time, and its acquire ended with " +
                          (ec ? ec.message() : std::string("a grant")));
        }
        it = mismatches_.erase(it);
    }
}

void history::deleted(int node, const std::string& key, const std::string& token) {
    deletes_.insert({node, key, token});
    for (std::size_t id = 0; id < holders_.size(); ++id) {
        const auto& h = holders_[id];
        if (h.token == token && std::find(h.keys.begin(), h.keys.end(), key) != h.keys.end() &&
            world_.now() < h.end) {
            violation("(k) delete of a live holder's key",
                      "node" + std::to_string(node) + " deleted " + key + " of " +
                          describe(static_cast<int>(id)) + ", which still relied on it");
        }
    }
}

void history::release_cut_at_close(int client, const std::string& token, real_ns sent_at) {
    const auto timeout = release_timeout_.find(token);
    if (timeout == release_timeout_.end()) {
        return; // a cleanup of an acquire, not a release
    }
    // The drain runs on the client's clock, whose rate is within 0.25 % of real time.
    if (world_.now() - sent_at < timeout->second - timeout->second / 100) {
        violation("(l) close() cut a release short",
                  "c" + std::to_string(client) + " gave up on the release of token " +
                      token.substr(0, 8) + " " + fmt_time(world_.now() - sent_at) +
                      " after sending it, before its node_timeout of " + fmt_time(timeout->second));
    }
}

void history::completed(std::uint64_t call, const char* what) {
    if (++calls_[call] > 1) {
        violation("(f) handler ran twice", std::string(what) + " call #" + std::to_string(call));
    }
}

bool history::detectable(int client, std::size_t step, real_ns before) const {
    const auto& st = steps_[step];
    const auto found = samples_.find({client, st.node});
    if (found == samples_.end()) {
        return false;
    }
    // The bound core/clock_watch applies, with the drift factor every simulated lock uses
    // (scenario.cpp) and its 1 ms resolution margin.
    constexpr double rate = 0.01;
    constexpr double margin_us = 1000;
    const auto& ss = found->second;
    // A step back recorded on the node by a run that read its clock after the step. Of the
    // runs that read the recorded node time, the earliest: the record may be older than st.
    static const bool heeded = clock_mark_setting() != clock_mark_use::ignored;
    for (const auto& b : ss) {
        if (!heeded || b.step_at_us == 0 || b.received_at > before) {
            continue;
        }
        const auto reads = clock_reads_.find({st.node, b.step_at_us});
        if (reads != clock_reads_.end() &&
            *std::min_element(reads->second.begin(), reads->second.end()) > st.at) {
            return true;
        }
    }
    for (std::size_t i = 1; i < ss.size(); ++i) {
        const auto& a = ss[i - 1];
        const auto& b = ss[i];
        if (!(a.read_at < st.at && st.at <= b.read_at) || b.received_at > before) {
            continue;
        }
        const auto mid = [](const struct time_sample& x) {
            return static_cast<double>(x.sent_local + (x.received_local - x.sent_local) / 2) / 1e3;
        };
        const auto error = [](const struct time_sample& x) {
            return static_cast<double>(x.received_local - x.sent_local) / 2e3;
        };
        const double moved =
            (static_cast<double>(b.node_us) - mid(b)) - (static_cast<double>(a.node_us) - mid(a));
        const double bound = rate * std::abs(mid(b) - mid(a)) + error(a) + error(b) + margin_us;
        if (std::abs(moved) > bound) {
            return true;
        }
    }
    return false;
}

std::string history::undetectable_step(int earlier, int later) const {
    const auto& e = holders_[static_cast<std::size_t>(earlier)];
    const auto& l = holders_[static_cast<std::size_t>(later)];
    // How long `earlier`'s key lives on a node whose clock did not step, as of `later`'s
    // grant: its grant's window (written at its attempt's start, also where that grant
    // came later, after a pause) and the renewals before `later`'s grant.
    if (e.windows.empty() || e.attempt_start >= l.granted_at) {
        return {};
    }
    real_ns lives_until = e.windows.front().to;
    for (const auto& w : e.windows) {
        if (w.from <= l.granted_at) {
            lives_until = std::max(lives_until, w.to);
        }
    }
    std::map<int, real_ns> forward; // per node, the steps in between, added up
    for (const auto& st : steps_) {
        if (st.delta > 0 && st.at >= e.attempt_start && st.at < l.granted_at) {
            forward[st.node] += st.delta;
        }
    }
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        const auto& st = steps_[i];
        if (st.delta > 0 && st.at >= e.attempt_start && st.at < l.granted_at &&
            lives_until - forward[st.node] < l.granted_at &&
            !detectable(l.client, i, l.attempt_start)) {
            return "n" + std::to_string(st.node) + "'s clock stepped by +" + fmt_time(st.delta) +
                   " at " + fmt_time(st.at) + ", undetectable by c" + std::to_string(l.client) +
                   " by its grant";
        }
    }
    return {};
}

std::string history::undetected_role_change(int earlier, int later, const std::string& key,
                                            real_ns at) const {
    const auto& e = holders_[static_cast<std::size_t>(earlier)];
    const auto& l = holders_[static_cast<std::size_t>(later)];
    // The latest round of `earlier` that protects it at `at`: a round begun after the
    // demotion was counted on the new data set, where the hold was gone.
    real_ns round = e.attempt_start;
    for (const auto& w : e.windows) {
        if (w.from <= at && at < w.to) {
            round = std::max(round, w.to - e.ttl);
        }
    }
    for (const auto& rc : role_changes_) {
        if (round >= rc.at || rc.at >= l.granted_at || !dropped_hold ||
            dropped_hold(rc.node, key, e.token) != rc.at) {
            continue;
        }
        const auto written = holds_written_.find({rc.node, key, l.token});
        if (written == holds_written_.end()) {
            continue;
        }
        for (const real_ns write : written->second) {
            if (write < rc.at || write > l.granted_at) {
                continue;
            }
            bool seen = false;
            if (const auto reads = info_reads_.find({l.client, rc.node});
                reads != info_reads_.end()) {
                seen = std::any_of(reads->second.begin(), reads->second.end(), [&](const auto& r) {
                    return r.read_at >= rc.at && r.read_at < write;
                });
            }
            if (!seen) {
                return "n" + std::to_string(rc.node) + " demoted and promoted in place at " +
                       fmt_time(rc.at) + ", dropping " + e.token.substr(0, 8) + "'s hold; c" +
                       std::to_string(l.client) + " wrote there at " + fmt_time(write) +
                       " having read no INFO of it since";
            }
        }
    }
    return {};
}

std::string history::undetected_forgetting(int earlier, int later, const std::string& key,
                                           real_ns at) const {
    auto excuse = undetectable_step(earlier, later);
    return excuse.empty() ? undetected_role_change(earlier, later, key, at) : excuse;
}

void history::violation(const std::string& invariant, const std::string& what) {
    violations_.push_back(invariant + ": " + what);
    SIM_TRACE(world_, "CHECK", "VIOLATION " + invariant + ": " + what);
}

void history::note(const std::string& what) {
    if (std::find(notes_.begin(), notes_.end(), what) == notes_.end()) {
        notes_.push_back(what);
    }
    SIM_TRACE(world_, "NOTE", what);
}

std::string history::describe(int id) const {
    const auto& h = holders_[static_cast<std::size_t>(id)];
    return "h" + std::to_string(id) + " (c" + std::to_string(h.client) + " " + keys_of(h.keys) +
           mode_of(h.mode, h.permits) + " token " + h.token.substr(0, 8) +
           (h.fence ? " fence " + std::to_string(h.fence) : "") + ")";
}

void history::sleep(int client, const void* op, std::optional<std::int64_t> bound_local) {
    if (bound_local) {
        // A re-armed sleep (an early wake, or back to the backoff) keeps its start.
        const auto it = sleeping_.find(op);
        sleeping_[op] = {it != sleeping_.end() ? it->second.since : world_.now(), *bound_local};
        return;
    }
    const auto it = sleeping_.find(op);
    if (it == sleeping_.end()) {
        return;
    }
    const auto s = it->second;
    sleeping_.erase(it);
    const auto local_now = clock(client).local(world_.now());
    // Timers fire at the real instant their local deadline maps to, rounded to the
    // nanosecond: a few nanoseconds past is the mapping, not the library.
    constexpr std::int64_t rounding = 16;
    if (local_now <= s.bound_local + rounding) {
        return;
    }
    for (const auto& p : pauses_[static_cast<std::size_t>(client)]) {
        if (p.from <= world_.now() && p.to >= s.since) {
            return; // held back by the pause, not by the library
        }
    }
    violation("(m) slept past its backoff",
              "c" + std::to_string(client) + " slept from " + fmt_time(s.since) + " to " +
                  fmt_time(world_.now()) + ", " + std::to_string(local_now - s.bound_local) +
                  " ns past its backoff's end");
}

void history::check_end() {
    // (x): b granted while a, of the same client and keys, called earlier, still waited.
    for (const auto& a : waiters_) {
        for (const auto& b : waiters_) {
            if (a.client == b.client && a.keys == b.keys && a.started < b.started && b.granted &&
                a.queued && b.queued && !b.may_barge && b.ended < a.ended) {
                violation("(x) waiter overtaken",
                          "c" + std::to_string(a.client) + " " + a.keys +
                              ": the acquire called at " + fmt_time(b.started) +
                              " was granted at " + fmt_time(b.ended) + " while the one called at " +
                              fmt_time(a.started) + " still waited (it ended at " +
                              fmt_time(a.ended) + (a.granted ? ", granted)" : ", not granted)"));
            }
        }
    }
    for (std::size_t i = 0; i < calls_.size(); ++i) {
        if (calls_[i] == 0) {
            violation("(f) handler never ran", "call #" + std::to_string(i));
        }
    }
    // (s): where every command arrives and runs within a node_timeout, the key a failed
    // attempt wrote is deleted by its cleanup (release.lua), never left to expire. Every
    // attempt has a token of its own; the keys of granted tokens are left out: they go with
    // their release, or expire on purpose (a holder that stopped relying on them).
    if (check_cleanups_) {
        std::set<std::string> granted;
        for (const auto& h : holders_) {
            granted.insert(h.token);
        }
        for (const auto& written : lock_sets_) {
            const auto& [node, key, token] = written;
            if (!granted.count(token) && !deletes_.count(written)) {
                violation("(s) a failed attempt's key left to expire",
                          "node" + std::to_string(node) + ": " + key + " of token " +
                              token.substr(0, 8) + " was never deleted");
            }
        }
    }
    std::map<std::string, std::vector<int>> by_key;
    for (std::size_t i = 0; i < holders_.size(); ++i) {
        for (const auto& key : holders_[i].keys) {
            by_key[key].push_back(static_cast<int>(i));
        }
    }
    for (const auto& [key, ids] : by_key) {
        std::vector<std::pair<int, std::vector<window>>> times;
        for (int id : ids) {
            times.emplace_back(id, protected_time(holders_[static_cast<std::size_t>(id)]));
        }
        // (a)
        for (std::size_t i = 0; i < times.size(); ++i) {
            for (std::size_t j = i + 1; j < times.size(); ++j) {
                const auto& a = holders_[static_cast<std::size_t>(times[i].first)];
                const auto& b = holders_[static_cast<std::size_t>(times[j].first)];
                if (a.token == b.token || may_overlap(a.mode, a.permits, b.mode, b.permits)) {
                    continue;
                }
                for (const auto& wa : times[i].second) {
                    for (const auto& wb : times[j].second) {
                        if (wa.from < wb.to && wb.from < wa.to) {
                            // Either grant may have counted a node whose clock stepped where
                            // no sample of its client could see it, dropping the other's key
                            // (written first, even where its grant came later: a paused
                            // client), or one whose role changed in place, unseen by it.
                            const real_ns from = std::max(wa.from, wb.from);
                            auto excuse =
                                undetected_forgetting(times[i].first, times[j].first, key, from);
                            if (excuse.empty()) {
                                excuse = undetected_forgetting(times[j].first, times[i].first, key,
                                                               from);
                            }
                            if (!excuse.empty()) {
                                residue_.push_back("(a) two holders (" + excuse +
                                                   "): " + describe(times[i].first) + " overlaps " +
                                                   describe(times[j].first));
                                continue;
                            }
                            violation("(a) two holders",
                                      describe(times[i].first) + " valid " + fmt_time(wa.from) +
                                          " .. " + fmt_time(wa.to) + " overlaps " +
                                          describe(times[j].first) + " valid " + fmt_time(wb.from) +
                                          " .. " + fmt_time(wb.to));
                        }
                    }
                }
            }
        }
        // (a) for permits: never more holders of one permit count at once than that count
        // (holders of two counts never overlap at all, above).
        std::map<unsigned, std::vector<std::pair<real_ns, int>>> edges_of; // -1 before +1
        for (const auto& [id, ws] : times) {
            const auto& h = holders_[static_cast<std::size_t>(id)];
            if (h.mode != lock_mode::permit) {
                continue;
            }
            for (const auto& wnd : ws) {
                edges_of[h.permits].emplace_back(wnd.from, 1);
                edges_of[h.permits].emplace_back(wnd.to, -1);
            }
        }
        for (auto& [permits, edges] : edges_of) {
            std::sort(edges.begin(), edges.end());
            int at_once = 0;
            for (const auto& [t, step] : edges) {
                at_once += step;
                if (at_once > static_cast<int>(permits)) {
                    // Excused only when a step or an unseen role change could have dropped
                    // the hold of one holder there from a node before another holder there
                    // was granted.
                    std::vector<int> there;
                    for (const auto& [id, ws] : times) {
                        const auto& h = holders_[static_cast<std::size_t>(id)];
                        // A copy: clang 14 cannot capture a structured binding.
                        const real_ns at = t;
                        const bool holds = std::any_of(ws.begin(), ws.end(), [at](const auto& w) {
                            return w.from <= at && at < w.to;
                        });
                        if (h.mode == lock_mode::permit && h.permits == permits && holds) {
                            there.push_back(id);
                        }
                    }
                    std::string excuse;
                    for (const int e : there) {
                        for (const int l : there) {
                            if (excuse.empty() && e != l) {
                                excuse = undetected_forgetting(e, l, key, t);
                            }
                        }
                    }
                    if (!excuse.empty()) {
                        residue_.push_back("(a) more holders than permits (" + excuse + ") of " +
                                           key);
                        break;
                    }
                    violation("(a) more holders than permits",
                              std::to_string(at_once) + " permit holders of " + key + " at " +
                                  fmt_time(t) + ", " + std::to_string(permits) + " permits");
                    break;
                }
            }
        }
        // (b): in grant order, among holders that were ever valid.
        std::vector<std::pair<real_ns, int>> fenced;
        for (const auto& [id, ws] : times) {
            const auto& h = holders_[static_cast<std::size_t>(id)];
            if (h.fence != 0 && !ws.empty()) {
                // Honest counters grow by one per grant: a token this far up came from a
                // node's lie that the client let through (lies_about_counter).
                if (h.fence >= (std::uint64_t{1} << 63)) {
                    violation("(b) fencing token from a lying counter", describe(id));
                }
                fenced.emplace_back(h.windows.front().from, id);
            }
        }
        std::sort(fenced.begin(), fenced.end());
        for (std::size_t i = 0; i < fenced.size(); ++i) {
            for (std::size_t j = i + 1; j < fenced.size(); ++j) {
                const auto& prev = holders_[static_cast<std::size_t>(fenced[i].second)];
                const auto& cur = holders_[static_cast<std::size_t>(fenced[j].second)];
                // Two readers (or permit holders) raised concurrently may be told of their
                // grants in either order: their tokens need only differ.
                const bool ordered = !may_overlap(prev.mode, prev.permits, cur.mode, cur.permits);
                // Lost counters: other clients' tokens may repeat (docs/safety.md says so);
                // the client's own floor keeps its own tokens apart.
                const bool lost_between = std::any_of(
                    counters_lost_at_.begin(), counters_lost_at_.end(), [&](real_ns at) {
                        return prev.attempt_start <= at && at <= cur.windows.front().from;
                    });
                if (lost_between && cur.client != prev.client) {
                    continue;
                }
                if (ordered ? cur.fence <= prev.fence : cur.fence == prev.fence) {
                    violation("(b) fencing token not increasing", describe(fenced[j].second) +
                                                                      " granted after " +
                                                                      describe(fenced[i].second));
                }
            }
        }
    }
}

} // namespace redlock::sim
