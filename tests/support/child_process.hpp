#ifndef REDLOCK_TESTS_SUPPORT_CHILD_PROCESS_HPP
#define REDLOCK_TESTS_SUPPORT_CHILD_PROCESS_HPP

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace redlock::test {

/// A program running in the background with its stdout and stderr in files, for tests that
/// signal it, kill it, or read what it printed. It starts with stdio only (no other fd of
/// ours). Killed (SIGKILL) and reaped on destruction.
class child_process {
public:
    /// `args[0]` is searched in PATH. The environment is ours with `set` (NAME=VALUE) added
    /// or replacing, and the names in `unset` removed.
    explicit child_process(const std::vector<std::string>& args,
                           const std::vector<std::string>& set = {},
                           const std::vector<std::string>& unset = {});
    ~child_process();
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const { return pid_; }
    void signal(int number) const;
    /// Its exit status (128 + N when signal N ended it), or empty if it still runs after `limit`.
    std::optional<int> wait(std::chrono::milliseconds limit);
    std::string out() const;
    std::string err() const;

private:
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::string out_path_;
    std::string err_path_;
};

/// Whether `pid` has ended: no such process, or a zombie nobody reaped yet.
bool process_gone(pid_t pid);

/// The whole content of `path` (empty when it cannot be read).
std::string read_file(const std::string& path);

} // namespace redlock::test

#endif
