// `redlock nodes`: what each node is and whether its votes count, read back through the CLI
// against real nodes: persistence and eviction settings, a restarted node's quarantine, a
// stopped node, and what an ACL user may not read.
#include "support/child_process.hpp"
#include "support/fixture.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cmath>
#include <regex>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

struct nodes_run {
    std::optional<int> status;
    std::string out;
    std::string err;
};

std::string joined(const std::vector<std::string>& nodes) {
    std::string text;
    for (const auto& node : nodes) {
        text += (text.empty() ? "" : ",") + node;
    }
    return text;
}

/// `redlock nodes ARGS` with the quarantine on (the default), as an operator runs it.
nodes_run redlock_nodes(const std::vector<std::string>& args,
                        const std::vector<std::string>& nodes = topology::addresses()) {
    std::vector<std::string> argv{REDLOCK_CLI_PATH, "--nodes", joined(nodes), "nodes"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process p(argv);
    nodes_run r;
    r.status = p.wait(20s);
    r.out = p.out();
    r.err = p.err();
    return r;
}

/// The line of node `node` (1-based) in the text output.
std::string line_of(const std::string& out, int node) {
    const auto name = topology::addresses()[static_cast<std::size_t>(node - 1)] + " ";
    const auto at = out.find(name);
    return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

json::object parsed(const std::string& out) {
    boost::system::error_code ec;
    auto value = json::parse(out, ec);
    EXPECT_FALSE(ec) << out;
    return !ec && value.is_object() ? value.as_object() : json::object();
}

std::string text_of(const json::value& v) {
    return v.is_string() ? std::string(v.as_string()) : std::string();
}

TEST_F(nodes_test, cli_nodes_shows_role_version_persistence_eviction_and_quarantine) {
    topology::enable_aof(3); // appendfsync always
    inspector(1).run({"CONFIG", "SET", "maxmemory", "100mb"});
    inspector(1).run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
    inspector(2).run({"CONFIG", "SET", "save", "3600 1 300 100"});
    topology::restart(4);
    topology::stop(5);

    const auto r = redlock_nodes({"--max-ttl", "30s"});
    EXPECT_EQ(r.status, 0) << "four of five answered\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5) << r.out;
    for (int node = 1; node <= 4; ++node) {
        const auto line = line_of(r.out, node);
        EXPECT_NE(line.find(" reachable role=master version=7."), std::string::npos) << line;
        // The nodes run on this host: same clock, so the offset is within the round trip.
        EXPECT_TRUE(std::regex_search(
            line, std::regex(R"( clock="[+-]\d+\.\d ms \(\+/- \d+\.\d ms\) against this host")")))
            << line;
        EXPECT_NE(line.find(" tls=no"), std::string::npos) << line;
        EXPECT_NE(line.find(" run_id="), std::string::npos) << line;
        EXPECT_EQ(line.find("unknown"), std::string::npos) << "all readable: " << line;
    }
    EXPECT_NE(line_of(r.out, 1).find(" maxmemory-policy=allkeys-lru"), std::string::npos);
    EXPECT_NE(line_of(r.out, 1).find(" votes=\"do not count: "), std::string::npos)
        << line_of(r.out, 1);
    EXPECT_NE(line_of(r.out, 2).find(" save=\"3600 1 300 100\""), std::string::npos)
        << line_of(r.out, 2);
    EXPECT_NE(line_of(r.out, 2).find(" aof=no"), std::string::npos) << line_of(r.out, 2);
    EXPECT_NE(line_of(r.out, 3).find(" aof=yes save=none appendfsync=always"), std::string::npos)
        << line_of(r.out, 3);
    EXPECT_NE(line_of(r.out, 4).find(" quarantine=\"node restarted: votes count again in "),
              std::string::npos)
        << line_of(r.out, 4);
    EXPECT_NE(line_of(r.out, 5).find(" unreachable ("), std::string::npos) << line_of(r.out, 5);

    // The same as JSON, field by field.
    const auto j = redlock_nodes({"--json", "--max-ttl", "30s"});
    EXPECT_EQ(j.status, 0) << j.out << j.err;
    const auto out = parsed(j.out);
    EXPECT_EQ(out.at("command"), "nodes");
    EXPECT_EQ(out.at("outcome"), "ok");
    EXPECT_EQ(out.at("reachable"), 4);
    const auto& nodes = out.at("nodes").as_array();
    ASSERT_EQ(nodes.size(), 5u) << j.out;
    const auto node = [&](int n) { return nodes[static_cast<std::size_t>(n - 1)].as_object(); };
    EXPECT_EQ(text_of(node(1).at("node")), topology::addresses()[0]);
    EXPECT_EQ(node(1).at("maxmemory_policy"), "allkeys-lru");
    EXPECT_EQ(node(1).at("votes_count"), false);
    EXPECT_EQ(node(2).at("save"), "3600 1 300 100");
    EXPECT_EQ(node(3).at("aof_enabled"), true);
    EXPECT_EQ(node(3).at("appendfsync"), "always");
    EXPECT_EQ(node(3).at("role"), "master");
    const auto offset = node(3).at("clock_offset_ms").to_number<double>();
    const auto uncertainty = node(3).at("clock_uncertainty_ms").to_number<double>();
    EXPECT_GE(uncertainty, 0.0);
    EXPECT_LE(std::abs(offset), uncertainty + 1.0) << "one host, one clock: within the round trip";
    EXPECT_FALSE(node(5).contains("clock_offset_ms")) << "unreachable: no clock";
    EXPECT_EQ(node(3).at("tls"), false);
    EXPECT_EQ(text_of(node(3).at("run_id")).size(), 40u);
    EXPECT_GE(node(3).at("uptime_s").to_number<std::int64_t>(), 0);
    const auto left = node(4).at("quarantined_for_ms").to_number<std::int64_t>();
    EXPECT_GT(left, 20000);
    EXPECT_LE(left, 31000);
    EXPECT_EQ(text_of(node(4).at("quarantine_cause")), "node restarted");
    EXPECT_EQ(node(4).at("votes_count"), false);
    EXPECT_EQ(node(5).at("reachable"), false);
    EXPECT_TRUE(node(5).at("reason").is_string());

    // Without the quarantine (nodes may have been restarted by earlier tests), every node
    // that answers counts but the one that can evict keys.
    const auto counted = redlock_nodes({"--no-quarantine"});
    for (int node = 2; node <= 4; ++node) {
        EXPECT_NE(line_of(counted.out, node).find(" quarantine=none votes=count tls=no"),
                  std::string::npos)
            << line_of(counted.out, node);
    }
    EXPECT_NE(line_of(counted.out, 1).find(" votes=\"do not count: "), std::string::npos)
        << line_of(counted.out, 1);
    inspector(2).run({"CONFIG", "SET", "save", ""});
}

TEST_F(nodes_test, cli_nodes_says_what_the_acl_does_not_permit) {
    // A user who may lock and read INFO, but not run CONFIG; and one who may not run INFO
    // nor TIME.
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        EXPECT_EQ(inspector(node).run({"ACL", "SETUSER", "noconfig", "reset", "on", ">pw", "~*",
                                       "&*", "+@all", "-config"}),
                  "OK");
        EXPECT_EQ(inspector(node).run({"ACL", "SETUSER", "noinfo", "reset", "on", ">pw", "~*", "&*",
                                       "+@all", "-config", "-info", "-time"}),
                  "OK");
    }
    const auto as = [](const std::string& user) {
        std::vector<std::string> nodes;
        for (const auto& node : topology::addresses()) {
            nodes.push_back("redis://" + user + ":pw@" + node);
        }
        return nodes;
    };
    // Nodes restarted by earlier tests may be in quarantine: not what this test looks at.
    const auto r = redlock_nodes({"--no-quarantine"}, as("noconfig"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        const auto line = line_of(r.out, node);
        EXPECT_NE(line.find(" role=master version=7."), std::string::npos) << line;
        EXPECT_NE(line.find(" aof=no save=\"unknown (not permitted)\" "
                            "appendfsync=\"unknown (not permitted)\" maxmemory-policy=noeviction"),
                  std::string::npos)
            << line;
        EXPECT_NE(line.find(" votes=count"), std::string::npos) << line;
        EXPECT_EQ(line.find("pw"), std::string::npos) << line;
    }

    const auto refused = redlock_nodes({"--json", "--no-quarantine"}, as("noinfo"));
    EXPECT_EQ(refused.status, 0) << refused.out << refused.err;
    EXPECT_EQ(refused.out.find(":pw"), std::string::npos) << refused.out;
    const auto out = parsed(refused.out);
    for (const auto& n : out.at("nodes").as_array()) {
        const auto& node = n.as_object();
        EXPECT_EQ(node.at("reachable"), true) << json::serialize(node);
        for (const char* field : {"role", "version", "run_id", "uptime_s", "aof_enabled",
                                  "maxmemory_policy", "save", "appendfsync", "clock"}) {
            EXPECT_EQ(node.at(field), "unknown (not permitted)") << field;
        }
        // Without INFO, the client cannot see a restart or an eviction: no vote (the
        // eviction veto is on even without the quarantine).
        EXPECT_EQ(node.at("votes_count"), false);
        EXPECT_NE(text_of(node.at("why_not_counted")).find("INFO"), std::string::npos)
            << json::serialize(node);
    }
    for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
        inspector(node).run({"ACL", "DELUSER", "noconfig", "noinfo"});
    }
}

} // namespace
} // namespace redlock::test
