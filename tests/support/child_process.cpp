#include "support/child_process.hpp"

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace redlock::test {

namespace {

std::string temporary_path(const char* what) {
    static int counter = 0;
    return "/tmp/redlock_child_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
           "." + what;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

std::string_view name_of(std::string_view entry) {
    return entry.substr(0, entry.find('='));
}

} // namespace

child_process::child_process(const std::vector<std::string>& args,
                             const std::vector<std::string>& set,
                             const std::vector<std::string>& unset)
    : out_path_(temporary_path("out"))
    , err_path_(temporary_path("err")) {
    std::vector<std::string> env;
    for (char** entry = environ; *entry; ++entry) {
        const std::string_view item(*entry);
        bool keep = true;
        for (const auto& name : unset) {
            keep = keep && name_of(item) != name;
        }
        for (const auto& replacement : set) {
            keep = keep && name_of(item) != name_of(replacement);
        }
        if (keep) {
            env.emplace_back(item);
        }
    }
    env.insert(env.end(), set.begin(), set.end());
    auto argv_strings = args;
    const auto argv = pointers(argv_strings);
    const auto envp = pointers(env);

    posix_spawn_file_actions_t files;
    ::posix_spawn_file_actions_init(&files);
    ::posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out_path_.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err_path_.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
    // Only stdio: whatever else the program holds, it opened itself (the fd test counts on it).
    ::posix_spawn_file_actions_addclosefrom_np(&files, STDERR_FILENO + 1);
    const int error = ::posix_spawnp(&pid_, argv[0], &files, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&files);
    if (error != 0) {
        throw std::runtime_error("cannot start " + args.at(0));
    }
}

child_process::~child_process() {
    if (!status_) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    std::remove(out_path_.c_str());
    std::remove(err_path_.c_str());
}

void child_process::signal(int number) const {
    if (!status_) {
        ::kill(pid_, number);
    }
}

std::optional<int> child_process::wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!status_) {
        int wstatus = 0;
        if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
            status_ = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status_;
}

std::string child_process::out() const {
    return read_file(out_path_);
}

std::string child_process::err() const {
    return read_file(err_path_);
}

bool process_gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
        return true;
    }
    // pid (comm) state ...: the command name may hold spaces and parentheses.
    const auto close = line.rfind(')');
    return close == std::string::npos || line.substr(close + 2, 1) == "Z";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
}

} // namespace redlock::test
