// counterctl events: listing markers (--limit, --since, paging past one
// Db::ListMarkers call), one marker (--show), and which flag combinations are
// usage errors. Databases are written through the API with a ManualClock,
// so every marker's created_at is known.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "engine/coding.h"
#include "engine/rules.h"
#include "schema/records.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/raw_db.h"

namespace tally::test {
namespace {

// 2026-11-30T04:00:00.000Z
constexpr int64_t kT0 = 1796011200000;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// kT0 + `minutes` minutes + `millis` ms as ISO-8601, for minutes < 60.
std::string IsoAtT0(int minutes, int millis = 0) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2026-11-30T04:%02d:%02d.%03dZ", minutes,
                millis / 1000, millis % 1000);
  return buf;
}

struct Marker {
  std::string id;
  uint32_t shard = 0;
  int64_t delta = 0;
  int minute = 0;  // created at kT0 + minute minutes
};

std::string TextLine(const Marker& m) {
  return m.id + " shard=" + std::to_string(m.shard) +
         " delta=" + std::to_string(m.delta) +
         " created_at=" + IsoAtT0(m.minute);
}

class CounterctlEvents : public CounterctlTest {
 protected:
  // Ten once-increments on "orders" (8 shards), one a minute from kT0, in
  // an order that is not their id order; `markers_` ends in id order.
  void WriteTenMarkers() {
    ManualClock clock(kT0);
    Options options;
    options.clock = &clock;
    std::unique_ptr<Db> db = OpenOrDie(db_, options);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {8}));
    const int creation_order[] = {3, 7, 0, 9, 5, 1, 8, 2, 6, 4};
    for (int minute = 0; minute < 10; ++minute) {
      const int i = creation_order[minute];
      Marker m;
      m.id = "ev-0" + std::to_string(i);
      m.delta = i + 1;
      m.minute = minute;
      Result<IncrementResult> r = db->IncrementOnce("orders", m.id, m.delta);
      ASSERT_OK(r);
      m.shard = r->shard;
      markers_.push_back(m);
      clock.Advance(60000);
    }
    std::sort(markers_.begin(), markers_.end(),
              [](const Marker& a, const Marker& b) { return a.id < b.id; });
  }

  // The expected listing: markers created at or after `since_minute`, at
  // most `limit`, one text line each, and a last line saying so when the
  // limit left some out.
  std::string Expected(int since_minute, size_t limit) const {
    std::string out;
    size_t n = 0;
    bool more = false;
    for (const Marker& m : markers_) {
      if (m.minute < since_minute) continue;
      if (n == limit) {
        more = true;
        continue;
      }
      out += TextLine(m) + "\n";
      ++n;
    }
    if (more) {
      out += "(more: the list stopped at --limit " + std::to_string(limit) +
             ")\n";
    }
    return out;
  }

  std::vector<Marker> markers_;
};

// Proves the default listing prints every marker (fewer than 100) in
// event-id order with its shard, delta and created_at.
TEST_F(CounterctlEvents, ListsAllInIdOrder) {
  WriteTenMarkers();
  const std::string out = CtlOk({"events", "orders"});
  EXPECT_EQ(out, Expected(0, 100));
  EXPECT_EQ(Lines(out).size(), 10u);
}

