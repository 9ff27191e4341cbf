// counterctl on keyed counters (CounterSpec::keyed): create --keyed, incr
// and get --key, several keys in one get, shards/events --key, keys
// (paged), top (roll-up and exact), delete --key, and apply lines with a
// "key". Every command runs the real binary against a real database; text
// and --json outputs are parsed.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

using Json = nlohmann::json;

class CounterctlKeyed : public CounterctlTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(CtlOk({"create", "likes", "--shards", "4", "--keyed"}),
              "created likes (4 shards, keyed)\n");
    CtlOk({"create", "orders", "--shards", "2"});
  }

  // Adds `by` to `key` of likes with a plain increment.
  void Like(const std::string& key, int64_t by) {
    CtlOk({"incr", "likes", "--key", key, "--by", std::to_string(by)});
  }

  // "KEY\tVALUE" lines into pairs; any other line goes to *others.
  static std::vector<std::pair<std::string, int64_t>> KeyLines(
      const std::string& out, std::vector<std::string>* others = nullptr) {
    std::vector<std::pair<std::string, int64_t>> pairs;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) {
        if (others != nullptr) others->push_back(line);
        continue;
      }
      pairs.emplace_back(line.substr(0, tab), std::stoll(line.substr(tab + 1)));
    }
    return pairs;
  }

  static std::vector<std::pair<std::string, int64_t>> KeyArray(
      const Json& keys) {
    std::vector<std::pair<std::string, int64_t>> pairs;
    for (const Json& kv : keys) {
      pairs.emplace_back(kv.at("key").get<std::string>(),
                         kv.at("value").get<int64_t>());
    }
    return pairs;
  }

  using Pairs = std::vector<std::pair<std::string, int64_t>>;
};

TEST_F(CounterctlKeyed, DescribeAndListShowKeyed) {
  const std::string described = CtlOk({"describe", "likes"});
  EXPECT_NE(described.find("\nkeyed: true\n"), std::string::npos) << described;
  EXPECT_NE(CtlOk({"describe", "orders"}).find("\nkeyed: false\n"),
            std::string::npos);
  EXPECT_EQ(CtlOk({"list"}), "likes shards=4 keyed\norders shards=2\n");

  EXPECT_EQ(CtlJson({"describe", "likes"}).at("keyed"), true);
  const Json list = CtlJson({"list"});
  ASSERT_EQ(list.at("counters").size(), 2u);
  EXPECT_EQ(list["counters"][0].at("name"), "likes");
  EXPECT_EQ(list["counters"][0].at("keyed"), true);
  EXPECT_EQ(list["counters"][1].at("keyed"), false);
}

TEST_F(CounterctlKeyed, IncrAndGetOneKey) {
  EXPECT_EQ(CtlOk({"incr", "likes", "--key", "post-1", "--by", "2"})
                .rfind("applied shard=", 0),
            0u);
  const std::string first =
      CtlOk({"incr", "likes", "--key", "post-1", "--event-id", "user-1"});
  ASSERT_EQ(first.rfind("applied shard=", 0), 0u) << first;
  const std::string again =
      CtlOk({"incr", "likes", "--key", "post-1", "--event-id", "user-1"});
  // The redelivery is a duplicate, on the shard the first copy went to.
  EXPECT_EQ(again, "duplicate" + first.substr(first.find(' ')));
  // The same event id in another key is another event.
  EXPECT_EQ(CtlOk({"incr", "likes", "--key", "post-2", "--event-id", "user-1"})
                .rfind("applied shard=", 0),
            0u);

  EXPECT_EQ(CtlOk({"get", "likes", "--key", "post-1"}), "3\n");
  EXPECT_EQ(CtlOk({"get", "likes", "--key", "post-2"}), "1\n");
  EXPECT_EQ(CtlOk({"get", "likes", "--key", "never"}), "0\n");
  const Json doc = CtlJson({"get", "likes", "--key", "post-1"});
  EXPECT_EQ(doc.at("counter"), "likes");
  EXPECT_EQ(doc.at("key"), "post-1");
  EXPECT_EQ(doc.at("value"), 3);
  // A named counter's document has no key.
  CtlOk({"incr", "orders", "--by", "4"});
  EXPECT_FALSE(CtlJson({"get", "orders"}).contains("key"));
}

