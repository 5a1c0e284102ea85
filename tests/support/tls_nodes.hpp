#ifndef REDLOCK_TESTS_SUPPORT_TLS_NODES_HPP
#define REDLOCK_TESTS_SUPPORT_TLS_NODES_HPP

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace redlock::test {

/// What a program printed on stdout and stderr together, and how it ended.
struct program_output {
    int status = -1; ///< exit status, or -1 when it did not exit normally
    std::string out;
};

/// Runs `argv` (no shell) and waits for it.
program_output run_program(const std::vector<std::string>& argv);

/// Everything the TLS tests need, made with the `openssl` command in a fresh directory that
/// the destructor removes: a CA, a second CA that signed nothing here, server certificates
/// signed by the CA, and a client certificate for mutual TLS. EC P-256 keys, valid two days.
class test_certificates {
public:
    test_certificates();
    ~test_certificates();
    test_certificates(const test_certificates&) = delete;
    test_certificates& operator=(const test_certificates&) = delete;

    const std::string& directory() const { return directory_; }
    std::string ca() const { return file("ca.crt"); }
    /// Trusted by nobody here: a node's certificate verified against it must be refused.
    std::string unrelated_ca() const { return file("unrelated-ca.crt"); }
    /// subjectAltName DNS:localhost, IP:127.0.0.1.
    std::string server_certificate() const { return file("server.crt"); }
    std::string server_key() const { return file("server.key"); }
    /// subjectAltName DNS:wrong.example only: matches neither localhost nor any IP.
    std::string wrong_name_certificate() const { return file("wrong-name.crt"); }
    std::string wrong_name_key() const { return file("wrong-name.key"); }
    /// CN=localhost and no subjectAltName: names localhost only in the subject.
    std::string common_name_only_certificate() const { return file("cn-only.crt"); }
    std::string common_name_only_key() const { return file("cn-only.key"); }
    /// A client certificate (extendedKeyUsage clientAuth) signed by the CA.
    std::string client_certificate() const { return file("client.crt"); }
    std::string client_key() const { return file("client.key"); }

private:
    std::string file(const std::string& name) const { return directory_ + "/" + name; }
    void openssl(const std::vector<std::string>& args) const;
    void make_ca(const std::string& name, const std::string& subject) const;
    void make_signed(const std::string& name, const std::string& subject,
                     const std::string& extensions) const;

    std::string directory_;
};

/// How one TLS-only redis-server is set up.
struct tls_server_options {
    std::string certificate;
    std::string key;
    /// What the server checks client certificates against (--tls-ca-cert-file).
    std::string ca;
    /// --tls-auth-clients: "no", "yes" (mutual TLS required) or "optional".
    std::string auth_clients = "no";
};

/// A redis-server listening with TLS only (--port 0 --tls-port P) on 127.0.0.1 and
/// 127.0.0.2, running as a child of this process for as long as this object lives. The
/// child is killed if this process dies (PR_SET_PDEATHSIG), so no test leaves one behind.
/// Ports come from REDLOCK_TLS_BASE_PORT upwards when set, else from the kernel.
class tls_node {
public:
    /// Starts the server and waits until it answers PING over TLS, verified with
    /// `certificates`' CA and client certificate.
    tls_node(const test_certificates& certificates, const tls_server_options& options);
    /// SIGTERM, then SIGKILL if it is still there after two seconds; always reaped.
    ~tls_node();
    tls_node(const tls_node&) = delete;
    tls_node& operator=(const tls_node&) = delete;

    int port() const { return port_; }
    /// `rediss://HOST:PORT`.
    std::string address(const std::string& host = "127.0.0.1") const;

    /// Runs one command through `redis-cli --tls` (with the CA and the client certificate)
    /// and returns its output without the final newline; throws when redis-cli fails.
    std::string run(const std::vector<std::string>& args) const;
    /// The value of `key`, or nothing when it does not exist.
    std::optional<std::string> get(const std::string& key) const;
    long long pttl(const std::string& key) const;
    long long dbsize() const;

private:
    bool start(const tls_server_options& options);
    bool answers() const;
    void stop();

    const test_certificates& certificates_;
    std::string directory_;
    int port_ = 0;
    pid_t pid_ = -1;
};

} // namespace redlock::test

#endif
