// The user's handler: invoked exactly once, on its executor, never inside complete().
#include "operations/completion.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

namespace {

namespace asio = boost::asio;
using redlock::detail::completion;

// Regression (issue 12, defect 8): completing from inside the operation's own handlers used
// dispatch, which runs the handler right there when the caller is already on its executor:
// inside hiredis' reply parsing, where a throwing handler unwound through C code.
TEST(completion, never_runs_the_handler_inside_complete) {
    asio::io_context io;
    int calls = 0;
    bool returned = false;
    completion<void(int)> done(asio::any_completion_handler<void(int)>([&](int value) {
                                   EXPECT_TRUE(returned) << "ran inside complete()";
                                   EXPECT_EQ(value, 7);
                                   ++calls;
                               }),
                               io.get_executor());
    asio::post(io, [&] {
        done.complete(7);
        returned = true;
        done.complete(8); // a second completion is ignored
    });
    io.run();
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(done.done());
}

TEST(completion, runs_on_the_handlers_own_executor) {
    asio::io_context io;
    auto strand = asio::make_strand(io);
    bool on_strand = false;
    completion<void()> done(asio::any_completion_handler<void()>(asio::bind_executor(
                                strand, [&] { on_strand = strand.running_in_this_thread(); })),
                            io.get_executor());
    asio::post(io, [&] { done.complete(); });
    io.run();
    EXPECT_TRUE(on_strand);
}

} // namespace