TEST_F(CounterctlKeyed, GetSeveralKeysPrintsOneLineEachInOrder) {
  Like("p1", 3);
  Like("p2", 5);
  const std::string out = CtlOk({"get", "likes", "--key", "p2", "--key", "p1",
                                 "--key", "nope", "--key", "p2"});
  EXPECT_EQ(KeyLines(out),
            (Pairs{{"p2", 5}, {"p1", 3}, {"nope", 0}, {"p2", 5}}))
      << out;
  EXPECT_EQ(out, "p2\t5\np1\t3\nnope\t0\np2\t5\n");
  const Json doc =
      CtlJson({"get", "likes", "--key", "p1", "--key", "with space"});
  EXPECT_EQ(doc.at("counter"), "likes");
  EXPECT_EQ(KeyArray(doc.at("keys")), (Pairs{{"p1", 3}, {"with space", 0}}));
}

TEST_F(CounterctlKeyed, ShardsAndEventsOfOneKey) {
  for (const char* user : {"u1", "u2", "u3"}) {
    CtlOk({"incr", "likes", "--key", "p1", "--event-id", user});
  }
  CtlOk({"incr", "likes", "--key", "p2", "--event-id", "u1"});

  const std::string shards = CtlOk({"shards", "likes", "--key", "p1"});
  int64_t sum = 0;
  int lines = 0;
  std::istringstream in(shards);
  for (std::string index, count; in >> index >> count; ++lines) {
    sum += std::stoll(count);
  }
  EXPECT_EQ(lines, 4) << shards;
  EXPECT_EQ(sum, 3) << shards;
  const Json sdoc = CtlJson({"shards", "likes", "--key", "p1"});
  EXPECT_EQ(sdoc.at("key"), "p1");
  EXPECT_EQ(sdoc.at("counts").size(), 4u);

  const std::string events = CtlOk({"events", "likes", "--key", "p1"});
  std::vector<std::string> ids;
  std::istringstream ev(events);
  for (std::string line; std::getline(ev, line);) {
    ids.push_back(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "u2", "u3"})) << events;
  const Json edoc = CtlJson({"events", "likes", "--key", "p2"});
  EXPECT_EQ(edoc.at("key"), "p2");
  ASSERT_EQ(edoc.at("events").size(), 1u);
  EXPECT_EQ(edoc["events"][0].at("event_id"), "u1");
  EXPECT_EQ(edoc["events"][0].at("key"), "p2");

  EXPECT_EQ(CtlValue({"events", "likes", "--key", "p1", "--count"}), "3");
  // Without a key, --count counts every key's markers.
  EXPECT_EQ(CtlValue({"events", "likes", "--count"}), "4");
  const std::string show =
      CtlOk({"events", "likes", "--key", "p2", "--show", "u1"});
  EXPECT_EQ(show.rfind("counter: likes\nkey: p2\nevent_id: u1\n", 0), 0u)
      << show;
  ProcessResult missing =
      Ctl({"events", "likes", "--key", "p2", "--show", "u2"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.ErrLines(), 1u) << missing.err;
}

TEST_F(CounterctlKeyed, KeysPagesInKeyOrderAndSaysWhenCut) {
  const std::map<std::string, int64_t> want = {{"a1", 1}, {"a2", 2}, {"a3", 3},
                                               {"a4", 4}, {"a5", 5}, {"b1", 6}};
  for (const auto& [key, value] : want) Like(key, value);

  std::vector<std::string> others;
  Pairs page = KeyLines(CtlOk({"keys", "likes", "--limit", "2"}), &others);
  EXPECT_EQ(page, (Pairs{{"a1", 1}, {"a2", 2}}));
  EXPECT_EQ(others, (std::vector<std::string>{"more after: a2"}));

  // Walk every page with --start-after, as a script would.
  Pairs all;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    std::vector<std::string> args = {"keys", "likes", "--limit", "4"};
    if (!after.empty()) {
      args.push_back("--start-after");
      args.push_back(after);
    }
    others.clear();
    page = KeyLines(CtlOk(args), &others);
    all.insert(all.end(), page.begin(), page.end());
    if (others.empty()) break;
    ASSERT_EQ(others.size(), 1u);
    ASSERT_EQ(others[0], "more after: " + page.back().first);
    after = page.back().first;
  }
  EXPECT_EQ(all, Pairs(want.begin(), want.end()));

  // A full last page without more keys says nothing.
  others.clear();
  page = KeyLines(
      CtlOk({"keys", "likes", "--start-after", "a4", "--limit", "2"}), &others);
  EXPECT_EQ(page, (Pairs{{"a5", 5}, {"b1", 6}}));
  EXPECT_TRUE(others.empty());

  EXPECT_EQ(CtlOk({"keys", "likes", "--prefix", "b"}), "b1\t6\n");
  EXPECT_EQ(CtlOk({"keys", "likes", "--prefix", "c"}), "");

  Json doc = CtlJson({"keys", "likes", "--prefix", "a", "--limit", "3"});
  EXPECT_EQ(KeyArray(doc.at("keys")), (Pairs{{"a1", 1}, {"a2", 2}, {"a3", 3}}));
  EXPECT_EQ(doc.at("more"), true);
  EXPECT_EQ(doc.at("next_start_after"), "a3");
  EXPECT_EQ(doc.at("limit"), 3);
  EXPECT_EQ(doc.at("prefix"), "a");
  EXPECT_TRUE(doc.at("start_after").is_null());
  doc = CtlJson({"keys", "likes", "--start-after", "a3"});
  EXPECT_EQ(KeyArray(doc.at("keys")), (Pairs{{"a4", 4}, {"a5", 5}, {"b1", 6}}));
  EXPECT_EQ(doc.at("more"), false);
  EXPECT_TRUE(doc.at("next_start_after").is_null());
  EXPECT_EQ(doc.at("limit"), 100);
}

