// Tests of the Redis Cluster client (cluster/client/) against a real
// cluster: routing, pipelining, MOVED and ASK during a slot migration, lost
// replies, concurrent Runs, error replies and WAIT.
//
// The cluster comes from the env file named by TALLY_REDIS_ENV (KEY=VALUE
// lines, as scripts/redis_cluster writes them):
//   TALLY_REDIS_TARGET=redis://[user@]host:port,host:port,...
//   TALLY_REDIS_PASSWORD_FILE=...        the app user's password (optional)
//   TALLY_REDIS_ADMIN_PASSWORD_FILE=...  the admin's (optional: without it
//                                        the app user is the admin, as in a
//                                        cluster without ACLs)
//   TALLY_REDIS_ADMIN_USER=...           the admin's name (default "admin")
// Without TALLY_REDIS_ENV every test is skipped. Each run uses keys of its
// own (tally:t<pid>.<time>:...), so runs may follow each other on one
// cluster; the migration test moves its slot back when it is done.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/client/connection.h"
#include "cluster/client/crc16.h"
#include "cluster/client/resp.h"
#include "cluster/client/redirect.h"
#include "cluster/client/slot_map.h"
#include "fake_node.h"
#include "testutil/redis_env.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/status.h"

namespace tally::cluster {
namespace {

using Clock = std::chrono::steady_clock;

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const ::tally::Status _s = (expr);                      \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)

long long MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t)
      .count();
}

std::string Describe(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::kNil:
      return "nil";
    case Reply::Kind::kString:
      return "string \"" + r.str + "\"";
    case Reply::Kind::kInteger:
      return "integer " + std::to_string(r.integer);
    case Reply::Kind::kArray:
      return "array of " + std::to_string(r.elements.size());
    case Reply::Kind::kStatus:
      return "status " + r.str;
    case Reply::Kind::kError:
      return "error " + r.str;
    case Reply::Kind::kUnknown:
      return "unknown: " + r.str;
  }
  return "?";
}

// The cluster the tests run against (TALLY_REDIS_ENV).
struct ClusterEnv {
  std::vector<Endpoint> seeds;
  std::string user;
  std::string password;
  std::string admin_user;
  std::string admin_password;
  bool acl = false;  // an admin distinct from the app user: ACLs in force
};

bool ReadFileTrimmed(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r')) {
    out->pop_back();
  }
  return true;
}

// Parses the env file; false with `why` when it is unusable.
bool LoadEnv(const std::string& path, ClusterEnv* env, std::string* why) {
  std::map<std::string, std::string> vars = tally::test::ReadRedisEnv();
  if (vars.empty()) {
    *why = "cannot read TALLY_REDIS_ENV file " + path;
    return false;
  }
  std::string target = vars["TALLY_REDIS_TARGET"];
  const std::string scheme = "redis://";
  if (target.rfind(scheme, 0) != 0) {
    *why = path + ": TALLY_REDIS_TARGET is not redis://[user@]host:port,...";
    return false;
  }
  target = target.substr(scheme.size());
  const size_t at = target.find('@');
  if (at != std::string::npos) {
    env->user = target.substr(0, at);
    target = target.substr(at + 1);
  }
  std::stringstream hosts(target);
  std::string hostport;
  while (std::getline(hosts, hostport, ',')) {
    const size_t colon = hostport.rfind(':');
    if (colon == std::string::npos) {
      *why = path + ": no port in " + hostport;
      return false;
    }
    env->seeds.push_back(
        {hostport.substr(0, colon), std::atoi(hostport.c_str() + colon + 1)});
  }
  if (env->seeds.empty()) {
    *why = path + ": TALLY_REDIS_TARGET names no node";
    return false;
  }
  if (!vars["TALLY_REDIS_PASSWORD_FILE"].empty() &&
      !ReadFileTrimmed(vars["TALLY_REDIS_PASSWORD_FILE"], &env->password)) {
    *why = "cannot read " + vars["TALLY_REDIS_PASSWORD_FILE"];
    return false;
  }
  if (!vars["TALLY_REDIS_ADMIN_PASSWORD_FILE"].empty()) {
    if (!ReadFileTrimmed(vars["TALLY_REDIS_ADMIN_PASSWORD_FILE"],
                         &env->admin_password)) {
      *why = "cannot read " + vars["TALLY_REDIS_ADMIN_PASSWORD_FILE"];
      return false;
    }
    env->admin_user = vars["TALLY_REDIS_ADMIN_USER"].empty()
                          ? "admin"
                          : vars["TALLY_REDIS_ADMIN_USER"];
    env->acl = true;
  } else {
    env->admin_user = env->user;
    env->admin_password = env->password;
  }
  return true;
}

class ClusterClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("TALLY_REDIS_ENV");
    if (path == nullptr || *path == '\0') {
      GTEST_SKIP() << "TALLY_REDIS_ENV is not set: these tests need a Redis "
                      "Cluster (scripts/redis_cluster start DIR, then "
                      "TALLY_REDIS_ENV=DIR/env)";
    }
    std::string why;
    ASSERT_TRUE(LoadEnv(path, &env_, &why)) << why;
    ASSERT_OK(ClusterClient::Connect(Options(), &client_));
    // A slot left migrating (an interrupted run of the migration tests)
    // would fail tests far from the cause: say so here.
    for (const NodeInfo& m : Masters()) {
      const Reply nodes = AdminCall(m.endpoint, {"CLUSTER", "NODES"});
      std::stringstream lines(nodes.str);
      std::string line;
      while (std::getline(lines, line)) {
        ASSERT_FALSE(line.find("myself") != std::string::npos &&
                     line.find('[') != std::string::npos)
            << "a slot is migrating or importing on " << AddressOf(m.endpoint)
            << " (left by an interrupted test?); CLUSTER SETSLOT <slot> "
               "STABLE there, or restart the cluster: "
            << line;
      }
    }
    prefix_ = "tally:t" + std::to_string(getpid()) + "." +
              std::to_string(
                  std::chrono::system_clock::now().time_since_epoch().count()) +
              ":";
  }

  ClientOptions Options() const {
    ClientOptions o;
    o.seeds = env_.seeds;
    o.user = env_.user;
    o.password = env_.password;
    return o;
  }

  // An admin connection to `node` (kept for the test).
  Connection* Admin(const Endpoint& node) {
    std::unique_ptr<Connection>& c = admin_[AddressOf(node)];
    if (c == nullptr || c->broken()) {
      ConnectionOptions o;
      o.connect_timeout_ms = 2000;
      o.command_timeout_ms = 10000;
      o.user = env_.admin_user;
      o.password = env_.admin_password;
      o.client_name = "tally-test-admin";
      Status s = Connection::Open(node, o, &c);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) return nullptr;
    }
    return c.get();
  }

  // Runs an admin command on `node`; its reply must not be an error.
  Reply AdminCall(const Endpoint& node, const std::vector<std::string>& args) {
    Reply reply;
    Connection* c = Admin(node);
    if (c == nullptr) return reply;
    Status s = c->Call(args, &reply);
    EXPECT_TRUE(s.ok()) << args[0] << " on " << AddressOf(node) << ": "
                        << s.ToString();
    EXPECT_NE(reply.kind, Reply::Kind::kError)
        << args[0] << " " << (args.size() > 1 ? args[1] : "") << " on "
        << AddressOf(node) << ": " << reply.str;
    return reply;
  }

  // A counter of INFO commandstats on `node` ("asking", "readonly").
  int64_t CommandCalls(const Endpoint& node, const std::string& command) {
    const Reply info = AdminCall(node, {"INFO", "commandstats"});
    const std::string field = "cmdstat_" + command + ":calls=";
    const size_t at = info.str.find(field);
    if (at == std::string::npos) return 0;
    return std::atoll(info.str.c_str() + at + field.size());
  }

  std::vector<NodeInfo> Masters() const {
    std::vector<NodeInfo> masters;
    for (const NodeInfo& n : client_->Nodes()) {
      if (n.master) masters.push_back(n);
    }
    return masters;
  }

  // The master serving `slot` in the client's map.
  NodeInfo OwnerOf(int slot) const {
    for (const NodeInfo& n : Masters()) {
      for (auto [first, last] : n.slot_ranges) {
        if (slot >= first && slot <= last) return n;
      }
    }
    ADD_FAILURE() << "no master serves slot " << slot;
    return NodeInfo();
  }

  Command Cmd(std::vector<std::string> args, bool idempotent = false,
              bool read_only = false) const {
    Command c;
    c.slot = ClusterClient::SlotOf(args.size() > 1 ? args[1] : "");
    c.args = std::move(args);
    c.idempotent = idempotent;
    c.read_only = read_only;
    return c;
  }

  // MIGRATE `keys` from `from` to `to` (as the admin).
  void Migrate(const NodeInfo& from, const NodeInfo& to,
               const std::vector<std::string>& keys) {
    std::vector<std::string> migrate = {
        "MIGRATE", to.endpoint.host, std::to_string(to.endpoint.port), "", "0",
        "5000"};
    if (!env_.admin_password.empty()) {
      migrate.insert(migrate.end(),
                     {"AUTH2", env_.admin_user, env_.admin_password});
    }
    migrate.push_back("KEYS");
    migrate.insert(migrate.end(), keys.begin(), keys.end());
    AdminCall(from.endpoint, migrate);
  }

  // Moves `slot` (with its `keys`) from `from` to `to` as redis-cli
  // --cluster reshard does; `during`, when set, runs while the slot is
  // migrating and its keys have moved (ASK time).
  void MoveSlot(int slot, const NodeInfo& from, const NodeInfo& to,
                const std::vector<std::string>& keys,
                const std::function<void()>& during = nullptr) {
    const std::string s = std::to_string(slot);
    AdminCall(to.endpoint, {"CLUSTER", "SETSLOT", s, "IMPORTING", from.id});
    AdminCall(from.endpoint, {"CLUSTER", "SETSLOT", s, "MIGRATING", to.id});
    if (!keys.empty()) Migrate(from, to, keys);
    if (during) during();
    // Whatever `during` did, the migration is finished, so that no slot is
    // left migrating for the next tests. The slot's other keys (earlier
    // runs' keys share it) move too: the source refuses SETSLOT NODE while
    // it holds some.
    for (int round = 0; round < 1000; ++round) {
      const Reply rest =
          AdminCall(from.endpoint, {"CLUSTER", "GETKEYSINSLOT", s, "100"});
      if (rest.elements.empty()) break;
      std::vector<std::string> more;
      for (const Reply& k : rest.elements) more.push_back(k.str);
      Migrate(from, to, more);
    }
    // The target first (it bumps its epoch), then the source, then the
    // other masters, so that every master's CLUSTER SLOTS agrees.
    AdminCall(to.endpoint, {"CLUSTER", "SETSLOT", s, "NODE", to.id});
    AdminCall(from.endpoint, {"CLUSTER", "SETSLOT", s, "NODE", to.id});
    for (const NodeInfo& m : Masters()) {
      if (m.id != to.id && m.id != from.id) {
        AdminCall(m.endpoint, {"CLUSTER", "SETSLOT", s, "NODE", to.id});
      }
    }
  }

  ClusterEnv env_;
  std::unique_ptr<ClusterClient> client_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<Connection>> admin_;
};

// SlotOf agrees with Redis: the specification's vectors, and the server's
// own CLUSTER KEYSLOT for 200+ keys with hash tags, empty and nested tags
// and binary bytes.
TEST(SlotOfTest, KnownVectors) {
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(ClusterClient::SlotOf("foo"), 12182);
  EXPECT_EQ(ClusterClient::SlotOf("{user1000}.following"),
            ClusterClient::SlotOf("{user1000}.followers"));
  EXPECT_EQ(ClusterClient::SlotOf("{user1000}.following"),
            ClusterClient::SlotOf("user1000"));
  // The cluster specification's examples of hash tags.
  EXPECT_EQ(ClusterClient::SlotOf("foo{}{bar}"), Crc16("foo{}{bar}") & 16383);
  EXPECT_EQ(ClusterClient::SlotOf("foo{{bar}}zap"),
            ClusterClient::SlotOf("{bar"));
  EXPECT_EQ(ClusterClient::SlotOf("foo{bar}{zap}"),
            ClusterClient::SlotOf("bar"));
  EXPECT_EQ(ClusterClient::SlotOf("{}x"), Crc16("{}x") & 16383);
  EXPECT_EQ(ClusterClient::SlotOf("{a{b}c}"), ClusterClient::SlotOf("a{b"));
  EXPECT_EQ(ClusterClient::SlotOf(""), 0);
}

// Error replies: which redirect, which are retried, and the node a
// redirection names (an empty host is the answering node's).
TEST(RedirectTest, ClassifiesAndParses) {
  EXPECT_EQ(ClassifyError("MOVED 3999 127.0.0.1:6381"), ErrorClass::kMoved);
  EXPECT_EQ(ClassifyError("ASK 3999 127.0.0.1:6381"), ErrorClass::kAsk);
  EXPECT_EQ(ClassifyError("TRYAGAIN Multiple keys request during rehashing "
                          "of slot"),
            ErrorClass::kRetry);
  EXPECT_EQ(ClassifyError("LOADING Redis is loading the dataset in memory"),
            ErrorClass::kRetry);
  EXPECT_EQ(ClassifyError("CLUSTERDOWN The cluster is down"),
            ErrorClass::kRetryAfterRefresh);
  EXPECT_EQ(ClassifyError("MASTERDOWN Link with MASTER is down"),
            ErrorClass::kRetryAfterRefresh);
  EXPECT_EQ(ClassifyError("READONLY You can't write against a read only "
                          "replica."),
            ErrorClass::kRetryAfterRefresh);
  EXPECT_EQ(ClassifyError("ASKING is not a prefix match"), ErrorClass::kFinal);
  EXPECT_EQ(ClassifyError("MOVEDX 1 a:1"), ErrorClass::kFinal);
  EXPECT_EQ(ClassifyError("NOPERM this user has no permissions"),
            ErrorClass::kFinal);
  EXPECT_EQ(ClassifyError(""), ErrorClass::kFinal);

  const Endpoint from{"10.0.0.1", 7000};
  Endpoint to;
  ASSERT_TRUE(ParseRedirect("MOVED 3999 127.0.0.1:6381", from, &to));
  EXPECT_EQ(to.host, "127.0.0.1");
  EXPECT_EQ(to.port, 6381);
  ASSERT_TRUE(ParseRedirect("ASK 1 :6380", from, &to));
  EXPECT_EQ(to.host, "10.0.0.1");
  EXPECT_EQ(to.port, 6380);
  ASSERT_TRUE(ParseRedirect("MOVED 1 ::1:6390", from, &to));
  EXPECT_EQ(to.host, "::1");
  EXPECT_EQ(to.port, 6390);
  EXPECT_FALSE(ParseRedirect("MOVED 3999", from, &to));
  EXPECT_FALSE(ParseRedirect("MOVED 3999 host", from, &to));
  EXPECT_FALSE(ParseRedirect("MOVED 3999 host:0", from, &to));
  EXPECT_FALSE(ParseRedirect("MOVED 3999 host:65536", from, &to));
  EXPECT_FALSE(ParseRedirect("MOVED 3999 host:12x", from, &to));
}