// Proves --limit cuts the listing after N markers in id order, and that
// --since keeps exactly the markers created at or after the time, given as
// ISO-8601 (with and without milliseconds) or as epoch milliseconds.
TEST_F(CounterctlEvents, LimitAndSince) {
  WriteTenMarkers();
  EXPECT_EQ(CtlOk({"events", "orders", "--limit", "3"}), Expected(0, 3));
  EXPECT_EQ(CtlOk({"events", "orders", "--limit", "1"}), Expected(0, 1));
  EXPECT_EQ(CtlOk({"events", "orders", "--limit", "10"}), Expected(0, 10));
  // A list the limit cut says so; one that ends exactly at it does not.
  EXPECT_NE(Expected(0, 3).find("(more: the list stopped at --limit 3)\n"),
            std::string::npos);
  EXPECT_EQ(Expected(0, 10).find("(more:"), std::string::npos);

  const std::string since5 = Expected(5, 100);
  EXPECT_EQ(Lines(since5).size(), 5u);
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:05:00Z"}),
            since5);
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:05:00.000Z"}),
            since5);
  EXPECT_EQ(CtlOk({"events", "orders", "--since",
                   std::to_string(kT0 + 5 * 60000)}),
            since5);
  // One millisecond later excludes the marker created at exactly 04:05.
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:05:00.001Z"}),
            Expected(6, 100));
  EXPECT_EQ(CtlOk({"events", "orders", "--since",
                   std::to_string(kT0 + 5 * 60000 + 1)}),
            Expected(6, 100));
  // A fraction of one or two digits is tenths or hundredths.
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:04:59.9Z"}),
            since5);
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:04:59.99Z"}),
            since5);
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:10:00Z"}), "");
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "1970-01-01T00:00:00Z"}),
            Expected(0, 100));
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2026-11-30T04:05:00Z",
                   "--limit", "2"}),
            Expected(5, 2));
}

