#include "support/shell.hpp"

#include <cstdio>
#include <sys/wait.h>

namespace redlock::test {

shell_result run_shell(const std::string& command) {
    shell_result r;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) {
        return r;
    }
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
        r.out.append(buffer, n);
    }
    const int wstatus = ::pclose(pipe);
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    return r;
}

} // namespace redlock::test