// CLUSTER SLOTS replies: ranges of one master merge, an empty host is the
// answering node's, "?" endpoints are left out, and malformed replies are
// an IOError, not a map.
Reply Int(int64_t v) {
  Reply r;
  r.kind = Reply::Kind::kInteger;
  r.integer = v;
  return r;
}
Reply Str(const std::string& s) {
  Reply r;
  r.kind = Reply::Kind::kString;
  r.str = s;
  return r;
}
Reply Arr(std::vector<Reply> elements) {
  Reply r;
  r.kind = Reply::Kind::kArray;
  r.elements = std::move(elements);
  return r;
}
Reply NodeEntry(const std::string& host, int port, const std::string& id) {
  return Arr({Str(host), Int(port), Str(id), Arr({})});
}

TEST(SlotMapTest, ParsesClusterSlots) {
  const Reply reply = Arr({
      Arr({Int(100), Int(16383), NodeEntry("10.0.0.2", 7001, "b"),
           NodeEntry("10.0.0.4", 7003, "d")}),
      Arr({Int(0), Int(49), NodeEntry("", 7000, "a"),
           NodeEntry("?", 7002, "c")}),
      Arr({Int(50), Int(99), NodeEntry("", 7000, "a")}),
  });
  std::shared_ptr<const SlotMap> map;
  ASSERT_OK(SlotMap::Parse(reply, {"10.0.0.1", 7000}, &map));
  ASSERT_EQ(map->shards().size(), 2u);
  EXPECT_EQ(map->served_slots(), kSlots);
  const SlotMap::Shard& a = map->shards()[0];
  EXPECT_EQ(a.master.host, "10.0.0.1");  // "": the node that answered
  EXPECT_EQ(a.master_id, "a");
  EXPECT_TRUE(a.replicas.empty());      // "?": no known endpoint
  ASSERT_EQ(a.slot_ranges.size(), 1u);  // 0-49 and 50-99 merged
  EXPECT_EQ(a.slot_ranges[0], std::make_pair(0, 99));
  EXPECT_EQ(map->ShardOf(99), &a);
  EXPECT_EQ(map->ShardOf(100), &map->shards()[1]);
  const std::vector<NodeInfo> nodes = map->Nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_TRUE(nodes[0].master && nodes[1].master && !nodes[2].master);
  EXPECT_EQ(nodes[2].id, "d");
  EXPECT_EQ(nodes[2].master_id, "b");

  // A slot no range covers has no shard.
  std::shared_ptr<const SlotMap> partial;
  ASSERT_OK(SlotMap::Parse(Arr({Arr({Int(0), Int(9), NodeEntry("h", 1, "x")})}),
                           {"h", 1}, &partial));
  EXPECT_EQ(partial->served_slots(), 10);
  EXPECT_EQ(partial->ShardOf(10), nullptr);

  const Endpoint from{"10.0.0.1", 7000};
  const std::vector<Reply> bad = {
      Str("not an array"),
      Arr({Arr({Int(0), Int(16384), NodeEntry("h", 1, "x")})}),
      Arr({Arr({Int(5), Int(4), NodeEntry("h", 1, "x")})}),
      Arr({Arr({Int(0), Int(9), NodeEntry("h", 1, "x")}),
           Arr({Int(9), Int(20), NodeEntry("h", 2, "y")})}),
      Arr({Arr({Int(0), Int(9), NodeEntry("h", 70000, "x")})}),
      Arr({Arr({Int(0), Int(9)})}),
      Arr({Arr({Int(0), Int(9), Arr({Int(1), Int(2)})})}),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    std::shared_ptr<const SlotMap> m;
    const Status s = SlotMap::Parse(bad[i], from, &m);
    EXPECT_TRUE(s.IsIOError()) << i << ": " << s.ToString();
    EXPECT_NE(s.message().find("10.0.0.1:7000"), std::string::npos) << i;
  }
}

// The error paths against a scripted node (tests/cluster/fake_node.h):
// deterministic, and no cluster needed.
using test::FakeNode;

ClientOptions FakeOptions(const FakeNode& seed) {
  ClientOptions o;
  o.seeds = {{"127.0.0.1", seed.port()}};
  o.user = "tally";
  o.password = "sekrit-password-1234";  // must appear in no message
  return o;
}

// A command formatted by its caller (Command::resp, RespArgs) reaches the
// node as the same arguments as its args would: an empty one, a number,
// joined parts and binary bytes included.
TEST(FakeNodeTest, PreformattedCommandArrivesAsItsArguments) {
  std::vector<std::vector<std::string>> seen;
  int self = 0;
  FakeNode node([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(self);
    seen.push_back(args);
    return FakeNode::Bulk("ok");
  });
  self = node.port();
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(FakeOptions(node), &client));
  RespArgs head;
  head.Add("ECHOALL");
  head.Add("");
  RespArgs rest;
  rest.AddNumber(-1234567890123);
  rest.AddJoined({"tag", ":m:", "", std::string_view("a\0\r\nb", 5)});
  Command formatted;
  formatted.resp = RespCommand({&head, &rest});
  formatted.slot = 0;
  Command plain{{"ECHOALL", "", "-1234567890123",
                 std::string("tag:m:a\0\r\nb", 11)},
                0};
  std::vector<Reply> replies;
  ASSERT_OK(client->Run({formatted, plain}, &replies));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].str, "ok") << Describe(replies[0]);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], plain.args);
  EXPECT_EQ(seen[1], plain.args);
}

// A node that refuses connections: each Run round fails to connect, backs
// off, re-reads the map, and once retry_budget_ms has passed the reply is
// a kError naming the node, the error and the budget.
TEST(FakeNodeTest, RefusedNodeRetriedUntilTheBudgetEnds) {
  const int dead = FakeNode::DeadPort();
  FakeNode seed([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(dead);
    return "-ERR unexpected\r\n";
  });
  ClientOptions options = FakeOptions(seed);
  options.retry_budget_ms = 300;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Reply> replies;
  const Clock::time_point start = Clock::now();
  ASSERT_OK(client->Run({Command{{"INCR", "k"}, 0}}, &replies));
  const long long ms = MsSince(start);
  ASSERT_EQ(replies[0].kind, Reply::Kind::kError) << Describe(replies[0]);
  const std::string& why = replies[0].str;
  EXPECT_NE(why.find("127.0.0.1:" + std::to_string(dead)), std::string::npos)
      << why;
  EXPECT_NE(why.find("Connection refused"), std::string::npos) << why;
  EXPECT_NE(why.find("retry_budget_ms is 300"), std::string::npos) << why;
  EXPECT_EQ(why.find(options.password), std::string::npos);
  EXPECT_GE(ms, 300);
  EXPECT_LT(ms, 3000);
  // Backoff 5, 10, 20, 40, 80, 160 ms: about six rounds in 300 ms.
  EXPECT_GE(client->Stats().retried, 4u);
  EXPECT_LE(client->Stats().retried, 10u);
  EXPECT_GE(client->Stats().refreshes, 3u);  // the map is re-read each time
}

