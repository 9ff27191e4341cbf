// counterctl apply: a database failure while a refused batch goes one line
// at a time (issue 28, item 13, last bullet). The lines before the failed
// one are committed; the committed-through line must say so, so that a
// resume with --skip counts none of them twice and loses none.
//
// The failure is a real one: the database is opened with an outbox cap of
// 1 and its outbox already holds an entry, so an increment of an outbox
// counter is refused with Busy (a database condition, not a bad line). The
// batch is refused first by a once-line of a windowed counter without its
// event time (InvalidArgument, which apply's own checks do not catch), so
// its lines go one at a time. ApplyLines runs in this process (the cap is
// an open option counterctl does not set); the resume is the real
// `counterctl apply --skip`, whose open has the default cap.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "apply_input.h"
#include "apply_runner.h"
#include "counterctl_fixture.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/testutil.h"

namespace tally::test {
namespace {

using CounterctlApplySplit = CounterctlTest;

TEST_F(CounterctlApplySplit, AFailureAfterASplitCommitsThroughTheLineBefore) {
  const std::string in = WriteFile(
      "in.jsonl",
      "{\"counter\":\"clicks\",\"delta\":1}\n"                  // 1 applied
      "{\"counter\":\"clicks\",\"delta\":2}\n"                  // 2 applied
      "{\"counter\":\"windowed\",\"event_id\":\"e1\"}\n"        // 3 refused
      "{\"counter\":\"clicks\",\"delta\":\"x\"}\n"              // 4 rejected
      "\n"                                                      // 5 blank
      "{\"counter\":\"out\",\"delta\":1}\n"                     // 6 Busy
      "{\"counter\":\"clicks\",\"delta\":4}\n"                  // 7
      "not json\n");                                            // 8
  {
    Options options;
    options.outbox_max_entries = 1;
    std::unique_ptr<Db> db;
    ASSERT_OK(Db::Open(options, db_, &db));
    ASSERT_OK(db->CreateCounter("clicks", CounterSpec{}));
    CounterSpec windowed;
    windowed.dedupe_window_ms = 86'400'000;
    ASSERT_OK(db->CreateCounter("windowed", windowed));
    ASSERT_OK(db->CreateCounter("out", OutboxSpec(1)));
    ASSERT_OK(db->Increment("out", 1));  // the outbox is now full

    std::string error;
    uint64_t lines_in_file = 0;
    std::unique_ptr<counterctl::FileSource> source =
        counterctl::FileSource::Open(in, 0, &error, &lines_in_file);
    ASSERT_NE(source, nullptr) << error;
    counterctl::ApplyConfig config;
    config.batch_ops = 100;  // one batch: every line
    std::vector<size_t> committed;
    std::vector<size_t> rejected;
    config.on_committed = [&committed](size_t line) {
      committed.push_back(line);
    };
    config.on_rejected = [&rejected](const counterctl::Rejection& r) {
      rejected.push_back(r.line);
    };
    const counterctl::ApplyReport report =
        counterctl::ApplyLines(db.get(), source.get(), config);
    EXPECT_TRUE(report.fatal.IsBusy()) << report.fatal.ToString();
    EXPECT_EQ(report.fatal_lines, "line 6");
    EXPECT_FALSE(report.stopped);
    // Lines 1..5 are done (1, 2 counted, 3, 4 rejected, 5 blank), line 6
    // failed, 7 and 8 were not reached: the report covers 1..5 exactly.
    EXPECT_EQ(report.committed_through, 5u);
    EXPECT_EQ(committed, std::vector<size_t>{5});
    EXPECT_EQ(rejected, (std::vector<size_t>{3, 4}));
    EXPECT_TRUE(report.committed_after.empty());
    EXPECT_EQ(report.applied, 2u);
    EXPECT_EQ(report.rejected, 2u);
    EXPECT_EQ(report.lines, 4u);
    Result<int64_t> clicks = db->ReadExact("clicks");
    ASSERT_OK(clicks);
    EXPECT_EQ(*clicks, 3);
  }

  // The resume the report asks for (the default open: the outbox has room).
  const ProcessResult rest =
      Ctl({"apply", "--file", in, "--skip", "5", "--json"});
  EXPECT_EQ(rest.exit_code, 1) << rest.err;
  EXPECT_EQ(rest.err, "counterctl: " + in + ":8: not valid JSON\n");
  const nlohmann::json doc = nlohmann::json::parse(rest.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << rest.out;
  EXPECT_EQ(doc["applied"], 2);
  EXPECT_EQ(doc["rejected"], 1);
  EXPECT_EQ(doc["lines"], 3);
  EXPECT_EQ(doc["committed_through"], 8);
  // Every plain increment once: 1 + 2 + 4, and out's two.
  EXPECT_EQ(CtlValue({"get", "clicks"}), "7");
  EXPECT_EQ(CtlValue({"get", "out"}), "2");
}

}  // namespace
}  // namespace tally::test
