// Pinned once-increments on the cluster (docs/cluster.md, "Pinned
// once-increments"): an op whose affinity key places it away from its
// event id's own shard (its home) takes two steps, a forward at home, then
// the count with its marker in the key's shard. These tests put the
// database in the states a crash or a later call can leave, through the
// cluster client as a crashed client would have left them, and check what
// the public API answers from there:
//   - a forward without its count (the client died between the steps):
//     any copy, with the key, without it or with another, counts the event
//     once, in the shard the forward names;
//   - DeleteKey and DeleteCounter remove the forwards with the markers (no
//     key of the counter is left behind);
//   - a forward lives as long as its marker's dedupe window.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/app_client.h"
#include "cluster/client/cluster_client.h"
#include "cluster/app_client.h"
#include "cluster/api_checks.h"
#include "cluster/cluster_target.h"
#include "cluster/keys.h"
#include "cluster/records.h"
#include "cluster/target.h"
#include "core/shard_picker.h"
#include "tally/tally.h"

namespace tally::cluster {
namespace {

class PinnedOnce : public ::testing::Test {
 protected:
  void SetUp() override {
    // A namespace per test: each creates its counters afresh.
    static int tests = 0;
    target_ = test::ClusterTarget("pin" + std::to_string(++tests) + "-");
    if (target_.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    ASSERT_OK(Db::Open(Options(), target_, &db_));
    ASSERT_OK(test::ConnectAppClient(target_, &keys_, &client_));
  }

  // One command on the node of `key`'s slot.
  Reply Call(std::vector<std::string> args, const std::string& key) {
    return test::CallOn(client_.get(), std::move(args), key);
  }

  // Leaves at home a forward of `event` to `shard`, and nothing else, as a
  // client killed between the two steps leaves it.
  void LeaveForward(const CounterInfo& c, const std::string& key,
                    const std::string& event, uint32_t shard) {
    const uint32_t home = core::ShardOfKey(event, c.shards);
    ASSERT_NE(home, shard);
    const std::string tag = keys_->Tag(c, home, key);
    const std::string name = KeySpace::MarkerName(key, event);
    const Reply r =
        Call({"FCALL", "tally_forward", "3", KeySpace::Live(tag),
              KeySpace::ForwardIndex(tag), KeySpace::Marker(tag, name), "1",
              "1", "3", EncodeForward(shard), "0", name, "0"},
             tag);
    ASSERT_EQ(r.kind, Reply::Kind::kArray) << r.str;
    ASSERT_EQ(r.elements.size(), 1u);
    ASSERT_EQ(r.elements[0].kind, Reply::Kind::kInteger);
  }

  // The keys the database holds (its namespace's) on every master but its
  // catalog's.
  std::vector<std::string> KeysLeft() {
    std::vector<Reply> replies;
    Command scan;
    scan.args = {"KEYS", keys_->prefix() + "*"};
    EXPECT_TRUE(admin_->RunOnMasters(scan, &replies).ok());
    std::vector<std::string> left;
    for (const Reply& r : replies) {
      for (const Reply& k : r.elements) {
        if (k.str.rfind(keys_->NextId(), 0) != 0) left.push_back(k.str);
      }
    }
    return left;
  }

  // An admin client (KEYS is beyond the app user's ACL).
  void ConnectAdmin() {
    std::map<std::string, std::string> env = test::ReadRedisEnv();
    Target t;
    ASSERT_OK(ParseTarget(target_, &t));
    ClientOptions o;
    o.seeds = t.seeds;
    o.user = "admin";
    std::ifstream in(env["TALLY_REDIS_ADMIN_PASSWORD_FILE"]);
    ASSERT_TRUE(std::getline(in, o.password));
    ASSERT_OK(ClusterClient::Connect(o, &admin_));
  }

  std::string target_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<KeySpace> keys_;
  std::unique_ptr<ClusterClient> client_;
  std::unique_ptr<ClusterClient> admin_;
};

// The event ids and affinity keys of these tests, with shards of 16:
// "evt-1"'s home and "edge-3"'s shard differ (checked).
constexpr uint32_t kShards = 16;
const char* const kEvent = "evt-1";
const char* const kPin = "edge-3";

TEST_F(PinnedOnce, AForwardWithoutItsCountIsCountedOnceByAnyCopy) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{kShards}));
  const CounterInfo c = test::Got(db_->DescribeCounter("c"));
  const uint32_t pinned = core::ShardOfKey(kPin, kShards);
  ASSERT_NE(core::ShardOfKey(kEvent, kShards), pinned);
  // Three ways a copy can come back after the crash: without the key, with
  // it, with another key. Each run starts from the forward alone.
  const std::vector<std::string> copies = {"", kPin, "edge-9"};
  std::vector<int64_t> expected(kShards, 0);
  for (size_t first = 0; first < copies.size(); ++first) {
    SCOPED_TRACE("first copy's key: '" + copies[first] + "'");
    const std::string event = std::string(kEvent) + "." + std::to_string(first);
    const uint32_t home = core::ShardOfKey(event, kShards);
    const uint32_t to = home == pinned ? (pinned + 1) % kShards : pinned;
    LeaveForward(c, "", event, to);
    expected[to] += 4;
    // Nothing counted yet, and no marker (the forward is none).
    EXPECT_TRUE(db_->GetMarker("c", event).status().IsNotFound());
    for (size_t k = 0; k < copies.size(); ++k) {
      const std::string& key = copies[(first + k) % copies.size()];
      const IncrementResult r =
          test::Got(db_->IncrementOnce("c", event, 4, OnceOptions{0, key}));
      EXPECT_EQ(r.outcome, k == 0 ? Outcome::kApplied : Outcome::kDuplicate);
      EXPECT_EQ(r.shard, to) << "copy with key '" << key << "'";
    }
    const MarkerInfo m = test::Got(db_->GetMarker("c", event));
    EXPECT_EQ(m.shard, to);
    EXPECT_EQ(m.delta, 4);
    EXPECT_TRUE(m.pinned);
  }
  EXPECT_EQ(test::Got(db_->ReadExact("c")), 12);
  EXPECT_EQ(test::Got(db_->CountMarkers("c")), 3u);
  EXPECT_EQ(test::Got(db_->ShardCounts("c")), expected);
}