// A node that answers MOVED to itself forever: max_redirects ends it.
TEST(FakeNodeTest, MovedLoopEndsAfterMaxRedirects) {
  std::atomic<int> self{0};
  FakeNode node([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(self);
    return "-MOVED 0 127.0.0.1:" + std::to_string(self) + "\r\n";
  });
  self = node.port();
  ClientOptions options = FakeOptions(node);
  options.max_redirects = 3;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Reply> replies;
  ASSERT_OK(client->Run({Command{{"GET", "k"}, 0}}, &replies));
  ASSERT_EQ(replies[0].kind, Reply::Kind::kError) << Describe(replies[0]);
  EXPECT_EQ(replies[0].str.rfind("MOVED", 0), 0u) << replies[0].str;
  EXPECT_NE(replies[0].str.find("gave up after 3 redirections"),
            std::string::npos)
      << replies[0].str;
  EXPECT_EQ(client->Stats().moved, 3u);
}

// The connection closes after the first reply of a pipeline: the command
// answered keeps its reply, the non-idempotent one whose reply was lost is
// kUnknown, the idempotent one is resent on a new connection and answered.
TEST(FakeNodeTest, ConnectionClosedMidPipeline) {
  std::atomic<int> self{0};
  std::atomic<int> gets{0};
  FakeNode node([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(self);
    if (args[0] == "INCR" && args[1] == "a") return FakeNode::Int(1);
    if (args[0] == "INCR" && args[1] == "b") return FakeNode::kClose;
    if (args[0] == "GET") {
      ++gets;
      return FakeNode::Bulk("c");
    }
    return "-ERR unexpected\r\n";
  });
  self = node.port();
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(FakeOptions(node), &client));
  Command get{{"GET", "c"}, 0};
  get.idempotent = true;
  std::vector<Reply> replies;
  ASSERT_OK(client->Run(
      {Command{{"INCR", "a"}, 0}, Command{{"INCR", "b"}, 0}, get}, &replies));
  EXPECT_EQ(replies[0].kind, Reply::Kind::kInteger) << Describe(replies[0]);
  EXPECT_EQ(replies[0].integer, 1);
  EXPECT_EQ(replies[1].kind, Reply::Kind::kUnknown) << Describe(replies[1]);
  EXPECT_EQ(replies[1].str.find("sekrit"), std::string::npos);
  EXPECT_EQ(replies[2].kind, Reply::Kind::kString) << Describe(replies[2]);
  EXPECT_EQ(replies[2].str, "c");
  EXPECT_EQ(gets.load(), 1);  // the first GET was never read by the node
  const ClientStats stats = client->Stats();
  EXPECT_EQ(stats.unknown, 1u);
  EXPECT_EQ(stats.resent_lost, 1u);
  EXPECT_GE(stats.connections_dropped, 1u);
}

// No answer within command_timeout_ms: kUnknown saying so.
TEST(FakeNodeTest, SilentNodeTimesOut) {
  std::atomic<int> self{0};
  FakeNode node([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(self);
    return "";  // never answers
  });
  self = node.port();
  ClientOptions options = FakeOptions(node);
  options.command_timeout_ms = 100;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Reply> replies;
  const Clock::time_point start = Clock::now();
  ASSERT_OK(client->Run({Command{{"INCR", "k"}, 0}}, &replies));
  EXPECT_GE(MsSince(start), 100);
  ASSERT_EQ(replies[0].kind, Reply::Kind::kUnknown) << Describe(replies[0]);
  EXPECT_NE(replies[0].str.find("timed out after 100 ms"), std::string::npos)
      << replies[0].str;
}

// TRYAGAIN twice, then the answer: retried after a backoff, without a map
// refresh; CLUSTERDOWN once: retried after a refresh.
TEST(FakeNodeTest, TransientErrorsAreRetried) {
  std::atomic<int> self{0};
  std::atomic<int> sets{0};
  std::atomic<int> gets{0};
  FakeNode node([&](const std::vector<std::string>& args) -> std::string {
    if (args[0] == "CLUSTER") return FakeNode::AllSlotsOn(self);
    if (args[0] == "SET") {
      return ++sets <= 2 ? "-TRYAGAIN Multiple keys request during rehashing "
                           "of slot\r\n"
                         : "+OK\r\n";
    }
    if (args[0] == "GET") {
      return ++gets == 1 ? "-CLUSTERDOWN The cluster is down\r\n"
                         : FakeNode::Bulk("v");
    }
    return "-ERR unexpected\r\n";
  });
  self = node.port();
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(FakeOptions(node), &client));
  std::vector<Reply> replies;
  ASSERT_OK(client->Run({Command{{"SET", "k", "v"}, 0}}, &replies));
  EXPECT_EQ(replies[0].kind, Reply::Kind::kStatus) << Describe(replies[0]);
  EXPECT_EQ(client->Stats().retried, 2u);
  EXPECT_EQ(client->Stats().refreshes, 1u);  // Connect's only
  ASSERT_OK(client->Run({Command{{"GET", "k"}, 0}}, &replies));
  EXPECT_EQ(replies[0].str, "v") << Describe(replies[0]);
  EXPECT_EQ(client->Stats().retried, 3u);
  EXPECT_EQ(client->Stats().refreshes, 2u);
}

TEST_F(ClusterClientTest, SlotOfMatchesClusterKeyslot) {
  std::mt19937 rng(42);
  std::vector<std::string> keys = {"",
                                   "{}",
                                   "{}x",
                                   "x{}",
                                   "{a{b}c}",
                                   "{{}}",
                                   "}{",
                                   "{",
                                   "}",
                                   "a{b",
                                   "{user1000}.following",
                                   "foo{}{bar}",
                                   "foo{{bar}}zap",
                                   "foo{bar}{zap}",
                                   std::string("\0{\0}", 4),
                                   std::string("{\xff\x00}z", 5)};
  const std::string alphabet = std::string("ab{}\0\xff\x80 :", 10);
  while (keys.size() < 220) {
    std::string key;
    const size_t n = rng() % 24;
    for (size_t i = 0; i < n; ++i) {
      key += (rng() % 3 == 0) ? alphabet[rng() % alphabet.size()]
                              : static_cast<char>(rng() % 256);
    }
    keys.push_back(key);
  }
  Connection* admin = Admin(env_.seeds[0]);
  ASSERT_NE(admin, nullptr);
  for (const std::string& key : keys)
    admin->Append({"CLUSTER", "KEYSLOT", key});
  size_t unsent = 0;
  ASSERT_OK(admin->Flush(&unsent));
  for (const std::string& key : keys) {
    Reply r;
    ASSERT_OK(admin->ReadReply(&r));
    ASSERT_EQ(r.kind, Reply::Kind::kInteger) << Describe(r);
    EXPECT_EQ(ClusterClient::SlotOf(key), r.integer)
        << "key of " << key.size() << " bytes";
  }
}

