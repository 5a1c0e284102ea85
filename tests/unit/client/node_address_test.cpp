#include <redlock/node_address.hpp>

#include <redlock/error.hpp>

#include <gtest/gtest.h>

namespace {

using redlock::node_address;

node_address parse_ok(std::string_view text) {
    node_address a;
    std::string why;
    auto ec = redlock::parse_node_address(text, a, why);
    EXPECT_FALSE(ec) << text << ": " << why;
    return a;
}

std::string parse_error(std::string_view text) {
    node_address a;
    a.host = "untouched";
    std::string why;
    auto ec = redlock::parse_node_address(text, a, why);
    EXPECT_EQ(ec, redlock::errc::invalid_argument) << text;
    EXPECT_FALSE(why.empty()) << text;
    EXPECT_EQ(a.host, "untouched") << "output is left alone on error";
    return why;
}

TEST(node_address, host_and_port) {
    auto a = parse_ok("127.0.0.1:7001");
    EXPECT_EQ(a.kind, node_address::transport::tcp);
    EXPECT_EQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, 7001);
    EXPECT_EQ(a.db, 0);
    EXPECT_TRUE(a.password.empty());
    EXPECT_EQ(parse_ok("redis-a.internal").port, 6379);
    EXPECT_EQ(a.display(), "127.0.0.1:7001");
}

TEST(node_address, ipv6_in_brackets) {
    auto a = parse_ok("[::1]:7002");
    EXPECT_EQ(a.host, "::1");
    EXPECT_EQ(a.port, 7002);
    EXPECT_EQ(a.display(), "[::1]:7002");
    EXPECT_EQ(parse_ok("redis://[fe80::1%eth0]:6380/2").host, "fe80::1%eth0");
}

TEST(node_address, redis_url_with_credentials_and_db) {
    auto a = parse_ok("redis://locker:s3cr%40t@10.0.0.5:6380/3");
    EXPECT_EQ(a.user, "locker");
    EXPECT_EQ(a.password, "s3cr@t");
    EXPECT_EQ(a.host, "10.0.0.5");
    EXPECT_EQ(a.port, 6380);
    EXPECT_EQ(a.db, 3);
    EXPECT_EQ(a.display(), "10.0.0.5:6380") << "no credentials in logs";

    auto b = parse_ok("redis://justapassword@host");
    EXPECT_TRUE(b.user.empty());
    EXPECT_EQ(b.password, "justapassword");
    EXPECT_EQ(b.port, 6379);
    EXPECT_EQ(parse_ok("redis://host:1/").db, 0);

    auto user_only = parse_ok("redis://locker:@host:1");
    EXPECT_EQ(user_only.user, "locker") << "the password comes from elsewhere";
    EXPECT_TRUE(user_only.password.empty());
    EXPECT_EQ(user_only.redacted(), "redis://locker:@host:1");
}

TEST(node_address, unix_sockets) {
    auto a = parse_ok("unix:///run/redis/a.sock?db=2&user=u&password=p");
    EXPECT_EQ(a.kind, node_address::transport::unix_socket);
    EXPECT_EQ(a.path, "/run/redis/a.sock");
    EXPECT_EQ(a.db, 2);
    EXPECT_EQ(a.user, "u");
    EXPECT_EQ(a.password, "p");
    EXPECT_EQ(parse_ok("/tmp/r.sock").path, "/tmp/r.sock");
    EXPECT_EQ(parse_ok("unix:/tmp/r.sock").path, "/tmp/r.sock");
    EXPECT_EQ(parse_ok("/tmp/r.sock").display(), "unix:///tmp/r.sock");
    EXPECT_EQ(parse_ok("//tmp/r.sock").display(), "unix:////tmp/r.sock");
    EXPECT_EQ(parse_ok(parse_ok("//tmp/r.sock").display()).path, "//tmp/r.sock")
        << "found by the fuzzer";
}

TEST(node_address, malformed_addresses_are_explained) {
    EXPECT_NE(parse_error("").find("empty"), std::string::npos);
    parse_error(":7001");
    parse_error("host:");
    EXPECT_NE(parse_error("host:0").find("port"), std::string::npos);
    parse_error("host:65536");
    parse_error("host:70x");
    parse_error("host:-1");
    EXPECT_NE(parse_error("::1:7001").find("brackets"), std::string::npos);
    parse_error("[::1");
    parse_error("[::1]x");
    parse_error("[]:7001");
    parse_error("ho st:1");
    parse_error("host\n:1");
    parse_error("redis://");
    parse_error("redis://:@host");
    parse_error("redis://u:%zz@host");
    parse_error("redis://u:%4@host");
    parse_error("redis://host/abc");
    parse_error("redis://host/-1");
    parse_error("redis://host/99999999999");
    EXPECT_NE(parse_error("http://host").find("scheme"), std::string::npos);
    parse_error("unix://relative/path");
    parse_error("unix:///tmp/a.sock?db");
    parse_error("unix:///tmp/a.sock?color=blue");
    parse_error("host/name:1");
}

