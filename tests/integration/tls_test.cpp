// TLS against real redis-server nodes speaking TLS only, with certificates made for the
// test: verified acquire/extend/release, each way verification must refuse (unknown CA,
// host name, IP address), the server name override, mutual TLS, TLS and plain nodes in one
// client, and the command-line tool. Every outcome is checked on the nodes themselves.
#include "support/fixture.hpp"
#include "support/log_record.hpp"
#include "support/tls_nodes.hpp"

#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

class tls_test : public nodes_test {
protected:
    using node_group = std::vector<std::unique_ptr<tls_node>>;

    /// Three TLS-only nodes with the same setup.
    node_group three(const tls_server_options& setup) {
        node_group nodes;
        for (int i = 0; i < 3; ++i) {
            nodes.push_back(std::make_unique<tls_node>(certificates_, setup));
        }
        return nodes;
    }

    /// Certificate for localhost and 127.0.0.1; client certificates optional.
    node_group verified_nodes() {
        return three({certificates_.server_certificate(), certificates_.server_key(),
                      certificates_.ca(), "no"});
    }

    /// Certificate for wrong.example only.
    node_group wrong_name_nodes() {
        return three({certificates_.wrong_name_certificate(), certificates_.wrong_name_key(),
                      certificates_.ca(), "no"});
    }

    /// Mutual TLS required.
    node_group mutual_nodes() {
        return three({certificates_.server_certificate(), certificates_.server_key(),
                      certificates_.ca(), "yes"});
    }

    /// The fixture's client configuration for `nodes` under `host`, trusting the test CA.
    client_config tls_config(const node_group& nodes, const std::string& host = "127.0.0.1") {
        auto c = config();
        c.nodes.clear();
        for (const auto& node : nodes) {
            c.nodes.push_back(node->address(host));
        }
        c.tls.ca_file = certificates_.ca();
        c.log = log_.sink();
        return c;
    }

    static lock_options tls_lock() {
        auto o = options();
        // The first command of a connection waits for the TCP and TLS handshakes; sanitizer
        // builds make those slow. Nothing here is meant to time out.
        o.node_timeout = 2s;
        return o;
    }

    /// Nodes in `nodes` on which `key` holds `value`.
    static int holding(const node_group& nodes, const std::string& key, const std::string& value) {
        int n = 0;
        for (const auto& node : nodes) {
            n += node->get(key) == value ? 1 : 0;
        }
        return n;
    }

    static long long keys_on(const node_group& nodes) {
        long long n = 0;
        for (const auto& node : nodes) {
            n += node->dbsize();
        }
        return n;
    }

    /// The full life cycle through `config`, checked on `nodes`.
    void acquire_extend_release(const client_config& config, const node_group& nodes,
                                const std::string& key) {
        blocking_client client(config);
        std::error_code ec;
        auto held = client.acquire(key, tls_lock(), ec);
        ASSERT_FALSE(ec) << held.message;
        EXPECT_TRUE(eventually([&] { return holding(nodes, key, held.lock.token()) == 3; }));
        auto extended = client.extend(held.lock, 60s, ec);
        ASSERT_FALSE(ec) << extended.message;
        EXPECT_TRUE(eventually([&] {
            int pushed = 0;
            for (const auto& node : nodes) {
                pushed += node->pttl(key) > 30000 ? 1 : 0;
            }
            return pushed == 3;
        }));
        auto released = client.release(extended.lock, ec);
        EXPECT_FALSE(ec) << released.message;
        EXPECT_GE(released.released, 2u) << "completes at quorum";
        EXPECT_TRUE(eventually([&] { return keys_on(nodes) == 0; }));
    }

    /// An acquire through `config` fails with quorum_unreachable, every node that answered
    /// before the decision failed with a connection error whose text contains each of
    /// `reasons`, and nothing was written.
    void expect_refused(const client_config& config, const node_group& nodes,
                        const std::vector<std::string>& reasons) {
        blocking_client client(config);
        std::error_code ec;
        auto refused = client.acquire("tls:refused", tls_lock(), ec);
        EXPECT_EQ(ec, errc::quorum_unreachable) << refused.message;
        std::size_t decided = 0;
        for (const auto& vote : refused.votes) {
            if (vote.outcome == node_outcome::pending) {
                continue; // decided without it
            }
            ++decided;
            EXPECT_EQ(vote.outcome, node_outcome::failed) << "node " << vote.node;
            EXPECT_EQ(vote.error, errc::connection_failed) << "node " << vote.node;
            for (const auto& reason : reasons) {
                EXPECT_NE(vote.server_message.find(reason), std::string::npos)
                    << "node " << vote.node << ": " << vote.server_message;
            }
        }
        EXPECT_GE(decided, 2u) << "a quorum's worth of nodes said why";
        EXPECT_EQ(keys_on(nodes), 0);
    }

