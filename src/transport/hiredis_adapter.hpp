#ifndef REDLOCK_SRC_HIREDIS_ADAPTER_HPP
#define REDLOCK_SRC_HIREDIS_ADAPTER_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <hiredis/async.h>

#include <memory>

namespace redlock::detail {

/// Drives one redisAsyncContext from an Asio executor: hiredis asks for read/write
/// readiness through its ev hooks, this waits for it on the context's fd.
///
/// Writes on a connected socket are not waited for: a connected socket is almost always
/// writable, so the commands queued during one handler are written together right after
/// it (one post, one write per node), and only a full socket buffer waits in the reactor.
///
/// hiredis owns the fd (it closes it in redisFree), so the descriptor is released, never
/// closed. hiredis may free the context inside a read or write callback; the cleanup hook
/// fires first, after which the context is never touched again.
class hiredis_adapter : public std::enable_shared_from_this<hiredis_adapter> {
public:
    /// Installs the hooks on `context`, which must be freshly created and without error.
    static std::shared_ptr<hiredis_adapter> attach(const boost::asio::any_io_executor& executor,
                                                   redisAsyncContext* context);

    hiredis_adapter(const boost::asio::any_io_executor& executor, redisAsyncContext* context);

private:
    static void add_read(void* self);
    static void del_read(void* self);
    static void add_write(void* self);
    static void del_write(void* self);
    static void cleanup(void* self);

    void start_read();
    void start_write();
    void flush_soon();
    void write_now();

    boost::asio::posix::stream_descriptor descriptor_;
    redisAsyncContext* context_;
    // hiredis' ev.data is a raw pointer: this keeps the adapter alive until cleanup.
    std::shared_ptr<hiredis_adapter> self_while_attached_;
    bool read_wanted_ = false;
    bool read_in_flight_ = false;
    bool write_wanted_ = false;
    bool write_in_flight_ = false;
    bool writing_ = false;
};

} // namespace redlock::detail

#endif