TEST(node_address, rediss_is_the_redis_url_over_tls) {
    const auto a = parse_ok("rediss://locker:s3cret@cache.example:6380/2");
    EXPECT_TRUE(a.tls);
    EXPECT_EQ(a.host, "cache.example");
    EXPECT_EQ(a.port, 6380);
    EXPECT_EQ(a.user, "locker");
    EXPECT_EQ(a.db, 2);
    EXPECT_FALSE(parse_ok("redis://cache.example").tls);
    EXPECT_FALSE(parse_ok("cache.example:6380").tls);
    EXPECT_NE(parse_error("rediss://").find("host"), std::string::npos);
}

TEST(node_address, redacted_shows_everything_but_the_password) {
    EXPECT_EQ(parse_ok("rediss://locker:s3cret@cache.example:6380/2").redacted(),
              "rediss://locker:***@cache.example:6380/2");
    EXPECT_EQ(parse_ok("redis://s3cret@[::1]:7001").redacted(), "redis://***@[::1]:7001");
    EXPECT_EQ(parse_ok("10.0.0.1:7001").redacted(), "redis://10.0.0.1:7001");
    EXPECT_EQ(parse_ok("unix:///run/r.sock?db=3&user=a%40b&password=s3cret").redacted(),
              "unix:///run/r.sock?db=3&user=a%40b&password=***");
    // A user name decoded into a control character is escaped again, not printed raw.
    EXPECT_EQ(parse_ok("redis://a%0Ab:s3cret@h:1").redacted(), "redis://a%0Ab:***@h:1");
}

TEST(node_address, errors_never_repeat_the_password) {
    for (const char* text : {"redis://u:s3cret@host:99999", "redis://u:s3cret@ho st",
                             "redis://u:s3cret@host/x", "unix:///a?password=s3cret&color=1"}) {
        EXPECT_EQ(parse_error(text).find("s3cret"), std::string::npos) << text;
    }
    // A password with the URL's own separators in it, unescaped: the parser takes a piece of
    // it for a port, a database, a host character or a query parameter, and must not say so.
    for (const char* text :
         {"redis://u:s3cret/x@host:1", "redis://u:a/s3cret@host:1", "redis://s3cret/1@host",
          "redis://u:s3cret:1/@host", "rediss://u:pw/s3cret@host",
          "unix:///a.sock?password=p&s3cret", "unix:///a.sock?password=p&s3cret=1",
          "unix:///a.sock?password=p&db=s3cret", "s3cret://u:p@host"}) {
        const auto why = parse_error(text);
        EXPECT_EQ(why.find("s3cret"), std::string::npos) << text << ": " << why;
    }
    EXPECT_NE(parse_error("redis://u:s3cret/x@host:1").find("percent-encode"), std::string::npos);
    // Without credentials the error still shows what it could not read.
    EXPECT_NE(parse_error("redis://host:1/abc").find("\"abc\""), std::string::npos);
    EXPECT_NE(parse_error("host:70x").find("\"70x\""), std::string::npos);
}

TEST(node_address, unix_paths_longer_than_sun_path_are_refused_not_cut) {
    const std::string fits = "/" + std::string(106, 'a');
    EXPECT_EQ(parse_ok(fits).path, fits);
    const auto why = parse_error("/" + std::string(107, 'a'));
    EXPECT_NE(why.find("107"), std::string::npos) << why;
    parse_error("unix:///" + std::string(200, 'b') + "?db=1");
}

TEST(node_address, same_server_ignores_credentials_db_and_case) {
    EXPECT_TRUE(parse_ok("Redis-A:7001").same_server(parse_ok("redis://u:p@redis-a:7001/4")));
    EXPECT_FALSE(parse_ok("redis-a:7001").same_server(parse_ok("redis-a:7002")));
    EXPECT_TRUE(parse_ok("/tmp/a.sock").same_server(parse_ok("unix:///tmp/a.sock?db=1")));
    EXPECT_FALSE(parse_ok("/tmp/a.sock").same_server(parse_ok("localhost:6379")));
}