    test_certificates certificates_;
    log_record log_;
};

TEST_F(tls_test, verified_acquire_extend_release_by_ip_address_and_by_host_name) {
    const auto nodes = verified_nodes();
    acquire_extend_release(tls_config(nodes, "127.0.0.1"), nodes, "tls:by-ip");
    acquire_extend_release(tls_config(nodes, "localhost"), nodes, "tls:by-name");
    EXPECT_EQ(log_.text().find("warning: "), std::string::npos) << log_.text();
}

TEST_F(tls_test, a_certificate_from_an_unknown_ca_is_refused) {
    const auto nodes = verified_nodes();
    auto c = tls_config(nodes);
    c.tls.ca_file = certificates_.unrelated_ca();
    // redis-server sends its CA along with its certificate (OpenSSL builds the chain from
    // --tls-ca-cert-file), so the chain ends in a root this client does not trust; a server
    // sending its certificate alone gets "unable to get local issuer certificate" instead.
    expect_refused(c, nodes,
                   {"certificate verify failed", "self-signed certificate in certificate chain"});
}

TEST_F(tls_test, a_certificate_for_another_host_name_is_refused) {
    const auto nodes = wrong_name_nodes();
    expect_refused(tls_config(nodes, "localhost"), nodes,
                   {"certificate verify failed", "hostname mismatch"});
}

// OpenSSL falls back to the subject's common name when a certificate has no DNS
// subjectAltName; RFC 6125 deprecates that, and docs/security.md says the name must be in
// the subjectAltName. The same name in the subjectAltName is accepted (the test above).
TEST_F(tls_test, a_host_name_only_in_the_common_name_is_refused) {
    const auto nodes = three({certificates_.common_name_only_certificate(),
                              certificates_.common_name_only_key(), certificates_.ca(), "no"});
    expect_refused(tls_config(nodes, "localhost"), nodes,
                   {"certificate verify failed", "hostname mismatch"});
}

TEST_F(tls_test, an_ip_address_missing_from_the_certificate_is_refused) {
    // The certificate names 127.0.0.1, the nodes are reached as 127.0.0.2: same server,
    // address not certified.
    const auto nodes = verified_nodes();
    expect_refused(tls_config(nodes, "127.0.0.2"), nodes,
                   {"certificate verify failed", "IP address mismatch"});
}

TEST_F(tls_test, server_name_makes_a_certificate_for_that_name_acceptable) {
    const auto nodes = wrong_name_nodes();
    auto c = tls_config(nodes, "127.0.0.1");
    c.tls.server_name = "wrong.example";
    acquire_extend_release(c, nodes, "tls:server-name");
}

TEST_F(tls_test, skipping_verification_accepts_any_certificate_and_says_so) {
    const auto nodes = verified_nodes();
    auto c = tls_config(nodes);
    c.tls.ca_file = certificates_.unrelated_ca();
    c.tls.dangerously_skip_verification = true;
    acquire_extend_release(c, nodes, "tls:unverified");
    EXPECT_NE(log_.text().find("warning: "), std::string::npos) << log_.text();
}

TEST_F(tls_test, mutual_tls_refuses_a_client_without_certificate_and_grants_with_one) {
    const auto nodes = mutual_nodes();
    expect_refused(tls_config(nodes), nodes, {"certificate required"});
    auto c = tls_config(nodes);
    c.tls.certificate_file = certificates_.client_certificate();
    c.tls.private_key_file = certificates_.client_key();
    acquire_extend_release(c, nodes, "tls:mutual");
}