// Proves --show prints the marker's record as key: value lines, and that an
// event never counted (or an unknown counter) exits 1 with one line naming
// it and nothing on stdout.
TEST_F(CounterctlEvents, ShowFoundAndNotFound) {
  WriteTenMarkers();
  for (const Marker& m : markers_) {
    EXPECT_EQ(CtlOk({"events", "orders", "--show", m.id}),
              "counter: orders\nevent_id: " + m.id +
                  "\nshard: " + std::to_string(m.shard) +
                  "\ndelta: " + std::to_string(m.delta) +
                  "\ncreated_at: " + IsoAtT0(m.minute) + "\n");
  }
  ProcessResult r = Ctl({"events", "orders", "--show", "ev-missing"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find("NotFound"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ev-missing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("never counted"), std::string::npos) << r.err;

  r = Ctl({"events", "no-such-counter", "--show", "ev-00"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find("no-such-counter"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("never counted"), std::string::npos) << r.err;

  r = Ctl({"events", "no-such-counter"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find("no-such-counter"), std::string::npos) << r.err;
}

// Proves flag combinations without a meaning, and malformed --limit and
// --since values, are usage errors (exit 2, one line naming the problem).
TEST_F(CounterctlEvents, NonsenseCombinationsAreUsageErrors) {
  WriteTenMarkers();
  struct Case {
    std::vector<std::string> args;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {{"--count", "--limit", "5"}, "--count"},
      {{"--count", "--since", "2026-11-30T04:00:00Z"}, "--count"},
      {{"--count", "--show", "ev-00"}, "--count"},
      {{"--show", "ev-00", "--limit", "5"}, "--show"},
      {{"--show", "ev-00", "--since", "0"}, "--show"},
      {{"--limit", "0"}, "--limit 0"},
      {{"--limit", "1000001"}, "1000001"},
      {{"--limit", "-1"}, "--limit"},
      {{"--limit", "12abc"}, "12abc"},
      {{"--limit", ""}, "--limit"},
      {{"--since", "yesterday"}, "yesterday"},
      {{"--since", ""}, "--since"},
      {{"--since", "2026-02-29T00:00:00Z"}, "2026-02-29"},  // not a leap year
      {{"--since", "2026-11-30T24:00:00Z"}, "T24"},
      {{"--since", "2026-11-30T04:00:00"}, "04:00:00"},  // no Z
      {{"--since", "2026-11-30T04:00:00+01:00"}, "+01:00"},
      {{"--since", "2026-11-30 04:00:00Z"}, "--since"},
      {{"--since", "2026-11-30T04:00:00.1234Z"}, "1234"},
      {{"--since", "2026-11-30T04:00:00.Z"}, "--since"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"events", "orders"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
    EXPECT_EQ(r.ErrLines(), 1u) << Describe(args, r);
    EXPECT_NE(r.err.find(c.mention), std::string::npos)
        << "should mention '" << c.mention << "'\n" << Describe(args, r);
  }
  // 2028 is a leap year: its Feb 29 is a valid time (no marker after it).
  EXPECT_EQ(CtlOk({"events", "orders", "--since", "2028-02-29T00:00:00Z"}), "");
}

// Proves a listing longer than one Db::ListMarkers call (kMaxListMarkers)
// pages on: every marker once, in id order, exactly --limit of them.
TEST_F(CounterctlEvents, PagesPastOneCall) {
  const size_t total = kMaxListMarkers + 7;
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("big", {16}));
    Batch batch;
    std::vector<IncrementResult> results;
    char id[32];
    for (size_t i = 0; i < total; ++i) {
      std::snprintf(id, sizeof id, "e-%07zu", i);
      batch.AddOnce("big", id, 1);
      if (batch.size() == kMaxBatchOps || i + 1 == total) {
        ASSERT_OK(db->Apply(batch, &results));
        batch.Clear();
      }
    }
  }
  const size_t limit = kMaxListMarkers + 3;
  ProcessResult r = Ctl({"events", "big", "--limit", std::to_string(limit)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), limit + 1);
  EXPECT_EQ(lines.back(),
            "(more: the list stopped at --limit " + std::to_string(limit) + ")");
  char id[32];
  for (size_t i = 0; i < limit; ++i) {
    std::snprintf(id, sizeof id, "e-%07zu ", i);
    ASSERT_EQ(lines[i].rfind(id, 0), 0u) << "line " << i << ": " << lines[i];
  }
  // With a limit above the total, all of them and no more.
  nlohmann::json doc =
      CtlJson({"events", "big", "--limit", std::to_string(total + 100)});
  ASSERT_EQ(doc["events"].size(), total);
  std::snprintf(id, sizeof id, "e-%07zu", total - 1);
  EXPECT_EQ(doc["events"][total - 1]["event_id"], id);
  EXPECT_EQ(doc["more"], false);
  doc = CtlJson({"events", "big", "--limit", std::to_string(total - 1)});
  ASSERT_EQ(doc["events"].size(), total - 1);
  EXPECT_EQ(doc["more"], true);
}

// Proves a marker whose id holds a control character (impossible through
// the API; written here through raw RocksDB) is listed on one line with the
// character escaped, and unescaped in --json.
TEST_F(CounterctlEvents, ControlCharactersInIdsAreEscaped) {
  uint64_t counter_id = 0;
  {
    ManualClock clock(kT0);
    Options options;
    options.clock = &clock;
    std::unique_ptr<Db> db = OpenOrDie(db_, options);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {4}));
    ASSERT_OK(db->IncrementOnce("orders", "a-plain", 1));
    counter_id = OkValue(db->DescribeCounter("orders")).id;
  }
  const std::string bad_id = "b-line\nbreak";
  const uint32_t shard =
      static_cast<uint32_t>(engine::StableHash(bad_id) % 4);
  {
    RawDb raw(db_);
    ASSERT_NE(raw.db(), nullptr);
    std::string key;
    engine::EncodeMarkerKey(counter_id, bad_id, &key);
    std::string value;
    schema::EncodeMarker(bad_id, counter_id, shard, 2, kT0 + 1000, &value);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kEvents),
                          key, value)
                    .ok());
  }
  ProcessResult r = Ctl({"events", "orders"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[1], "b-line\\x0abreak shard=" + std::to_string(shard) +
                          " delta=2 created_at=" + IsoAtT0(0, 1000));
  nlohmann::json doc = CtlJson({"events", "orders"});
  ASSERT_EQ(doc["events"].size(), 2u);
  EXPECT_EQ(doc["events"][1]["event_id"], bad_id);
}

}  // namespace
}  // namespace tally::test
