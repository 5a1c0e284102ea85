// `--json` of acquire, release and status, read back as JSON and checked field by field
// against what the nodes hold.
#include "support/child_process.hpp"
#include "support/fixture.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <regex>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

struct json_run {
    std::optional<int> status;
    json::object out; ///< stdout, parsed: the test fails if it is not one JSON object
    std::string text; ///< stdout and stderr as printed
};

std::string nodes_text() {
    std::string text;
    for (const auto& address : topology::addresses()) {
        text += (text.empty() ? "" : ",") + address;
    }
    return text;
}

json_run redlock(const std::vector<std::string>& args) {
    std::vector<std::string> argv{REDLOCK_CLI_PATH, "--no-quarantine", "--nodes", nodes_text()};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process p(argv);
    json_run r;
    r.status = p.wait(20s);
    const std::string out = p.out();
    r.text = out + p.err();
    boost::system::error_code ec;
    auto value = json::parse(out, ec);
    EXPECT_FALSE(ec) << "stdout is no JSON: " << ec.message() << "\n" << r.text;
    EXPECT_TRUE(value.is_object()) << r.text;
    if (!ec && value.is_object()) {
        r.out = std::move(value.as_object());
    }
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << "one line: " << out;
    return r;
}

/// A string field as std::string; empty for anything else (null included).
std::string text_of(const json::value& v) {
    return v.is_string() ? std::string(v.as_string()) : std::string();
}

std::size_t count_of(const json::array& nodes, const char* field, const char* value) {
    return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const auto& n) {
        const auto* v = n.as_object().if_contains(field);
        return v && v->is_string() && v->as_string() == value;
    }));
}