// 3000 commands (SET, INCRBY, GET on 1000 keys over all slots) in one Run
// reach their owners without a redirection and come back in order.
TEST_F(ClusterClientTest, ManyCommandsOneRun) {
  constexpr int kKeys = 1000;
  std::vector<Command> commands;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = prefix_ + "many:" + std::to_string(i);
    commands.push_back(Cmd({"SET", key, std::to_string(i)}));
    commands.push_back(Cmd({"INCRBY", key, "7"}));
    commands.push_back(Cmd({"GET", key}, true, true));
  }
  std::vector<bool> slots_seen(kSlots);
  const ClientStats before = client_->Stats();
  const Clock::time_point start = Clock::now();
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run(commands, &replies));
  const long long ms = MsSince(start);
  std::printf("[ timing ] 3000 commands over 1000 keys in one Run: %lld ms\n",
              ms);
  RecordProperty("run_ms", std::to_string(ms));
  ASSERT_EQ(replies.size(), commands.size());
  for (int i = 0; i < kKeys; ++i) {
    const Reply& set = replies[3 * i];
    const Reply& incr = replies[3 * i + 1];
    const Reply& get = replies[3 * i + 2];
    ASSERT_EQ(set.kind, Reply::Kind::kStatus) << i << ": " << Describe(set);
    EXPECT_EQ(set.str, "OK");
    ASSERT_EQ(incr.kind, Reply::Kind::kInteger) << i << ": " << Describe(incr);
    EXPECT_EQ(incr.integer, i + 7);
    ASSERT_EQ(get.kind, Reply::Kind::kString) << i << ": " << Describe(get);
    EXPECT_EQ(get.str, std::to_string(i + 7));
    EXPECT_EQ(get.replicas_acked, -1);
  }
  const ClientStats after = client_->Stats();
  EXPECT_EQ(after.moved, before.moved);
  EXPECT_EQ(after.asked, before.asked);
  EXPECT_EQ(after.retried, before.retried);

  // Each key is on the master the client's map names (a non-owner would
  // answer MOVED to a plain connection).
  std::map<std::string, std::vector<std::string>> keys_of;
  std::map<std::string, Endpoint> node_of;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = prefix_ + "many:" + std::to_string(i);
    const NodeInfo owner = OwnerOf(ClusterClient::SlotOf(key));
    keys_of[AddressOf(owner.endpoint)].push_back(key);
    node_of[AddressOf(owner.endpoint)] = owner.endpoint;
  }
  EXPECT_EQ(keys_of.size(), Masters().size());  // all masters were used
  for (auto& [address, keys] : keys_of) {
    Connection* admin = Admin(node_of[address]);
    ASSERT_NE(admin, nullptr);
    for (const std::string& key : keys) admin->Append({"EXISTS", key});
    size_t unsent = 0;
    ASSERT_OK(admin->Flush(&unsent));
    for (const std::string& key : keys) {
      Reply r;
      ASSERT_OK(admin->ReadReply(&r));
      EXPECT_EQ(r.kind, Reply::Kind::kInteger)
          << key << " on " << address << ": " << Describe(r);
      EXPECT_EQ(r.integer, 1) << key << " on " << address;
    }
  }
}

// During a slot migration, a read of a key that already moved follows ASK
// (ASKING on the target) without changing the map; once the slot is
// reassigned, MOVED refreshes the map and Nodes() names the new owner.
TEST_F(ClusterClientTest, AskDuringMigrationThenMoved) {
  const std::string key = prefix_ + "migrating";
  const int slot = ClusterClient::SlotOf(key);
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run({Cmd({"SET", key, "v1"})}, &replies));
  ASSERT_EQ(replies[0].kind, Reply::Kind::kStatus) << Describe(replies[0]);

  const NodeInfo source = OwnerOf(slot);
  NodeInfo target;
  for (const NodeInfo& m : Masters()) {
    if (m.id != source.id) target = m;
  }
  ASSERT_FALSE(target.id.empty()) << "the cluster has one master";

  const int64_t asking_before = CommandCalls(target.endpoint, "asking");
  const ClientStats before = client_->Stats();
  MoveSlot(slot, source, target, {key}, [&] {
    std::vector<Reply> r;
    ASSERT_OK(client_->Run({Cmd({"GET", key}, true, true)}, &r));
    ASSERT_EQ(r[0].kind, Reply::Kind::kString) << Describe(r[0]);
    EXPECT_EQ(r[0].str, "v1");
    EXPECT_GT(client_->Stats().asked, before.asked);
    EXPECT_GT(CommandCalls(target.endpoint, "asking"), asking_before);
    EXPECT_EQ(OwnerOf(slot).id, source.id) << "ASK must not change the map";
  });
  if (HasFatalFailure()) return;

  ASSERT_OK(
      client_->Run({Cmd({"SET", key, "v2"}), Cmd({"GET", key})}, &replies));
  ASSERT_EQ(replies[1].kind, Reply::Kind::kString) << Describe(replies[1]);
  EXPECT_EQ(replies[1].str, "v2");
  EXPECT_GT(client_->Stats().moved, before.moved);
  EXPECT_EQ(OwnerOf(slot).id, target.id) << "MOVED must refresh the map";

  // Back where it was (the next tests expect the cluster's own layout).
  MoveSlot(slot, target, source, {key});
  ASSERT_OK(client_->Run({Cmd({"GET", key})}, &replies));
  EXPECT_EQ(replies[0].str, "v2") << Describe(replies[0]);
  EXPECT_EQ(OwnerOf(slot).id, source.id);
}

// TRYAGAIN: a multi-key MGET whose keys are split by a migration (one
// moved, one not) is retried with backoff; with a short budget it ends as
// a kError naming the node and the budget; with a long one it succeeds
// once the second key has moved too.
TEST_F(ClusterClientTest, TryAgainRetriedWithinBudget) {
  const std::string tag = "{" + prefix_ + "split}";
  const std::string k1 = prefix_ + tag + ":1";
  const std::string k2 = prefix_ + tag + ":2";
  const int slot = ClusterClient::SlotOf(k1);
  ASSERT_EQ(slot, ClusterClient::SlotOf(k2));
  std::vector<Reply> replies;
  ASSERT_OK(
      client_->Run({Cmd({"SET", k1, "a"}), Cmd({"SET", k2, "b"})}, &replies));
  const NodeInfo source = OwnerOf(slot);
  NodeInfo target;
  for (const NodeInfo& m : Masters()) {
    if (m.id != source.id) target = m;
  }
  ASSERT_FALSE(target.id.empty());
  const Command mget = Cmd({"MGET", k1, k2}, /*idempotent=*/true, true);

  const ClientStats before = client_->Stats();
  MoveSlot(slot, source, target, {k1}, [&] {
    ClientOptions short_budget = Options();
    short_budget.retry_budget_ms = 300;
    std::unique_ptr<ClusterClient> impatient;
    ASSERT_OK(ClusterClient::Connect(short_budget, &impatient));
    std::vector<Reply> r;
    const Clock::time_point start = Clock::now();
    ASSERT_OK(impatient->Run({mget}, &r));
    EXPECT_GE(MsSince(start), 300);
    ASSERT_EQ(r[0].kind, Reply::Kind::kError) << Describe(r[0]);
    EXPECT_EQ(r[0].str.rfind("TRYAGAIN", 0), 0u) << r[0].str;
    EXPECT_NE(r[0].str.find(AddressOf(source.endpoint)), std::string::npos)
        << r[0].str;
    EXPECT_NE(r[0].str.find("retry_budget_ms"), std::string::npos) << r[0].str;
    EXPECT_GT(impatient->Stats().retried, 0u);

    // The patient client retries until k2 has moved as well.
    std::vector<Reply> patient;
    Status patient_status;
    std::thread run([&] { patient_status = client_->Run({mget}, &patient); });
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
    while (client_->Stats().retried == before.retried &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_GT(client_->Stats().retried, before.retried);
    Migrate(source, target, {k2});
    run.join();
    ASSERT_OK(patient_status);
    ASSERT_EQ(patient[0].kind, Reply::Kind::kArray) << Describe(patient[0]);
    ASSERT_EQ(patient[0].elements.size(), 2u);
    EXPECT_EQ(patient[0].elements[0].str, "a");
    EXPECT_EQ(patient[0].elements[1].str, "b");
  });
  if (HasFatalFailure()) return;
  MoveSlot(slot, target, source, {k1, k2});
  ASSERT_OK(client_->Run({mget}, &replies));
  ASSERT_EQ(replies[0].kind, Reply::Kind::kArray) << Describe(replies[0]);
  EXPECT_EQ(replies[0].elements[1].str, "b");
}

// Pooled connections that the server closed while idle (CLIENT KILL) are
// noticed before use: a non-idempotent INCRBY afterwards runs, exactly
// once, instead of being written into a dead socket and reported unknown.
TEST_F(ClusterClientTest, DeadPooledConnectionsAreReplaced) {
  ClientOptions options = Options();
  options.client_name = "tally-test-" + std::to_string(getpid());
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Command> incr;
  for (int i = 0; i < 30; ++i) {
    incr.push_back(Cmd({"INCRBY", prefix_ + "pool:" + std::to_string(i), "1"}));
  }
  std::vector<Reply> replies;
  ASSERT_OK(client->Run(incr, &replies));  // fills the pool

  int killed = 0;
  for (const NodeInfo& node : client->Nodes()) {
    const Reply list = AdminCall(node.endpoint, {"CLIENT", "LIST"});
    std::stringstream lines(list.str);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find(" name=" + options.client_name + " ") ==
          std::string::npos) {
        continue;
      }
      const std::string id = line.substr(3, line.find(' ') - 3);
      AdminCall(node.endpoint, {"CLIENT", "KILL", "ID", id});
      ++killed;
    }
  }
  ASSERT_GT(killed, 0);
  // The server has closed them once CLIENT LIST no longer shows them (the
  // FIN is then on its way over loopback).
  for (const NodeInfo& node : client->Nodes()) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
    while (AdminCall(node.endpoint, {"CLIENT", "LIST"})
                   .str.find(" name=" + options.client_name + " ") !=
               std::string::npos &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const ClientStats before = client->Stats();
  ASSERT_OK(client->Run(incr, &replies));
  for (const Reply& r : replies) {
    EXPECT_EQ(r.kind, Reply::Kind::kInteger) << Describe(r);
    EXPECT_EQ(r.integer, 2);
  }
  const ClientStats after = client->Stats();
  EXPECT_EQ(after.unknown, before.unknown);
  EXPECT_GE(after.connections_dropped, before.connections_dropped + killed);
}

