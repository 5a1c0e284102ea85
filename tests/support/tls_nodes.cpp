#include "support/tls_nodes.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace redlock::test {

namespace {

using namespace std::chrono_literals;

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<char*> out;
    for (const auto& a : argv) {
        out.push_back(const_cast<char*>(a.c_str()));
    }
    out.push_back(nullptr);
    return out;
}

/// The full path of `program` found on PATH: the child after fork() may only call execv.
std::string on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
        const auto end = std::min(dirs.find(':', start), dirs.size());
        const auto candidate = dirs.substr(start, end - start) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        start = end + 1;
    }
    throw std::runtime_error(program + " not found on PATH (scripts/setup.sh installs it)");
}

/// A port nothing listens on right now: from REDLOCK_TLS_BASE_PORT upwards when set (each
/// call the next one), else one the kernel picks.
int free_port() {
    static int next_offset = 0;
    if (const char* base = std::getenv("REDLOCK_TLS_BASE_PORT"); base && *base) {
        return std::atoi(base) + next_offset++;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        throw std::runtime_error("no free port on 127.0.0.1");
    }
    ::close(fd);
    return ntohs(address.sin_port);
}

bool exited(pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) == pid;
}

} // namespace

program_output run_program(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe2 failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    pid_t pid = -1;
    auto args = c_argv(argv);
    const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    program_output result;
    if (spawned != 0) {
        ::close(fds[0]);
        result.out = "cannot start " + argv.front();
        return result;
    }
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            break;
        }
        result.out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

test_certificates::test_certificates() {
    std::string pattern = (std::filesystem::temp_directory_path() / "redlock-tls-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
        throw std::runtime_error("mkdtemp failed for " + pattern);
    }
    directory_ = pattern;
    try {
        make_ca("ca", "/CN=redlock test CA");
        make_ca("unrelated-ca", "/CN=redlock unrelated CA");
        make_signed("server", "/CN=localhost",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        make_signed("wrong-name", "/CN=wrong.example",
                    "subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth\n");
        make_signed("cn-only", "/CN=localhost", "extendedKeyUsage=serverAuth\n");
        make_signed("client", "/CN=redlock test client", "extendedKeyUsage=clientAuth\n");
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(directory_, ignored);
        throw;
    }
}

test_certificates::~test_certificates() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
}

void test_certificates::openssl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"openssl"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = run_program(argv);
    if (result.status != 0) {
        throw std::runtime_error("openssl " + args.front() + " failed: " + result.out);
    }
}

void test_certificates::make_ca(const std::string& name, const std::string& subject) const {
    // -config /dev/null: nothing from the system's openssl.cnf, every extension given here.
    openssl({"req",
             "-x509",
             "-new",
             "-newkey",
             "ec",
             "-pkeyopt",
             "ec_paramgen_curve:prime256v1",
             "-nodes",
             "-keyout",
             file(name + ".key"),
             "-out",
             file(name + ".crt"),
             "-days",
             "2",
             "-subj",
             subject,
             "-config",
             "/dev/null",
             "-addext",
             "basicConstraints=critical,CA:TRUE",
             "-addext",
             "keyUsage=critical,keyCertSign,cRLSign"});
}

void test_certificates::make_signed(const std::string& name, const std::string& subject,
                                    const std::string& extensions) const {
    const auto key = file(name + ".key");
    const auto request = file(name + ".csr");
    const auto extension_file = file(name + ".ext");
    openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", request, "-subj", subject, "-config", "/dev/null"});
    std::ofstream(extension_file) << extensions;
    openssl({"x509", "-req", "-in", request, "-CA", ca(), "-CAkey", file("ca.key"),
             "-CAcreateserial", "-CAserial", file("ca.srl"), "-days", "2", "-extfile",
             extension_file, "-out", file(name + ".crt")});
}

tls_node::tls_node(const test_certificates& certificates, const tls_server_options& options)
    : certificates_(certificates) {
    // A port picked free may be taken before the server binds it: then try another.
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (start(options)) {
            return;
        }
    }
    throw std::runtime_error("no TLS redis-server would start; see " + directory_ + "/redis.log");
}

tls_node::~tls_node() {
    stop();
}

std::string tls_node::address(const std::string& host) const {
    return "rediss://" + host + ":" + std::to_string(port_);
}

bool tls_node::start(const tls_server_options& options) {
    port_ = free_port();
    directory_ = certificates_.directory() + "/node-" + std::to_string(port_);
    std::filesystem::create_directories(directory_);
    const std::vector<std::string> argv{on_path("redis-server"),
                                        "--port",
                                        "0",
                                        "--tls-port",
                                        std::to_string(port_),
                                        "--bind",
                                        "127.0.0.1",
                                        "127.0.0.2",
                                        "--tls-cert-file",
                                        options.certificate,
                                        "--tls-key-file",
                                        options.key,
                                        "--tls-ca-cert-file",
                                        options.ca,
                                        "--tls-auth-clients",
                                        options.auth_clients,
                                        "--daemonize",
                                        "no",
                                        "--save",
                                        "",
                                        "--appendonly",
                                        "no",
                                        "--dir",
                                        directory_,
                                        "--logfile",
                                        directory_ + "/redis.log"};
    auto args = c_argv(argv);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
        // Only async-signal-safe calls until exec. The server dies with the thread that
        // started it, which is the test's.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(127);
        }
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
        if (exited(pid_)) {
            pid_ = -1;
            return false;
        }
        if (answers()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    stop();
    return false;
}

bool tls_node::answers() const {
    try {
        return run({"PING"}) == "PONG";
    } catch (const std::runtime_error&) {
        return false;
    }
}

void tls_node::stop() {
    if (pid_ <= 0) {
        return;
    }
    ::kill(pid_, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + 2s;
    while (!exited(pid_)) {
        if (std::chrono::steady_clock::now() >= until) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    pid_ = -1;
}

std::string tls_node::run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"redis-cli", "--tls",
                                  "--cacert",  certificates_.ca(),
                                  "--cert",    certificates_.client_certificate(),
                                  "--key",     certificates_.client_key(),
                                  "-h",        "127.0.0.1",
                                  "-p",        std::to_string(port_)};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_program(argv);
    if (result.status != 0) {
        throw std::runtime_error("redis-cli on TLS port " + std::to_string(port_) + ": " +
                                 result.out);
    }
    if (!result.out.empty() && result.out.back() == '\n') {
        result.out.pop_back();
    }
    return result.out;
}

std::optional<std::string> tls_node::get(const std::string& key) const {
    if (run({"EXISTS", key}) != "1") {
        return std::nullopt;
    }
    return run({"GET", key});
}

long long tls_node::pttl(const std::string& key) const {
    return std::stoll(run({"PTTL", key}));
}

long long tls_node::dbsize() const {
    // Less the keys every client keeps on every node, which are no locks and outlive them by
    // design: the clock mark (lua/clock_mark.lua) and the TTL ceiling (docs/safety.md).
    return std::stoll(run({"DBSIZE"})) - std::stoll(run({"EXISTS", "redlock:clock"})) -
           std::stoll(run({"EXISTS", "redlock:ttl-ceiling"}));
}

} // namespace redlock::test
