#include "transport/hiredis_adapter.hpp"

#include "transport/sigpipe_guard.hpp"

#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace asio = boost::asio;

hiredis_adapter::hiredis_adapter(const asio::any_io_executor& executor, redisAsyncContext* context)
    : descriptor_(executor, context->c.fd)
    , context_(context) {}

std::shared_ptr<hiredis_adapter> hiredis_adapter::attach(const asio::any_io_executor& executor,
                                                         redisAsyncContext* context) {
    auto adapter = std::make_shared<hiredis_adapter>(executor, context);
    adapter->self_while_attached_ = adapter;
    context->ev.data = adapter.get();
    context->ev.addRead = &hiredis_adapter::add_read;
    context->ev.delRead = &hiredis_adapter::del_read;
    context->ev.addWrite = &hiredis_adapter::add_write;
    context->ev.delWrite = &hiredis_adapter::del_write;
    context->ev.cleanup = &hiredis_adapter::cleanup;
    // hiredis 0.14 completes a non-blocking connect on the first writability; ask for it
    // now so that the connect finishes even before any command is queued.
    add_write(adapter.get());
    return adapter;
}

void hiredis_adapter::add_read(void* self) {
    auto* a = static_cast<hiredis_adapter*>(self);
    a->read_wanted_ = true;
    if (!a->read_in_flight_) {
        a->start_read();
    }
}

void hiredis_adapter::del_read(void* self) {
    static_cast<hiredis_adapter*>(self)->read_wanted_ = false;
}

void hiredis_adapter::add_write(void* self) {
    auto* a = static_cast<hiredis_adapter*>(self);
    a->write_wanted_ = true;
    if (a->write_in_flight_ || a->writing_) {
        return; // a write is on its way, or hiredis asks from inside one (buffer full)
    }
    if (a->context_->c.flags & REDIS_CONNECTED) {
        a->flush_soon();
    } else {
        a->start_write(); // hiredis 0.14 completes the connect on writability
    }
}

void hiredis_adapter::del_write(void* self) {
    static_cast<hiredis_adapter*>(self)->write_wanted_ = false;
}

void hiredis_adapter::cleanup(void* self) {
    auto* a = static_cast<hiredis_adapter*>(self);
    a->context_ = nullptr;
    a->read_wanted_ = false;
    a->write_wanted_ = false;
    // Pending waits complete with operation_aborted; hiredis closes the fd itself.
    a->descriptor_.release();
    // The waits in flight hold their own references; this may be the last one otherwise.
    auto keep = std::move(a->self_while_attached_);
}

void hiredis_adapter::start_read() {
    read_in_flight_ = true;
    descriptor_.async_wait(asio::posix::descriptor_base::wait_read,
                           [self = shared_from_this()](const boost::system::error_code& ec) {
                               self->read_in_flight_ = false;
                               if (ec || !self->context_ || !self->read_wanted_) {
                                   return;
                               }
                               redisAsyncHandleRead(self->context_);
                               // Our waits are one-shot where hiredis expects level-triggered
                               // events (a connect still in progress asks for nothing new).
                               if (self->context_ && self->read_wanted_ && !self->read_in_flight_) {
                                   self->start_read();
                               }
                           });
}

void hiredis_adapter::start_write() {
    write_in_flight_ = true;
    descriptor_.async_wait(asio::posix::descriptor_base::wait_write,
                           [self = shared_from_this()](const boost::system::error_code& ec) {
                               self->write_in_flight_ = false;
                               if (ec || !self->context_ || !self->write_wanted_) {
                                   return;
                               }
                               self->write_now();
                           });
}

void hiredis_adapter::flush_soon() {
    write_in_flight_ = true;
    asio::post(descriptor_.get_executor(), [self = shared_from_this()] {
        self->write_in_flight_ = false;
        if (!self->context_ || !self->write_wanted_) {
            return;
        }
        self->write_now();
    });
}

void hiredis_adapter::write_now() {
    writing_ = true;
    {
        const sigpipe_guard no_sigpipe;
        redisAsyncHandleWrite(context_); // may free the context: cleanup() clears context_
    }
    writing_ = false;
    // Whatever did not fit waits for the socket to drain.
    if (context_ && write_wanted_ && !write_in_flight_) {
        start_write();
    }
}

} // namespace redlock::detail
