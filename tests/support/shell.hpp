#ifndef REDLOCK_TESTS_SUPPORT_SHELL_HPP
#define REDLOCK_TESTS_SUPPORT_SHELL_HPP

#include <string>

namespace redlock::test {

/// What a shell command line printed on its standard output, and its exit status (-1 when it
/// did not exit normally, or could not be started).
struct shell_result {
    int status = -1;
    std::string out;
};

/// Runs `command` with /bin/sh and waits for it to end. Its standard error goes where the
/// command line sends it (`2>&1` to capture it too).
shell_result run_shell(const std::string& command);

} // namespace redlock::test

#endif