TEST(node_address, a_sentinel_group_names_its_sentinels_and_the_primary) {
    const auto a = parse_ok("redis-sentinel://locker:s3cret@s1.example,10.0.0.2:26380,[::1]:5000"
                            "/2?sentinel_user=watch&sentinel_password=w%40tch#orders");
    EXPECT_EQ(a.kind, node_address::transport::sentinel);
    ASSERT_EQ(a.sentinels.size(), 3U);
    EXPECT_EQ(a.sentinels[0].host, "s1.example");
    EXPECT_EQ(a.sentinels[0].port, 26379) << "the Sentinels' own default port";
    EXPECT_EQ(a.sentinels[1].host, "10.0.0.2");
    EXPECT_EQ(a.sentinels[1].port, 26380);
    EXPECT_EQ(a.sentinels[2].host, "::1");
    EXPECT_EQ(a.master_name, "orders");
    EXPECT_EQ(a.user, "locker");
    EXPECT_EQ(a.password, "s3cret");
    EXPECT_EQ(a.sentinel_user, "watch");
    EXPECT_EQ(a.sentinel_password, "w@tch");
    EXPECT_EQ(a.db, 2);
    EXPECT_FALSE(a.tls);
    EXPECT_TRUE(parse_ok("rediss-sentinel://s1#orders").tls);
}

TEST(node_address, a_sentinel_address_shows_and_parses_back_without_secrets) {
    const auto a = parse_ok("redis-sentinel://locker:s3cret@s1:26379,s2:26380/2"
                            "?sentinel_user=watch&sentinel_password=hidden#orders");
    EXPECT_EQ(a.display(), "redis-sentinel://s1:26379,s2:26380/2#orders");
    EXPECT_EQ(a.redacted(), "redis-sentinel://locker:***@s1:26379,s2:26380/2"
                            "?sentinel_user=watch&sentinel_password=***#orders");
    const auto back = parse_ok(a.display());
    EXPECT_TRUE(back.same_server(a));
    EXPECT_EQ(back.master_name, "orders");
}

TEST(node_address, two_sentinel_addresses_are_one_server_when_they_name_one_primary) {
    const auto a = parse_ok("redis-sentinel://s1,s2,s3#orders");
    EXPECT_TRUE(a.same_server(parse_ok("redis-sentinel://S3:26379,s9#orders")))
        << "a shared Sentinel names the same primary";
    EXPECT_FALSE(a.same_server(parse_ok("redis-sentinel://s1,s2,s3#billing")));
    EXPECT_FALSE(a.same_server(parse_ok("redis-sentinel://s4,s5#orders")));
    EXPECT_FALSE(a.same_server(parse_ok("s1:26379")));
}

TEST(node_address, malformed_sentinel_addresses_are_explained) {
    EXPECT_NE(parse_error("redis-sentinel://s1,s2").find("#master-name"), std::string::npos);
    EXPECT_NE(parse_error("redis-sentinel://s1#").find("#master-name"), std::string::npos);
    parse_error("redis-sentinel://#orders");
    parse_error("redis-sentinel://s1,,s2#orders");
    parse_error("redis-sentinel://s1:0#orders");
    parse_error("redis-sentinel://s1/x#orders");
    EXPECT_NE(parse_error("redis-sentinel://s1?color=blue#orders").find("sentinel_password"),
              std::string::npos);
    EXPECT_NE(parse_error("redis-sentinel://s1#a%00b").find("master name"), std::string::npos);
    std::string many = "redis-sentinel://";
    for (int i = 0; i < 17; ++i) {
        many += (i ? ",s" : "s") + std::to_string(i);
    }
    EXPECT_NE(parse_error(many + "#orders").find("at most 16"), std::string::npos);
    EXPECT_NE(parse_error("redis-sentinel://s1,S1:26379,s2#orders").find("listed twice"),
              std::string::npos)
        << "one Sentinel twice would count twice toward the majority";
    parse_error("redis-sentinel://s1:5000,s2,s1:5000#orders");
    EXPECT_EQ(parse_error("redis-sentinel://u:s3cret@s1:99999#orders").find("s3cret"),
              std::string::npos);
    EXPECT_EQ(parse_error("redis-sentinel://s1?sentinel_password=s3cret&x=1#orders").find("s3cret"),
              std::string::npos);
}

} // namespace