TEST_F(PinnedOnce, ACopyWithAnotherDeltaIsAConflictWhereverItIsPinned) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{kShards}));
  const IncrementResult r =
      test::Got(db_->IncrementOnce("c", kEvent, 5, OnceOptions{0, kPin}));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.shard, core::ShardOfKey(kPin, kShards));
  for (const char* key : {"", kPin, "edge-9"}) {
    EXPECT_EQ(test::Got(db_->IncrementOnce("c", kEvent, 6, OnceOptions{0, key}))
                  .outcome,
              Outcome::kConflict)
        << "key '" << key << "'";
  }
  EXPECT_EQ(test::Got(db_->ReadExact("c")), 5);
}

TEST_F(PinnedOnce, DeletingAKeyOrTheCounterLeavesNoForwardBehind) {
  ConnectAdmin();
  if (HasFatalFailure()) return;
  CounterSpec spec{kShards};
  spec.keyed = true;
  ASSERT_OK(db_->CreateCounter("likes", spec));
  // Pinned and unpinned events of two keys, and a forward left alone.
  for (int e = 0; e < 20; ++e) {
    for (const char* post : {"post-1", "post-2"}) {
      const std::string event = "u" + std::to_string(e);
      ASSERT_EQ(test::Got(db_->IncrementOnce({"likes", post}, event, 1,
                                       OnceOptions{0, e % 2 ? kPin : ""}))
                    .outcome,
                Outcome::kApplied);
    }
  }
  const CounterInfo c = test::Got(db_->DescribeCounter("likes"));
  const uint32_t pinned = core::ShardOfKey(kPin, kShards);
  std::string lone = "lone";
  while (core::ShardOfKey(lone, kShards) == pinned) lone += "x";
  LeaveForward(c, "post-1", lone, pinned);
  // post-1 goes whole: a redelivery of each of its events counts again.
  ASSERT_OK(db_->DeleteKey("likes", "post-1"));
  EXPECT_EQ(test::Got(db_->CountMarkers({"likes", "post-1"})), 0u);
  EXPECT_EQ(test::Got(db_->CountMarkers({"likes", "post-2"})), 20u);
  EXPECT_EQ(test::Got(db_->IncrementOnce({"likes", "post-1"}, lone, 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(test::Got(db_->IncrementOnce({"likes", "post-1"}, lone, 1)).shard,
            core::ShardOfKey(lone, kShards))
      << "the deleted key's forward is gone: the copy counts at home";
  EXPECT_EQ(test::Got(db_->IncrementOnce({"likes", "post-2"}, "u1", 1)).outcome,
            Outcome::kDuplicate);
  ASSERT_OK(db_->DeleteCounter("likes"));
  EXPECT_EQ(KeysLeft(), std::vector<std::string>())
      << "keys of the deleted counter remain";
}

TEST_F(PinnedOnce, AForwardExpiresWithItsMarkersWindow) {
  CounterSpec spec{kShards};
  spec.dedupe_window_ms = 60'000;
  ASSERT_OK(db_->CreateCounter("c", spec));
  const int64_t now = test::Got(db_->DescribeCounter("c")).created_at_ms;
  ASSERT_EQ(test::Got(db_->IncrementOnce("c", kEvent, 1, OnceOptions{now, kPin}))
                .outcome,
            Outcome::kApplied);
  const CounterInfo c = test::Got(db_->DescribeCounter("c"));
  const uint32_t home = core::ShardOfKey(kEvent, kShards);
  const std::string forward = KeySpace::Marker(
      keys_->Tag(c, home, ""), KeySpace::MarkerName("", kEvent));
  const std::string marker = KeySpace::Marker(
      keys_->Tag(c, core::ShardOfKey(kPin, kShards), ""),
      KeySpace::MarkerName("", kEvent));
  const Reply f = Call({"PTTL", forward}, forward);
  const Reply m = Call({"PTTL", marker}, marker);
  ASSERT_EQ(f.kind, Reply::Kind::kInteger);
  ASSERT_EQ(m.kind, Reply::Kind::kInteger);
  EXPECT_GT(f.integer, 0) << "the forward is kept forever";
  EXPECT_LE(f.integer, 60'000);
  EXPECT_LE(std::abs(f.integer - m.integer), 5'000)
      << "forward and marker expire at different times";
}

}  // namespace
}  // namespace tally::cluster