TEST_F(CounterctlKeyed, TopFromTheRollup) {
  Like("quiet", 1);
  Like("celebrity", 50);
  Like("middling", 7);
  Like("also-7", 7);

  // Nobody rolled it up yet, and counterctl reads read-only.
  ProcessResult none = Ctl({"top", "likes"});
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_EQ(none.ErrLines(), 1u) << none.err;
  EXPECT_NE(none.err.find("NotFound"), std::string::npos) << none.err;

  EXPECT_EQ(CtlOk({"rollup", "likes"}), "rolled up likes\n");
  std::vector<std::string> header;
  const std::string text = CtlOk({"top", "likes", "-n", "3"});
  // Largest first, ties in key byte order.
  EXPECT_EQ(KeyLines(text, &header),
            (Pairs{{"celebrity", 50}, {"also-7", 7}, {"middling", 7}}))
      << text;
  ASSERT_EQ(header.size(), 5u) << text;
  EXPECT_EQ(header[0].rfind("as_of: ", 0), 0u);
  EXPECT_EQ(header[1].rfind("lag_ms: ", 0), 0u);
  EXPECT_EQ(header[2], "exact: false");
  EXPECT_EQ(header[3], "key_count: 4");
  EXPECT_EQ(header[4], "total: 65");

  // An increment after the roll-up does not show until the next one.
  Like("quiet", 100);
  Json doc = CtlJson({"top", "likes", "-n", "2"});
  EXPECT_EQ(doc.at("exact"), false);
  EXPECT_EQ(doc.at("n"), 2);
  EXPECT_EQ(doc.at("total"), 65);
  EXPECT_EQ(doc.at("key_count"), 4);
  EXPECT_EQ(KeyArray(doc.at("keys")),
            (Pairs{{"celebrity", 50}, {"also-7", 7}}));
  EXPECT_GE(doc.at("lag_ms").get<int64_t>(), 0);
  EXPECT_TRUE(doc.at("as_of_ms").is_number_integer());
  EXPECT_TRUE(doc.at("as_of").is_string());
  EXPECT_TRUE(doc.at("sequence").is_number_integer());

  // The roll-up's total is get --cached of a keyed counter.
  CtlOk({"rollup", "likes"});
  EXPECT_EQ(CtlValue({"get", "likes", "--cached"}), "165");
  EXPECT_EQ(KeyLines(CtlOk({"top", "likes", "-n", "1"})),
            (Pairs{{"quiet", 101}}));
}

// An exact top list from counterctl's read-only view scans every key now.
TEST_F(CounterctlKeyed, TopExactScansNow) {
  Like("quiet", 101);
  Like("celebrity", 50);
  Like("middling", 7);
  Like("also-7", 7);
  CtlOk({"rollup", "likes"});
  Like("quiet", 3);
  Json doc = CtlJson({"top", "likes", "-n", "2", "--exact"});
  EXPECT_EQ(doc.at("exact"), true);
  EXPECT_EQ(doc.at("total"), 168);
  EXPECT_EQ(KeyArray(doc.at("keys")),
            (Pairs{{"quiet", 104}, {"celebrity", 50}}));
  EXPECT_EQ(doc.at("lag_ms"), 0);
  // The default is 10 keys: all 4 here.
  EXPECT_EQ(KeyLines(CtlOk({"top", "likes", "--exact"})).size(), 4u);
}