TEST_F(nodes_test, cli_json_acquire_status_release_report_outcome_token_and_every_node) {
    // A fenced acquire: outcome, token, fencing token, validity, and a vote per node.
    const auto acquired = redlock({"acquire", "--json", "--fence", "-t", "20s", "json:k"});
    ASSERT_EQ(acquired.status, 0) << acquired.text;
    const auto& a = acquired.out;
    EXPECT_EQ(a.at("command"), "acquire");
    EXPECT_EQ(a.at("outcome"), "ok");
    EXPECT_EQ(a.at("exit_status"), 0);
    EXPECT_TRUE(a.at("message").is_null());
    EXPECT_EQ(a.at("keys"), json::array({"json:k"}));
    const std::string token(a.at("token").as_string());
    EXPECT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{32}"))) << token;
    EXPECT_EQ(inspector(1).get("json:k"), token);
    EXPECT_GE(a.at("fencing_token").to_number<std::int64_t>(), 1);
    const auto validity = a.at("validity_ms").to_number<std::int64_t>();
    EXPECT_GT(validity, 15000);
    EXPECT_LE(validity, 20000);
    EXPECT_EQ(a.at("attempts"), 1);
    const auto& votes = a.at("nodes").as_array();
    ASSERT_EQ(votes.size(), topology::size());
    EXPECT_GE(count_of(votes, "vote", "granted"), 3u) << json::serialize(votes);
    for (std::size_t i = 0; i < votes.size(); ++i) {
        const auto& v = votes[i].as_object();
        EXPECT_EQ(text_of(v.at("node")), topology::addresses()[i]);
        if (v.at("vote") == "granted") {
            EXPECT_TRUE(v.at("error").is_null());
            EXPECT_TRUE(v.at("reason").is_null());
            EXPECT_GE(v.at("latency_us").to_number<std::int64_t>(), 0);
        }
    }

    // Held: the outcome that exit 75 stands for, no token, the refusals and their reason.
    const auto busy = redlock({"acquire", "--json", "json:k"});
    EXPECT_EQ(busy.status, 75) << busy.text;
    EXPECT_EQ(busy.out.at("outcome"), "contention");
    EXPECT_EQ(busy.out.at("exit_status"), 75);
    EXPECT_TRUE(busy.out.at("token").is_null());
    EXPECT_TRUE(busy.out.at("validity_ms").is_null());
    EXPECT_FALSE(busy.out.at("message").as_string().empty());
    const auto& refused = busy.out.at("nodes").as_array();
    EXPECT_GE(count_of(refused, "vote", "refused"), 3u) << json::serialize(refused);
    EXPECT_GE(count_of(refused, "reason", "held by another token"), 3u);

    // status: every node holds this token, how long it has left, its run_id.
    const auto shown = redlock({"status", "--json", "json:k", token});
    EXPECT_EQ(shown.status, 0) << shown.text;
    EXPECT_EQ(shown.out.at("outcome"), "ok");
    EXPECT_EQ(text_of(shown.out.at("token")), token);
    EXPECT_EQ(shown.out.at("quorum"), 3);
    const auto& views = shown.out.at("nodes").as_array();
    ASSERT_EQ(views.size(), topology::size());
    for (std::size_t i = 0; i < views.size(); ++i) {
        const auto& v = views[i].as_object();
        EXPECT_EQ(text_of(v.at("node")), topology::addresses()[i]);
        EXPECT_EQ(v.at("key"), "json:k");
        EXPECT_EQ(v.at("state"), "held");
        EXPECT_EQ(text_of(v.at("holder")), token);
        EXPECT_EQ(v.at("matches"), true);
        EXPECT_GT(v.at("pttl_ms").to_number<std::int64_t>(), 0);
        EXPECT_EQ(v.at("run_id").as_string().size(), 40u);
        EXPECT_GT(v.at("latency_us").to_number<std::int64_t>(), 0) << "each node answered";
    }
    const auto other = redlock({"status", "--json", "json:k", "ffffffffffffffffffffffffffffffff"});
    EXPECT_EQ(other.status, 79);
    EXPECT_EQ(other.out.at("outcome"), "lock_lost");
    EXPECT_EQ(count_of(other.out.at("nodes").as_array(), "state", "held"), topology::size());

    // release: with another token nothing goes, with ours the lock does.
    const auto wrong = redlock({"release", "--json", "json:k", "0123456789abcdef0123456789abcdef"});
    EXPECT_EQ(wrong.status, 79) << wrong.text;
    EXPECT_EQ(wrong.out.at("outcome"), "lock_lost");
    EXPECT_EQ(wrong.out.at("released"), 0);
    EXPECT_GE(count_of(wrong.out.at("nodes").as_array(), "reason", "the token does not hold it"),
              3u)
        << wrong.text;
    const auto released = redlock({"release", "--json", "json:k", token});
    EXPECT_EQ(released.status, 0) << released.text;
    EXPECT_EQ(released.out.at("outcome"), "ok");
    EXPECT_EQ(text_of(released.out.at("token")), token);
    EXPECT_EQ(released.out.at("forced"), false);
    EXPECT_GE(released.out.at("released").to_number<std::int64_t>(), 3);
    EXPECT_TRUE(eventually([] {
        for (int node = 1; node <= static_cast<int>(topology::size()); ++node) {
            if (inspector(node).get("json:k")) {
                return false;
            }
        }
        return true;
    })) << "the lock is gone (the fencing counter stays)";
}

TEST_F(nodes_test, cli_json_status_names_a_node_that_does_not_answer) {
    topology::stop(5);
    const auto shown = redlock({"status", "--json", "json:gone"});
    EXPECT_EQ(shown.status, 0) << shown.text;
    const auto& views = shown.out.at("nodes").as_array();
    ASSERT_EQ(views.size(), topology::size());
    EXPECT_EQ(count_of(views, "state", "free"), 4u) << shown.text;
    const auto& gone = views.back().as_object();
    EXPECT_EQ(gone.at("state"), "unreachable");
    EXPECT_TRUE(gone.at("error").is_string());
    EXPECT_TRUE(gone.at("reason").is_string());

    // Nodes restarted by earlier tests may still be in quarantine: not what this test is about.
    const auto acquired =
        redlock({"--no-quarantine", "acquire", "--json", "-t", "5s", "json:gone"});
    EXPECT_EQ(acquired.status, 0) << acquired.text;
    const auto& votes = acquired.out.at("nodes").as_array();
    const auto& last = votes.back().as_object();
    EXPECT_TRUE(last.at("vote") == "failed" || last.at("vote") == "pending") << acquired.text;
    if (last.at("vote") == "failed") {
        EXPECT_EQ(last.at("error"), "connection");
    }
    EXPECT_EQ(redlock({"release", "--json", "json:gone",
                       std::string(acquired.out.at("token").as_string())})
                  .status,
              0);
}

} // namespace
} // namespace redlock::test