TEST_F(tls_test, tls_and_plain_nodes_in_one_client) {
    const auto tls_nodes = verified_nodes();
    auto c = tls_config(tls_nodes);
    const auto plain = topology::addresses();
    c.nodes.push_back(plain.at(0));
    c.nodes.push_back(plain.at(1));
    blocking_client client(c);
    std::error_code ec;
    auto held = client.acquire("tls:mixed", tls_lock(), ec);
    ASSERT_FALSE(ec) << held.message;
    const auto& token = held.lock.token();
    EXPECT_TRUE(eventually([&] {
        return holding(tls_nodes, "tls:mixed", token) == 3 &&
               inspector(1).get("tls:mixed") == token && inspector(2).get("tls:mixed") == token;
    }));
    auto released = client.release(held.lock, ec);
    EXPECT_FALSE(ec) << released.message;
    EXPECT_GE(released.released, 3u) << "completes at quorum";
    EXPECT_TRUE(eventually([&] {
        return keys_on(tls_nodes) == 0 && inspector(1).dbsize() + inspector(2).dbsize() == 0;
    }));
}

/// The command-line tool against TLS nodes. These tests start fresh nodes, hence
/// --no-quarantine, as in cli_test.
class tls_cli_test : public tls_test {
protected:
    program_output cli(const node_group& nodes, const std::vector<std::string>& args) {
        std::string list;
        for (const auto& node : nodes) {
            list += (list.empty() ? "" : ",") + node->address();
        }
        std::vector<std::string> argv{
            REDLOCK_CLI_PATH, "--no-quarantine", "--node-timeout", "2s", "-n", list};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(argv);
    }

    static std::string token_in(const std::string& output) {
        std::smatch found;
        return std::regex_search(output, found, std::regex("\\b[0-9a-f]{32}\\b")) ? found.str()
                                                                                  : "";
    }
};

TEST_F(tls_cli_test, acquire_status_release_and_run_with_the_ca) {
    const auto nodes = verified_nodes();
    const auto ca = certificates_.ca();

    auto acquired = cli(nodes, {"--tls-ca", ca, "acquire", "-t", "30s", "tls:cli"});
    ASSERT_EQ(acquired.status, 0) << acquired.out;
    const auto token = token_in(acquired.out);
    ASSERT_FALSE(token.empty()) << acquired.out;
    EXPECT_TRUE(eventually([&] { return holding(nodes, "tls:cli", token) == 3; }));
    auto status = cli(nodes, {"--tls-ca", ca, "status", "tls:cli", token});
    EXPECT_EQ(status.status, 0) << status.out;
    auto released = cli(nodes, {"--tls-ca", ca, "release", "tls:cli", token});
    EXPECT_EQ(released.status, 0) << released.out;
    EXPECT_EQ(keys_on(nodes), 0);

    // The command reads every node itself while it runs: each holds its token.
    std::string look;
    for (const auto& node : nodes) {
        look += "redis-cli --tls --cacert " + ca + " -h 127.0.0.1 -p " +
                std::to_string(node->port()) + " GET tls:run; ";
    }
    auto ran = cli(nodes, {"--tls-ca", ca, "run", "-t", "30s", "tls:run", "--", "sh", "-c",
                           look + "echo \"token $REDLOCK_TOKEN\""});
    ASSERT_EQ(ran.status, 0) << ran.out;
    std::smatch given;
    ASSERT_TRUE(std::regex_search(ran.out, given, std::regex("token ([0-9a-f]{32})"))) << ran.out;
    std::istringstream lines(ran.out);
    int held_by_it = 0;
    for (std::string line; std::getline(lines, line);) {
        held_by_it += line == given[1].str() ? 1 : 0;
    }
    EXPECT_EQ(held_by_it, 3) << "every node holds the command's token: " << ran.out;
    EXPECT_EQ(keys_on(nodes), 0) << "released when the command ended";
}

TEST_F(tls_cli_test, mutual_tls_with_the_client_certificate) {
    const auto nodes = mutual_nodes();
    auto acquired = cli(nodes, {"--tls-ca", certificates_.ca(), "--tls-cert",
                                certificates_.client_certificate(), "--tls-key",
                                certificates_.client_key(), "acquire", "tls:cli-mutual"});
    ASSERT_EQ(acquired.status, 0) << acquired.out;
    EXPECT_EQ(holding(nodes, "tls:cli-mutual", token_in(acquired.out)), 3);
}

TEST_F(tls_cli_test, a_wrong_ca_exits_69_with_the_certificate_reason) {
    const auto nodes = verified_nodes();
    auto refused = cli(nodes, {"--tls-ca", certificates_.unrelated_ca(), "acquire", "tls:cli"});
    EXPECT_EQ(refused.status, 69) << refused.out;
    EXPECT_NE(refused.out.find("certificate verify failed"), std::string::npos) << refused.out;
    EXPECT_EQ(keys_on(nodes), 0);
}

} // namespace
} // namespace redlock::test
