// `counterctl apply`: a shuffled file of redelivered events, applied from many
// threads, counts each event exactly once; bad lines are named and skipped.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "apply_line.h"
#include "counterctl_fixture.h"
#include "tally/limits.h"

namespace tally::test {
namespace {

using CounterctlApply = CounterctlTest;

std::string Summary(uint64_t applied, uint64_t duplicates, uint64_t conflicts,
                    uint64_t rejected, uint64_t lines) {
  return "applied=" + std::to_string(applied) +
         " duplicates=" + std::to_string(duplicates) +
         " conflicts=" + std::to_string(conflicts) + " outside_window=0" +
         " rejected=" + std::to_string(rejected) +
         " lines=" + std::to_string(lines);
}

// The generated input and what applying it must produce.
struct Workload {
  std::vector<std::string> lines;           // the file, line i is lines[i - 1]
  std::vector<size_t> malformed;            // 1-based line numbers
  std::map<std::string, int64_t> once_sum;  // counter -> sum of its events
  std::map<std::string, uint64_t> once_events;  // counter -> distinct events
  int64_t plain_sum = 0;                        // total of the "clicks" lines
  uint64_t plain_lines = 0;
  uint64_t once_lines = 0;
  uint64_t distinct_events = 0;
};

const char* const kOnceCounters[] = {"orders", "payments", "views"};

// 3,000 distinct once-events over three counters, each written three times,
// plus plain increments of "clicks", shuffled with a fixed seed; then bad
// lines and blank lines at fixed places.
Workload MakeWorkload() {
  Workload w;
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> delta_of(1, 9);
  constexpr int kEvents = 3000;
  constexpr int kCopies = 3;
  constexpr int kPlain = 25;
  std::vector<std::string> body;
  for (int i = 0; i < kEvents; ++i) {
    const std::string counter = kOnceCounters[i % 3];
    const int delta = delta_of(rng);
    const std::string line =
        "{\"counter\":\"" + counter + "\",\"event_id\":\"ORDER_ACCEPTED:ord-" +
        std::to_string(i) + "\",\"delta\":" + std::to_string(delta) + "}";
    for (int c = 0; c < kCopies; ++c) body.push_back(line);
    w.once_sum[counter] += delta;
    w.once_events[counter] += 1;
  }
  w.distinct_events = kEvents;
  w.once_lines = kEvents * kCopies;
  for (int i = 1; i <= kPlain; ++i) {
    // delta omitted on some lines: it defaults to 1.
    body.push_back(i % 5 == 0 ? std::string("{\"counter\":\"clicks\"}")
                              : "{\"counter\":\"clicks\",\"delta\":" +
                                    std::to_string(i) + "}");
    w.plain_sum += i % 5 == 0 ? 1 : i;
  }
  w.plain_lines = kPlain;
  std::shuffle(body.begin(), body.end(), rng);

  const std::vector<std::string> bad = {
      "{\"counter\":\"orders\",\"event_id\":\"broken\"",  // bad JSON
      "{\"event_id\":\"ORDER_ACCEPTED:x\",\"delta\":1}",  // no counter
      "{\"counter\":\"orders\",\"event_id\":\"s\",\"delta\":\"1\"}",  // string
      "{\"counter\":\"refunds\",\"event_id\":\"R:1\",\"delta\":1}",   // unknown
      "{\"counter\":\"orders\",\"event_id\":\"" +
          std::string(kMaxEventIdBytes + 1, 'x') + "\",\"delta\":1}",  // long
      "{\"counter\":\"orders\",\"event_id\":\"f\",\"delta\":1.5}",     // float
      "{\"counter\":\"orders\",\"event_id\":\"u\",\"note\":1}",        // field
  };
  // Spread the bad lines and two blank lines over the file; work from the
  // back so earlier positions stay valid.
  const size_t positions[] = {0, 777, 2500, 4999, 6001, 8000, 9000};
  for (int k = 6; k >= 0; --k) {
    body.insert(body.begin() + positions[k], bad[k]);
  }
  body.insert(body.begin() + 3000, "");
  body.insert(body.begin() + 7000, "   ");
  for (size_t i = 0; i < body.size(); ++i) {
    const std::string& line = body[i];
    if (std::find(bad.begin(), bad.end(), line) != bad.end()) {
      w.malformed.push_back(i + 1);
    }
  }
  w.lines = std::move(body);
  return w;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// THE DONE-MEANS TEST. Proves a shuffled file where every event appears three
// times, applied by 8 threads in small batches, counts each event once: the
// printed figures, each counter's exact value and marker count match what
// the generator computed; every malformed line is named by number; and a
// second run of the same file adds nothing but its plain increments.
TEST_F(CounterctlApply, ShuffledRedeliveriesCountOnce) {
  const Workload w = MakeWorkload();
  ASSERT_EQ(w.malformed.size(), 7u);
  const std::string file = WriteFile("events.jsonl", Join(w.lines));
  for (const char* c : kOnceCounters) {
    CtlOk({"create", c, "--shards", std::string(c) == "views" ? "1" : "10"});
  }
  CtlOk({"create", "clicks", "--shards", "3"});

  const uint64_t total_lines =
      w.once_lines + w.plain_lines + w.malformed.size();
  ProcessResult first =
      Ctl({"apply", "--file", file, "--threads", "8", "--batch", "100"});
  EXPECT_EQ(first.exit_code, 1) << Describe({"apply"}, first);
  EXPECT_EQ(first.LastOutLine(), Summary(w.distinct_events + w.plain_lines,
                                         w.once_lines - w.distinct_events, 0,
                                         w.malformed.size(), total_lines));
  EXPECT_EQ(first.ErrLines(), w.malformed.size()) << first.err;
  for (size_t line : w.malformed) {
    EXPECT_NE(first.err.find(file + ":" + std::to_string(line) + ": "),
              std::string::npos)
        << "line " << line << " not reported:\n"
        << first.err;
  }

  auto check_values = [&](int64_t plain_runs) {
    for (const char* c : kOnceCounters) {
      EXPECT_EQ(CtlValue({"get", c}), std::to_string(w.once_sum.at(c))) << c;
      EXPECT_EQ(CtlValue({"events", c, "--count"}),
                std::to_string(w.once_events.at(c)))
          << c;
    }
    EXPECT_EQ(CtlValue({"get", "clicks"}),
              std::to_string(plain_runs * w.plain_sum));
    EXPECT_EQ(CtlValue({"events", "clicks", "--count"}), "0");
  };
  check_values(1);

  // The same file again, default batch size: every once-event is now a
  // duplicate; only the plain increments count a second time.
  ProcessResult second = Ctl({"apply", "--file", file, "--threads", "8"});
  EXPECT_EQ(second.exit_code, 1) << Describe({"apply"}, second);
  EXPECT_EQ(second.LastOutLine(), Summary(w.plain_lines, w.once_lines, 0,
                                          w.malformed.size(), total_lines));
  EXPECT_EQ(second.ErrLines(), w.malformed.size()) << second.err;
  check_values(2);
}

// Proves copies of one event inside one batch count once (first copy wins,
// same delta is a duplicate, another delta a conflict), exactly as when each
// line is its own batch.
TEST_F(CounterctlApply, CopiesInsideOneBatch) {
  for (const char* batch : {"1000", "1"}) {
    const std::string counter = std::string("c") + batch;
    CtlOk({"create", counter, "--shards", "4"});
    const std::string once =
        "{\"counter\":\"" + counter + "\",\"event_id\":\"E:1\",\"delta\":";
    const std::string file =
        WriteFile(counter + ".jsonl", once + "2}\n" + once + "2}\n" + once +
                                          "3}\n" + once + "2}\n");
    ProcessResult r = Ctl({"apply", "--file", file, "--batch", batch});
    EXPECT_EQ(r.exit_code, 0) << Describe({"apply", batch}, r);
    EXPECT_EQ(r.out, Summary(1, 2, 1, 0, 4) + "\n") << "--batch " << batch;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(CtlValue({"get", counter}), "2");
    EXPECT_EQ(CtlValue({"events", counter, "--count"}), "1");
  }
}

// Proves a batch the engine refuses whole (its deltas sum beyond int64 on one
// shard) is retried op by op, so the outcome is the same as with --batch 1:
// how lines are grouped never changes what a file does.
TEST_F(CounterctlApply, RefusedBatchMatchesOneByOne) {
  std::vector<std::string> summaries;
  std::vector<int> get_exit;
  for (const char* batch : {"1000", "1"}) {
    const std::string counter = std::string("big") + batch;
    CtlOk({"create", counter, "--shards", "1"});
    const std::string prefix = "{\"counter\":\"" + counter + "\",";
    const std::string file = WriteFile(
        counter + ".jsonl",
        prefix + "\"event_id\":\"a\",\"delta\":" + std::to_string(kMaxDelta) +
            "}\n" + prefix + "\"event_id\":\"b\",\"delta\":" +
            std::to_string(kMaxDelta) + "}\n" + prefix +
            "\"event_id\":\"a\",\"delta\":" + std::to_string(kMaxDelta) +
            "}\n");
    ProcessResult r = Ctl({"apply", "--file", file, "--batch", batch});
    summaries.push_back(r.LastOutLine());
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(CtlValue({"events", counter, "--count"}), "2");
    get_exit.push_back(Ctl({"get", counter}).exit_code);
  }
  EXPECT_EQ(summaries[0], summaries[1]);
  EXPECT_EQ(summaries[1], Summary(2, 1, 0, 0, 3));
  EXPECT_EQ(get_exit[0], get_exit[1]);
}

// Proves an unreadable input file is an operating error named in one line,
// and an empty file applies nothing and succeeds.
TEST_F(CounterctlApply, MissingAndEmptyFiles) {
  CtlOk({"create", "c", "--shards", "1"});
  const std::string missing = tmp_.Sub("no-such-file.jsonl");
  ProcessResult r = Ctl({"apply", "--file", missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.ErrLines(), 1u) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

  const std::string empty = WriteFile("empty.jsonl", "\n  \n");
  r = Ctl({"apply", "--file", empty, "--threads", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Summary(0, 0, 0, 0, 0) + "\n");
  EXPECT_EQ(r.err, "");
}

// Item 10: a JSON object with a repeated field is malformed, in apply and in
// import, at any depth; last-one-wins would count 1 for the first line.
TEST_F(CounterctlApply, Item10_RepeatedFieldIsMalformed) {
  for (const char* line :
       {R"({"counter":"orders","delta":1000000,"delta":1})",
        R"({"counter":"orders","counter":"views"})",
        R"({"counter":"orders","event_id":"a","event_id":"b"})",
        R"({"counter":{"a":1,"a":2}})",
        R"({"counter":"orders","delta":[{"x":1,"x":1}]})"}) {
    SCOPED_TRACE(line);
    counterctl::ApplyEvent event;
    std::string reason;
    EXPECT_FALSE(counterctl::ParseApplyLine(line, &event, &reason));
    EXPECT_NE(reason.find("appears twice"), std::string::npos) << reason;
  }
  // The same key in two different objects is no repeat.
  counterctl::ApplyEvent event;
  std::string reason;
  EXPECT_FALSE(counterctl::ParseApplyLine(
      R"({"counter":"orders","time_ms":{"x":1},"delta":{"x":2}})", &event,
      &reason));
  EXPECT_EQ(reason.find("appears twice"), std::string::npos) << reason;

  CtlOk({"create", "orders", "--shards", "2"});
  const std::string in = WriteFile("in.jsonl",
                                   "{\"counter\":\"orders\",\"delta\":5}\n"
                                   "{\"counter\":\"orders\",\"delta\":1000000,"
                                   "\"delta\":1}\n");
  ProcessResult r = Ctl({"apply", "--file", in});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "counterctl: " + in + ":2: field \"delta\" appears twice\n");
  EXPECT_EQ(CtlValue({"get", "orders"}), "5");

  const std::string dump =
      WriteFile("dump.jsonl",
                "{\"tally_export\":1}\n"
                "{\"type\":\"counter\",\"name\":\"a\",\"shards\":1,\"policy\":"
                "\"random\",\"created_at_ms\":1,\"flags\":0}\n"
                "{\"type\":\"shard\",\"counter\":\"a\",\"shard\":0,\"value\":7,"
                "\"value\":1}\n");
  const std::string copy = tmp_.Sub("copy");
  ProcessResult imported = CtlOn(copy, {"import", dump});
  EXPECT_EQ(imported.exit_code, 1);
  EXPECT_EQ(imported.err,
            "counterctl: line 3: field \"value\" appears twice\n");
}

}  // namespace
}  // namespace tally::test
