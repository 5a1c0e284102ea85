#include "transport/asio_time_source.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace redlock::detail {

namespace {
class queued_alarm;
} // namespace

/// The armed alarms of one time source, on one steady_timer that ends no later than the
/// earliest of them.
class asio_time_source::alarm_queue : public std::enable_shared_from_this<alarm_queue> {
public:
    /// By due time, then by arming: alarms due together run in the order they were armed.
    using key = std::pair<clock::time_point, std::uint64_t>;
    using entries = std::map<key, queued_alarm*>;

    explicit alarm_queue(const boost::asio::any_io_executor& strand)
        : timer_(strand) {}

    /// Files `alarm` for `at` in `node` (an earlier arming's, so that re-arming allocates
    /// nothing, or empty) and returns where.
    entries::iterator insert(clock::time_point at, queued_alarm* alarm, entries::node_type node) {
        const key k{at, next_arming_++};
        entries::iterator where;
        if (node) {
            node.key() = k;
            node.mapped() = alarm;
            where = due_.insert(std::move(node)).position;
        } else {
            where = due_.emplace(k, alarm).first;
        }
        wake_for(at);
        return where;
    }

    /// Takes an entry out. The timer stays as it is (its wake-up will find less to do)
    /// unless `idle_when_empty` and nothing is left: a wait for nothing would keep the
    /// io_context's run() from returning after the client's last alarm was cancelled.
    entries::node_type extract(entries::iterator where, bool idle_when_empty) {
        auto node = due_.extract(where);
        if (idle_when_empty && due_.empty() && armed_for_) {
            armed_for_.reset();
            ++waits_;
            timer_.cancel();
        }
        return node;
    }

private:
    /// The timer moves only ever earlier here: a later alarm waits for the wake-up already
    /// coming. So arming and cancelling a timeout that rarely fires (an operation's, a
    /// connection's reply patience) mostly costs no timer call and no cancelled wait.
    void wake_for(clock::time_point at) {
        if (armed_for_ && *armed_for_ <= at) {
            return;
        }
        armed_for_ = at;
        const auto wait = ++waits_;
        timer_.expires_at(at);
        timer_.async_wait([self = weak_from_this(), wait](const boost::system::error_code& ec) {
            const auto queue = self.lock();
            // A wait superseded by an earlier one: cancelled, or, when it had already fired
            // and sat queued on the strand, recognised by its number.
            if (ec || !queue || wait != queue->waits_) {
                return;
            }
            queue->run_due();
        });
    }

    void run_due();
    /// The timer set for the earliest entry left, if any.
    void wake_for_first() {
        if (!due_.empty()) {
            wake_for(due_.begin()->first.first);
        }
    }

    boost::asio::steady_timer timer_;
    entries due_;
    std::optional<clock::time_point> armed_for_;
    std::uint64_t waits_ = 0;
    std::uint64_t next_arming_ = 0;
};

namespace {

/// An alarm as one entry (at most) of its time source's queue.
class queued_alarm final : public alarm {
public:
    using queue = asio_time_source::alarm_queue;

    explicit queued_alarm(std::shared_ptr<queue> q)
        : queue_(std::move(q)) {}
    ~queued_alarm() override { cancel(); }
    queued_alarm(const queued_alarm&) = delete;
    queued_alarm& operator=(const queued_alarm&) = delete;

    void arm(clock::time_point at, std::function<void()> fn) override {
        auto node = take_out(false);
        // The earlier arming's function goes now: a new arming replaces it.
        fn_ = std::move(fn);
        where_ = queue_->insert(at, this, std::move(node));
    }

    void cancel() override {
        if (where_) {
            spare_ = take_out(true);
        }
        // The function may own whoever owns this alarm: it goes last, when nothing of this
        // alarm is touched any more.
        const auto dropped = std::exchange(fn_, nullptr);
    }

    /// Called by the queue, which has taken the entry out and hands its node back: the
    /// function to run now.
    std::function<void()> due(queue::entries::node_type node) {
        where_.reset();
        spare_ = std::move(node);
        return std::exchange(fn_, nullptr);
    }

private:
    queue::entries::node_type take_out(bool idle_when_empty) {
        if (!where_) {
            return std::move(spare_);
        }
        auto node = queue_->extract(*where_, idle_when_empty);
        where_.reset();
        return node;
    }

    std::shared_ptr<queue> queue_;
    std::function<void()> fn_;
    std::optional<queue::entries::iterator> where_;
    queue::entries::node_type spare_;
};

} // namespace

void asio_time_source::alarm_queue::run_due() {
    armed_for_.reset();
    // Only what was armed before this wake-up and is due now: a function that arms again
    // for now runs on the next wake-up, never in a loop here. Entries armed during this
    // wake-up are stepped over, not stopped at: one armed for an instant already past sorts
    // first and would otherwise hold back every due entry behind it.
    const auto now = clock::now();
    const auto last_arming = next_arming_;
    try {
        for (;;) {
            auto first = due_.begin();
            while (first != due_.end() && first->first.first <= now &&
                   first->first.second >= last_arming) {
                ++first;
            }
            if (first == due_.end() || first->first.first > now) {
                break;
            }
            // Out of the queue before it runs: the function may re-arm or destroy its alarm,
            // or whoever owns the alarms and this time source (the wake-up holds the queue).
            auto* alarm = first->second;
            auto fn = alarm->due(due_.extract(first));
            if (fn) {
                fn();
            }
        }
    } catch (...) {
        // The exception leaves run(), which may be called again: the others stay woken.
        wake_for_first();
        throw;
    }
    wake_for_first();
}

asio_time_source::asio_time_source(boost::asio::any_io_executor strand)
    : queue_(std::make_shared<alarm_queue>(strand)) {}

asio_time_source::~asio_time_source() = default;

std::unique_ptr<alarm> asio_time_source::make_alarm() {
    return std::make_unique<queued_alarm>(queue_);
}

} // namespace redlock::detail