// After a failover (CLUSTER FAILOVER TAKEOVER on a replica) the old
// master answers MOVED: the client refreshes and writes to the promoted
// replica; and again after failing back. TAKEOVER, not a voted failover:
// masters vote for the replicas of one master once per 2 x
// cluster-node-timeout, so back-to-back runs of this test would time out;
// WAIT makes sure the replica has every write before it takes over.
TEST_F(ClusterClientTest, FollowsFailover) {
  const std::string key = prefix_ + "failover";
  RunOptions wait;
  wait.wait_replicas = 1;
  wait.wait_timeout_ms = 1000;
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run({Cmd({"SET", key, "10"})}, &replies, wait));
  ASSERT_EQ(replies[0].replicas_acked, 1);
  const NodeInfo master = OwnerOf(ClusterClient::SlotOf(key));
  // A cluster just created may not list every replica in CLUSTER SLOTS yet
  // (the masters learn of them by gossip): wait for one.
  NodeInfo replica;
  const Clock::time_point listed = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    for (const NodeInfo& n : client_->Nodes()) {
      if (!n.master && n.master_id == master.id) replica = n;
    }
    if (!replica.id.empty() || Clock::now() > listed) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_OK(client_->RefreshSlots());
  }
  if (replica.id.empty()) GTEST_SKIP() << "the master has no replica";

  // Fails over to `to` and waits until `from` follows it, its link up.
  auto fail_over = [&](const NodeInfo& to, const NodeInfo& from) {
    AdminCall(to.endpoint, {"CLUSTER", "FAILOVER", "TAKEOVER"});
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
    for (;;) {
      const Reply role = AdminCall(from.endpoint, {"ROLE"});
      const Reply info = AdminCall(from.endpoint, {"INFO", "replication"});
      if (!role.elements.empty() && role.elements[0].str == "slave" &&
          info.str.find("master_link_status:up") != std::string::npos) {
        break;
      }
      ASSERT_LT(Clock::now(), deadline)
          << "failover to " << AddressOf(to.endpoint);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  const ClientStats before = client_->Stats();
  fail_over(replica, master);
  if (HasFatalFailure()) return;
  ASSERT_OK(client_->Run({Cmd({"INCRBY", key, "1"})}, &replies, wait));
  EXPECT_EQ(replies[0].integer, 11) << Describe(replies[0]);
  EXPECT_EQ(replies[0].replicas_acked, 1);
  EXPECT_GT(client_->Stats().moved + client_->Stats().retried,
            before.moved + before.retried);
  EXPECT_EQ(OwnerOf(ClusterClient::SlotOf(key)).id, replica.id);

  fail_over(master, replica);
  if (HasFatalFailure()) return;
  ASSERT_OK(client_->Run({Cmd({"INCRBY", key, "1"})}, &replies));
  EXPECT_EQ(replies[0].integer, 12) << Describe(replies[0]);
  EXPECT_EQ(OwnerOf(ClusterClient::SlotOf(key)).id, master.id);
  EXPECT_EQ(client_->Stats().unknown, before.unknown);
}

// A reply lost to a timeout (the node paused by CLIENT PAUSE longer than
// command_timeout_ms): the non-idempotent INCRBY gets kUnknown and is not
// resent; the idempotent SET in the same pipeline is resent until the
// pause ends, and succeeds. The connection that timed out is not reused
// (later replies would be off by one).
TEST_F(ClusterClientTest, LostReplyUnknownOrResent) {
  const std::string tag = "{" + prefix_ + "lost}";
  const std::string counter = prefix_ + tag + ":counter";
  const std::string flag = prefix_ + tag + ":flag";
  ClientOptions options = Options();
  options.command_timeout_ms = 200;
  options.retry_budget_ms = 8000;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Reply> replies;
  ASSERT_OK(
      client->Run({Cmd({"SET", counter, "0"}), Cmd({"DEL", flag})}, &replies));
  ASSERT_TRUE(replies[0].ok() && replies[1].ok());
  const NodeInfo owner = OwnerOf(ClusterClient::SlotOf(counter));

  constexpr int kPauseMs = 1500;
  AdminCall(owner.endpoint, {"CLIENT", "PAUSE", std::to_string(kPauseMs)});
  const Clock::time_point paused = Clock::now();
  const ClientStats before = client->Stats();
  // The INCRBY first: a resent SET that read from the timed-out connection
  // would get the INCRBY's integer.
  ASSERT_OK(client->Run({Cmd({"INCRBY", counter, "1"}),
                         Cmd({"SET", flag, "set"}, /*idempotent=*/true)},
                        &replies));
  const long long ms = MsSince(paused);
  EXPECT_EQ(replies[0].kind, Reply::Kind::kUnknown) << Describe(replies[0]);
  EXPECT_NE(replies[0].str.find("may or may not have run"), std::string::npos)
      << replies[0].str;
  EXPECT_EQ(replies[1].kind, Reply::Kind::kStatus) << Describe(replies[1]);
  EXPECT_GE(ms, kPauseMs - 100) << "the SET cannot succeed before the pause "
                                   "ends";
  const ClientStats after = client->Stats();
  EXPECT_GE(after.resent_lost, before.resent_lost + 1);
  EXPECT_EQ(after.unknown, before.unknown + 1);
  EXPECT_GE(after.connections_dropped, before.connections_dropped + 1);

  // Fresh replies match their commands; the INCRBY ran once or never.
  ASSERT_OK(client->Run({Cmd({"GET", flag}), Cmd({"GET", counter}),
                         Cmd({"INCRBY", counter, "10"})},
                        &replies));
  EXPECT_EQ(replies[0].str, "set") << Describe(replies[0]);
  ASSERT_EQ(replies[1].kind, Reply::Kind::kString) << Describe(replies[1]);
  EXPECT_TRUE(replies[1].str == "0" || replies[1].str == "1") << replies[1].str;
  EXPECT_EQ(replies[2].integer, std::stoll(replies[1].str) + 10);
}

// 8 threads, each running Runs of 200 INCRBYs on keys of its own through
// one client: every reply is the running sum of its own key (a reply that
// reached another Run's command would break it), and the totals are exact.
TEST_F(ClusterClientTest, ConcurrentRunsNeverMixReplies) {
  constexpr int kThreads = 8;
  constexpr int kRuns = 20;
  constexpr int kCommands = 200;
  constexpr int kKeysPerThread = 37;
  std::atomic<int> bad{0};
  std::vector<std::vector<int64_t>> totals(
      kThreads, std::vector<int64_t>(kKeysPerThread));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int64_t>& total = totals[t];
      for (int run = 0; run < kRuns; ++run) {
        std::vector<Command> commands;
        std::vector<int64_t> expect;
        for (int c = 0; c < kCommands; ++c) {
          const int k = (run * kCommands + c) % kKeysPerThread;
          const int64_t by = (t + 1) * 1000 + c;
          total[k] += by;
          expect.push_back(total[k]);
          commands.push_back(Cmd(
              {"INCRBY",
               prefix_ + "conc:" + std::to_string(t) + ":" + std::to_string(k),
               std::to_string(by)}));
        }
        std::vector<Reply> replies;
        if (!client_->Run(commands, &replies).ok()) {
          ++bad;
          return;
        }
        for (int c = 0; c < kCommands; ++c) {
          if (replies[c].kind != Reply::Kind::kInteger ||
              replies[c].integer != expect[c]) {
            ++bad;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  std::vector<Command> reads;
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kKeysPerThread; ++k) {
      reads.push_back(Cmd({"GET", prefix_ + "conc:" + std::to_string(t) + ":" +
                                      std::to_string(k)}));
    }
  }
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run(reads, &replies));
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kKeysPerThread; ++k) {
      EXPECT_EQ(replies[t * kKeysPerThread + k].str,
                std::to_string(totals[t][k]))
          << "thread " << t << " key " << k;
    }
  }
}