TEST_F(CounterctlKeyed, DeleteOneKey) {
  CtlOk({"incr", "likes", "--key", "p1", "--event-id", "u1"});
  Like("p2", 4);
  ProcessResult unconfirmed = Ctl({"delete", "likes", "--key", "p1"});
  EXPECT_EQ(unconfirmed.exit_code, 2);
  EXPECT_EQ(unconfirmed.ErrLines(), 1u) << unconfirmed.err;
  EXPECT_EQ(CtlOk({"get", "likes", "--key", "p1"}), "1\n");

  EXPECT_EQ(CtlOk({"delete", "likes", "--key", "p1", "--yes"}),
            "deleted key p1 of likes\n");
  EXPECT_EQ(CtlOk({"get", "likes", "--key", "p1"}), "0\n");
  EXPECT_EQ(CtlOk({"keys", "likes"}), "p2\t4\n");
  EXPECT_EQ(CtlValue({"events", "likes", "--count"}), "0");
  // Its marker went with it: the redelivery counts again.
  EXPECT_EQ(CtlOk({"incr", "likes", "--key", "p1", "--event-id", "u1"})
                .rfind("applied", 0),
            0u);
  EXPECT_EQ(CtlOk({"get", "likes", "--key", "p1"}), "1\n");
  // The counter itself stays.
  EXPECT_NE(CtlOk({"describe", "likes"}).find("keyed: true"),
            std::string::npos);
}

TEST_F(CounterctlKeyed, ApplyLinesWithKeys) {
  const std::string file =
      WriteFile("in.jsonl",
                // 1-3: u1 likes p1 twice (counted once) and p2 (another event).
                "{\"counter\":\"likes\",\"key\":\"p1\",\"event_id\":\"u1\"}\n"
                "{\"counter\":\"likes\",\"key\":\"p1\",\"event_id\":\"u1\"}\n"
                "{\"counter\":\"likes\",\"key\":\"p2\",\"event_id\":\"u1\"}\n"
                // 4: a plain increment of a key.
                "{\"counter\":\"likes\",\"key\":\"p2\",\"delta\":10}\n"
                // 5: a keyed counter without a key.
                "{\"counter\":\"likes\",\"event_id\":\"u2\"}\n"
                // 6: a named counter with a key.
                "{\"counter\":\"orders\",\"key\":\"p1\",\"delta\":2}\n"
                // 7: a named counter, as before.
                "{\"counter\":\"orders\",\"delta\":3}\n"
                // 8: an empty key.
                "{\"counter\":\"likes\",\"key\":\"\",\"event_id\":\"u3\"}\n"
                // 9: u2 likes p3.
                "{\"counter\":\"likes\",\"key\":\"p3\",\"event_id\":\"u2\"}\n");
  const ProcessResult r = Ctl({"apply", "--file", file});
  EXPECT_EQ(r.exit_code, 1) << Describe({"apply"}, r);
  EXPECT_EQ(r.out,
            "applied=5 duplicates=1 conflicts=0 outside_window=0 rejected=3 "
            "lines=9\n");
  EXPECT_EQ(r.err, "counterctl: " + file +
                       ":5: counter \"likes\" is keyed: the line needs a "
                       "\"key\"\n"
                       "counterctl: " +
                       file +
                       ":6: counter \"orders\" is not keyed: the line may not "
                       "have a \"key\"\n"
                       "counterctl: " +
                       file + ":8: \"key\" must be 1..128 bytes, got 0\n");
  EXPECT_EQ(
      CtlOk({"get", "likes", "--key", "p1", "--key", "p2", "--key", "p3"}),
      "p1\t1\np2\t11\np3\t1\n");
  EXPECT_EQ(CtlValue({"get", "orders"}), "3");

  // Again, in batches of 2 across keys: only the plain lines count again.
  const ProcessResult again = Ctl({"apply", "--file", file, "--batch", "2"});
  EXPECT_EQ(again.out,
            "applied=2 duplicates=4 conflicts=0 outside_window=0 rejected=3 "
            "lines=9\n");
  EXPECT_EQ(
      CtlOk({"get", "likes", "--key", "p1", "--key", "p2", "--key", "p3"}),
      "p1\t1\np2\t21\np3\t1\n");
  EXPECT_EQ(CtlValue({"events", "likes", "--count"}), "3");
  EXPECT_EQ(CtlValue({"get", "orders"}), "6");
  ProcessResult verify = Ctl({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << Describe({"verify"}, verify);
}

}  // namespace
}  // namespace tally::test