// An error reply is a kError reply at its command's index, the other
// commands of the pipeline unharmed.
TEST_F(ClusterClientTest, ErrorReplyIsAReply) {
  const std::string key = prefix_ + "text";
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run(
      {Cmd({"SET", key, "abc"}), Cmd({"INCRBY", key, "1"}), Cmd({"GET", key})},
      &replies));
  EXPECT_EQ(replies[1].kind, Reply::Kind::kError);
  EXPECT_EQ(replies[1].str.rfind("ERR", 0), 0u) << replies[1].str;
  EXPECT_EQ(replies[2].str, "abc");
}

// Under ACLs, a command the app user may not run is a NOPERM kError reply.
TEST_F(ClusterClientTest, NoPermIsAnErrorReply) {
  if (!env_.acl) GTEST_SKIP() << "the cluster has no ACL (no admin password)";
  Command keys;
  keys.args = {"KEYS", "*"};  // slot -1: any master
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run({keys, Cmd({"GET", "outside:tally"}),
                          Cmd({"SET", prefix_ + "perm", "ok"})},
                         &replies));
  EXPECT_EQ(replies[0].kind, Reply::Kind::kError);
  EXPECT_EQ(replies[0].str.rfind("NOPERM", 0), 0u) << Describe(replies[0]);
  EXPECT_EQ(replies[1].kind, Reply::Kind::kError);
  EXPECT_EQ(replies[1].str.rfind("NOPERM", 0), 0u) << Describe(replies[1]);
  EXPECT_EQ(replies[2].kind, Reply::Kind::kStatus) << Describe(replies[2]);
}

// A wrong password: Connect fails with InvalidArgument naming the user,
// and the password appears in no message.
TEST_F(ClusterClientTest, WrongPasswordNamesUserNotPassword) {
  if (!env_.acl) GTEST_SKIP() << "the cluster has no ACL (no admin password)";
  ClientOptions options = Options();
  options.password = "not-the-password-" + std::to_string(getpid());
  std::unique_ptr<ClusterClient> client;
  Status s = ClusterClient::Connect(options, &client);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(options.user), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().find(options.password), std::string::npos);
}

// With wait_replicas 1, every reply says one replica acknowledged (the
// cluster has one replica per master, healthy); a WAIT longer than
// command_timeout_ms is waited for.
TEST_F(ClusterClientTest, WaitCountsReplicas) {
  std::vector<Command> commands;
  for (int i = 0; i < 100; ++i) {
    commands.push_back(
        Cmd({"SET", prefix_ + "wait:" + std::to_string(i), "x"}));
  }
  RunOptions run;
  run.wait_replicas = 1;
  run.wait_timeout_ms = 1000;
  std::vector<Reply> replies;
  ASSERT_OK(client_->Run(commands, &replies, run));
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(replies[i].kind, Reply::Kind::kStatus) << Describe(replies[i]);
    EXPECT_EQ(replies[i].replicas_acked, 1) << i;
  }
  run.wait_timeout_ms = 0;  // WAIT 0 would block forever
  EXPECT_TRUE(client_->Run(commands, &replies, run).IsInvalidArgument());

  // Asking for more replicas than there are: WAIT answers after its whole
  // timeout, longer than command_timeout_ms, and that is not a lost reply.
  ClientOptions options = Options();
  options.command_timeout_ms = 200;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  run.wait_replicas = 2;
  run.wait_timeout_ms = 500;
  const Clock::time_point start = Clock::now();
  ASSERT_OK(client->Run({commands[0]}, &replies, run));
  EXPECT_GE(MsSince(start), 500);
  EXPECT_EQ(replies[0].kind, Reply::Kind::kStatus) << Describe(replies[0]);
  EXPECT_EQ(replies[0].replicas_acked, 1);
  EXPECT_EQ(client->Stats().connections_dropped, 0u);
}

// read_from_replicas: a read_only GET goes to a replica (READONLY is sent
// there) and sees what WAIT confirmed replicated.
TEST_F(ClusterClientTest, ReadsFromReplicas) {
  ClientOptions options = Options();
  options.read_from_replicas = true;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  int64_t readonly_before = 0;
  std::vector<Endpoint> replicas;
  for (const NodeInfo& n : client->Nodes()) {
    if (!n.master) replicas.push_back(n.endpoint);
  }
  if (replicas.empty()) GTEST_SKIP() << "the cluster has no replica";
  for (const Endpoint& r : replicas)
    readonly_before += CommandCalls(r, "readonly");

  std::vector<Command> writes, reads;
  for (int i = 0; i < 50; ++i) {
    const std::string key = prefix_ + "replica:" + std::to_string(i);
    writes.push_back(Cmd({"SET", key, std::to_string(i)}));
    reads.push_back(Cmd({"GET", key}, false, /*read_only=*/true));
  }
  RunOptions run;
  run.wait_replicas = 1;
  run.wait_timeout_ms = 1000;
  std::vector<Reply> replies;
  ASSERT_OK(client->Run(writes, &replies, run));
  for (const Reply& r : replies) ASSERT_EQ(r.replicas_acked, 1);
  ASSERT_OK(client->Run(reads, &replies));
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(replies[i].str, std::to_string(i)) << Describe(replies[i]);
  }
  EXPECT_EQ(client->Stats().replica_fallbacks, 0u);
  int64_t readonly_after = 0;
  for (const Endpoint& r : replicas)
    readonly_after += CommandCalls(r, "readonly");
  EXPECT_GT(readonly_after, readonly_before);
}

// A replica that does not answer (paused past command_timeout_ms): its
// reads fall back to the master, once, and succeed long before the pause
// ends.
TEST_F(ClusterClientTest, ReplicaReadsFallBackToTheMaster) {
  ClientOptions options = Options();
  options.read_from_replicas = true;
  options.command_timeout_ms = 100;
  std::unique_ptr<ClusterClient> client;
  ASSERT_OK(ClusterClient::Connect(options, &client));
  std::vector<Command> writes, reads;
  for (int i = 0; i < 30; ++i) {
    const std::string key = prefix_ + "fallback:" + std::to_string(i);
    writes.push_back(Cmd({"SET", key, std::to_string(i)}));
    reads.push_back(Cmd({"GET", key}, false, /*read_only=*/true));
  }
  std::vector<Reply> replies;
  std::vector<Endpoint> replicas;
  for (const NodeInfo& n : client->Nodes()) {
    if (!n.master) replicas.push_back(n.endpoint);
  }
  if (replicas.empty()) GTEST_SKIP() << "the cluster has no replica";
  // Reads first while the replicas answer: the pool then holds a READONLY
  // connection to each, so the paused replicas' replies are lost (written,
  // no answer), not refused at connect.
  RunOptions wait;
  wait.wait_replicas = 1;
  wait.wait_timeout_ms = 1000;
  ASSERT_OK(client->Run(writes, &replies, wait));
  ASSERT_OK(client->Run(reads, &replies));
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(replies[i].str, std::to_string(i)) << Describe(replies[i]);
  }
  ASSERT_EQ(client->Stats().replica_fallbacks, 0u);
  const uint64_t dropped = client->Stats().connections_dropped;
  // Each paused replica costs one command_timeout_ms (they are read one
  // after the other): 3 x 100 ms, well within the pause.
  constexpr int kPauseMs = 1000;
  for (const Endpoint& r : replicas) {
    AdminCall(r, {"CLIENT", "PAUSE", std::to_string(kPauseMs)});
  }
  const Clock::time_point start = Clock::now();
  ASSERT_OK(client->Run(reads, &replies));
  const long long ms = MsSince(start);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(replies[i].str, std::to_string(i)) << Describe(replies[i]);
  }
  EXPECT_LT(ms, kPauseMs - 200);
  EXPECT_GE(client->Stats().replica_fallbacks, 30u);
  EXPECT_GE(client->Stats().connections_dropped, dropped + 1);
}

// Caller errors are a Status; an unreachable seed is an IOError naming it.
TEST_F(ClusterClientTest, CallerErrorsAndUnreachableSeed) {
  Command bad = Cmd({"GET", "x"});
  bad.slot = kSlots;
  std::vector<Reply> replies;
  EXPECT_TRUE(client_->Run({bad}, &replies).IsInvalidArgument());
  Command empty;
  EXPECT_TRUE(client_->Run({empty}, &replies).IsInvalidArgument());

  ClientOptions options = Options();
  options.seeds = {{"127.0.0.1", 1}};  // nothing listens on port 1
  std::unique_ptr<ClusterClient> client;
  Status s = ClusterClient::Connect(options, &client);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s.ToString();
}

// RunOnMasters reaches each master once, in Nodes() order.
TEST_F(ClusterClientTest, RunOnMastersAnswersPerMaster) {
  Command myid;
  myid.args = {"CLUSTER", "MYID"};
  std::vector<Reply> replies;
  ASSERT_OK(client_->RunOnMasters(myid, &replies));
  const std::vector<NodeInfo> masters = Masters();
  ASSERT_EQ(replies.size(), masters.size());
  for (size_t i = 0; i < masters.size(); ++i) {
    EXPECT_EQ(replies[i].str, masters[i].id) << Describe(replies[i]);
  }
}

}  // namespace
}  // namespace tally::cluster

namespace tally::cluster {
namespace {

// The backend over a slot migration under load: once-increments racing
// the migration of their shard's slot, as redis-cli --cluster reshard
// moves it (IMPORTING/MIGRATING, keys moved while the writer runs,
// SETSLOT NODE), there and back. While the tag's live, value and index
// keys have moved and its older markers have not, every new event's call
// is redirected by ASK; the rest of the keys then move under load. Every
// event must count exactly once: applied once, the value the number of
// events, one marker each, and a redelivery of every event after the
// moves is a duplicate.
TEST_F(ClusterClientTest, OnceIncrementsDuringASlotMigrationCountOnce) {
  const std::string ns = "mig" + std::to_string(getpid());
  std::string target = "redis://";
  if (!env_.user.empty()) target += env_.user + "@";
  target += env_.seeds[0].host + ":" + std::to_string(env_.seeds[0].port) +
            "/" + ns;
  setenv("TALLY_REDIS_PASSWORD", env_.password.c_str(), 1);
  unsetenv("TALLY_REDIS_PASSWORD_FILE");
  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(tally::Options(), target, &db));
  ASSERT_OK(db->CreateCounter("c", CounterSpec{1}));
  const uint64_t id = db->DescribeCounter("c").value().id;
  const std::string tag =
      "tally:" + ns + ":{" + std::to_string(id) + ".0}";
  const int slot = ClusterClient::SlotOf(tag);
  const NodeInfo from = OwnerOf(slot);
  NodeInfo to;
  for (const NodeInfo& m : Masters()) {
    if (m.id != from.id) to = m;
  }
  ASSERT_FALSE(to.id.empty());
  const int64_t asking_before = CommandCalls(to.endpoint, "asking");

  std::atomic<bool> stop{false};
  std::atomic<int> events{0};
  std::atomic<int> applied{0};
  std::atomic<int> errors{0};
  std::string first_error;
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      Result<IncrementResult> r =
          db->IncrementOnce("c", "e" + std::to_string(i), 1);
      if (!r.ok()) {
        if (errors.fetch_add(1) == 0) first_error = r.status().ToString();
      } else if (r.value().outcome == Outcome::kApplied) {
        applied.fetch_add(1);
      }
      events.store(i + 1);
    }
  });
  auto wait_for = [&](int n) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (events.load() < n && Clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_GE(events.load(), n) << "the writer stalled";
  };
  wait_for(300);
  // While the slot is split, a new event's call is sent to the target by
  // ASK and answered TRYAGAIN there (its new marker and the key index are
  // on neither node: Redis refuses a multi-key call with keys missing on
  // an importing slot), so the writer waits, within its retry budget,
  // until the move ends.
  MoveSlot(slot, from, to, {tag + ":live", tag + ":v", tag + ":mi"}, [&] {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (CommandCalls(to.endpoint, "asking") < asking_before + 5 &&
           Clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  wait_for(events.load() + 300);
  MoveSlot(slot, to, from, {});
  wait_for(events.load() + 300);
  stop.store(true);
  writer.join();

  EXPECT_EQ(errors.load(), 0) << first_error;
  EXPECT_GE(CommandCalls(to.endpoint, "asking"), asking_before + 5)
      << "new events were not redirected by ASK during the move";
  const int distinct = events.load();
  EXPECT_EQ(applied.load(), distinct);
  EXPECT_EQ(db->ReadExact("c").value(), distinct);
  EXPECT_EQ(db->CountMarkers("c").value(), static_cast<uint64_t>(distinct));
  Batch again;
  for (int i = 0; i < distinct; ++i) {
    again.AddOnce("c", "e" + std::to_string(i), 1);
  }
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(again, &results));
  for (const IncrementResult& r : results) {
    ASSERT_EQ(r.outcome, Outcome::kDuplicate);
  }
  EXPECT_EQ(db->ReadExact("c").value(), distinct);
  ASSERT_OK(db->DeleteCounter("c"));
}

}  // namespace
}  // namespace tally::cluster
