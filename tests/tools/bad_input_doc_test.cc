// The counterctl half of docs/bad-input.md, executed: every CLI row of the
// document becomes one test that sets up the row's starting state, runs the
// row's command line against the real counterctl binary and checks the exit
// status, the one line on stderr and stdout exactly as the document gives
// them, and that nothing was written (the databases' counters, values and
// markers and every other file under the row's directory are unchanged).
// The rows are read from the document itself, so it cannot drift from the
// code: change a message and the row's test fails until the table says so.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "subprocess.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/doc_table.h"
#include "testutil/testutil.h"

namespace tally::test {
namespace {

namespace fs = std::filesystem;

// The columns of a CLI row, in order.
enum Column {
  kId,
  kSetup,
  kInputFile,
  kCommand,
  kExit,
  kStderr,
  kStdout,
  kWrites,
  kNotes,
  kColumns
};

struct CliRow {
  std::string id;
  std::string where;  // "docs/bad-input.md:LINE"
  std::vector<std::string> cells;
};

void PrintTo(const CliRow& row, std::ostream* os) { *os << row.id; }

std::vector<CliRow> CliRowsFromDoc() {
  std::vector<CliRow> rows;
  for (const DocRow& doc : ReadDocRows(TALLY_BAD_INPUT_DOC, "CLI-")) {
    rows.push_back(CliRow{
        doc.cells.empty() ? "" : doc.cells[0],
        std::string(TALLY_BAD_INPUT_DOC) + ":" + std::to_string(doc.line),
        doc.cells});
  }
  return rows;
}

// "—" in a cell stands for "nothing".
std::string CellText(const std::string& cell) {
  return cell == "—" ? "" : cell;
}

// Splits a command cell into arguments the way a POSIX shell would for the
// subset the document uses: words separated by spaces, '...' taken
// literally, and bash's $'...' with \xNN, \t, \n, \\ and \' escapes (for
// bytes a terminal cannot show). Returns nullopt on an unterminated quote
// or a malformed \x escape.
std::optional<std::vector<std::string>> SplitCommand(const std::string& text) {
  std::vector<std::string> args;
  std::string arg;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') {
      if (in_word) args.push_back(arg);
      arg.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      arg += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '\'') {
      for (i += 2; i < text.size() && text[i] != '\''; ++i) {
        if (text[i] != '\\' || i + 1 >= text.size()) {
          arg += text[i];
          continue;
        }
        const char e = text[++i];
        if (e == 'x') {
          if (i + 2 >= text.size() ||
              !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
              !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            return std::nullopt;
          }
          arg += static_cast<char>(
              std::strtol(text.substr(i + 1, 2).c_str(), nullptr, 16));
          i += 2;
        } else if (e == 't') {
          arg += '\t';
        } else if (e == 'n') {
          arg += '\n';
        } else {
          arg += e;  // \\ and \'
        }
      }
      if (i >= text.size()) return std::nullopt;
    } else {
      arg += c;
    }
  }
  if (in_word) args.push_back(arg);
  return args;
}

// What a counter (key) that takes reservations holds in them (Db::ReadHeld:
// open holds, their units, the earliest end), as text; nothing for others.
std::string HeldContent(Db* db, const CounterInfo& c, CounterRef ref) {
  if (!c.bounds.has_min || c.bucket != BucketWidth::kNone) return "";
  Result<HeldValue> held = db->ReadHeld(ref);
  if (!held.ok()) return " " + held.status().ToString();
  return " open=" + std::to_string(held->open) +
         " held=" + std::to_string(held->held) +
         " next_expiry=" + std::to_string(held->next_expiry_ms);
}

// What a tally database holds, as text: every counter's catalog entry,
// shard values, markers and held reservations. Opened read-only, so it also
// works while the row's setup holds the database. A keyed counter's, key by
// key.
std::string DatabaseContent(const std::string& path) {
  Options options;
  options.read_only = true;
  std::unique_ptr<Db> db;
  Status s = Db::Open(options, path, &db);
  if (!s.ok()) return "cannot open: " + s.ToString() + "\n";
  std::ostringstream out;
  Result<std::vector<CounterInfo>> list = db->ListCounters();
  if (!list.ok()) return list.status().ToString() + "\n";
  for (const CounterInfo& c : *list) {
    out << "counter " << c.name << " id=" << c.id << " shards=" << c.shards
        << " policy=" << ShardPolicyName(c.policy) << " flags=" << c.flags
        << " created=" << c.created_at_ms << "\n ";
    if (c.keyed) {
      // A keyed counter: every key's shards and markers.
      ListKeysOptions keys;
      keys.limit = kMaxListKeys;
      Result<std::vector<KeyValue>> listed = db->ListKeys(c.name, keys);
      if (!listed.ok()) {
        out << listed.status().ToString() << "\n";
        continue;
      }
      for (const KeyValue& kv : *listed) {
        out << " key " << kv.key << ":";
        Result<std::vector<int64_t>> counts =
            db->ShardCounts(CounterRef(c.name, kv.key));
        if (counts.ok()) {
          for (int64_t v : *counts) out << " " << v;
        } else {
          out << counts.status().ToString();
        }
        out << HeldContent(db.get(), c, CounterRef(c.name, kv.key));
        ListMarkersOptions all;
        all.limit = kMaxListMarkers;
        Result<std::vector<MarkerInfo>> markers =
            db->ListMarkers(CounterRef(c.name, kv.key), all);
        if (!markers.ok()) {
          out << " " << markers.status().ToString();
        } else {
          for (const MarkerInfo& m : *markers) {
            out << " marker " << m.event_id << " shard=" << m.shard
                << " delta=" << m.delta << " at=" << m.created_at_ms;
          }
        }
        out << "\n";
      }
      continue;
    }
    Result<std::vector<int64_t>> counts = db->ShardCounts(c.name);
    if (counts.ok()) {
      for (int64_t v : *counts) out << " " << v;
    } else {
      out << counts.status().ToString();
    }
    out << HeldContent(db.get(), c, c.name) << "\n";
    ListMarkersOptions all;
    all.limit = kMaxListMarkers;
    Result<std::vector<MarkerInfo>> markers = db->ListMarkers(c.name, all);
    if (!markers.ok()) {
      out << " " << markers.status().ToString() << "\n";
      continue;
    }
    for (const MarkerInfo& m : *markers) {
      out << " marker " << m.event_id << " shard=" << m.shard
          << " delta=" << m.delta << " at=" << m.created_at_ms << "\n";
    }
  }
  return out.str();
}

// Every file and directory under `root`; a directory that holds a RocksDB
// database (a CURRENT file) is described by its tally content instead of
// its files, which RocksDB rewrites on every open.
std::string TreeSnapshot(const std::string& root) {
  std::ostringstream out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    out << fs::relative(it->path(), root).string();
    if (it->is_directory() && fs::exists(it->path() / "CURRENT")) {
      it.disable_recursion_pending();
      out << " (database)\n" << DatabaseContent(it->path().string());
      continue;
    }
    if (it->is_regular_file()) out << " " << it->file_size();
    out << "\n";
  }
  return out.str();
}

class CliBadInput : public ::testing::TestWithParam<CliRow> {
 protected:
  // Builds the row's starting state (the document's "Setup" list). The
  // writer that made a `shop` database is closed again, except for `held`,
  // where this process keeps the database open for writing while counterctl
  // runs in another process. `shop+stock` leaves the database at format 7
  // (its Reserve raised it), so a refused reset or reserve has no format
  // to raise.
  void RunSetup(const std::string& setup) {
    if (setup == "none") return;
    if (setup == "not a database") {
      fs::create_directory(db_);
      std::ofstream(db_ + "/notes.txt") << "notes\n";
      return;
    }
    if (setup == "a file") {
      std::ofstream(db_) << "not a database\n";
      return;
    }
    ASSERT_TRUE(setup == "shop" || setup == "held" ||
                setup == "shop+likes" || setup == "shop+stock")
        << "unknown setup '" << setup << "'";
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("orders", {4}));
    ASSERT_OK(db->CreateCounter("checkouts", {2, ShardPolicy::kAffinity}));
    ASSERT_OK(db->CreateCounter("single", {1}));
    ASSERT_OK(db->IncrementOnce("orders", "ord-1", 1));
    if (setup == "shop+likes") {
      CounterSpec likes{4};
      likes.keyed = true;
      ASSERT_OK(db->CreateCounter("likes", likes));
      ASSERT_OK(db->IncrementOnce({"likes", "post-1"}, "user-1", 1));
    }
    if (setup == "shop+stock") {
      CounterSpec stock{1};
      stock.bounds.has_min = true;
      stock.bounds.min = 0;
      ASSERT_OK(db->CreateCounter("stock", stock));
      ASSERT_OK(db->Increment("stock", 3));
      Result<ReservationResult> held =
          db->Reserve("stock", "cart-1", 2, 3'600'000);
      ASSERT_OK(held);
      ASSERT_EQ(held->outcome, Outcome::kApplied);
    }
    if (setup == "held") holder_ = std::move(db);
  }

  std::string Expand(const std::string& text) const {
    return ReplaceAll(ReplaceAll(text, "<DB>", db_), "<TMP>", tmp_.path());
  }

  TempDir tmp_;      // <TMP>: everything the row may touch lives here
  TempDir scratch_;  // where RunProcess keeps the child's output
  std::string db_ = tmp_.Sub("db");  // <DB>
  std::unique_ptr<Db> holder_;
};

// Proves one CLI row of docs/bad-input.md: the exact exit status, stderr
// line and stdout, and no write (or, for a known defect, the write the row
// documents still happens).
TEST_P(CliBadInput, Row) {
  const CliRow& row = GetParam();
  ASSERT_EQ(row.cells.size(), static_cast<size_t>(kColumns))
      << row.where << ": a CLI row has " << kColumns
      << " cells: id, setup, in.jsonl, command, exit, stderr, stdout, "
         "writes, notes";
  RunSetup(row.cells[kSetup]);
  if (HasFatalFailure()) return;
  const std::string input = CellText(row.cells[kInputFile]);
  if (!input.empty()) {
    // "\n" in the cell separates lines; the file ends with a newline.
    std::ofstream(tmp_.Sub("in.jsonl"), std::ios::binary)
        << ReplaceAll(input, "\\n", "\n") << "\n";
  }
  std::optional<std::vector<std::string>> args =
      SplitCommand(Expand(row.cells[kCommand]));
  ASSERT_TRUE(args && !args->empty() && (*args)[0] == "counterctl")
      << row.where << ": the command must start with counterctl";
  (*args)[0] = COUNTERCTL;
  const std::string before = TreeSnapshot(tmp_.path());

  const ProcessResult r = RunProcess(*args, scratch_.path());

  const std::string context = row.where + "\n$ " + row.cells[kCommand] +
                              "\nstdout:\n" + r.out + "stderr:\n" + r.err;
  EXPECT_EQ(r.signal, 0) << context;
  EXPECT_EQ(std::to_string(r.exit_code), row.cells[kExit]) << context;
  const std::string err = Expand(CellText(row.cells[kStderr]));
  EXPECT_EQ(r.err, err.empty() ? "" : err + "\n") << context;
  const std::string out = Expand(CellText(row.cells[kStdout]));
  EXPECT_EQ(r.out, out.empty() ? "" : out + "\n") << context;

  holder_.reset();  // let go of a `held` database; the snapshot reads it
                    // read-only either way
  const std::string after = TreeSnapshot(tmp_.path());
  const bool known_defect = row.cells[kNotes].rfind("**known defect**", 0) == 0;
  if (row.cells[kWrites] == "nothing") {
    EXPECT_EQ(after, before) << row.id << " wrote something\n" << context;
  } else {
    ASSERT_EQ(row.cells[kWrites].rfind("yes", 0), 0u)
        << row.where << ": writes is `nothing` or `yes: ...`";
    ASSERT_TRUE(known_defect)
        << row.where << ": a bad input that writes must be a known defect";
    EXPECT_NE(after, before)
        << row.where << ": the known defect no longer writes anything: "
        << "update the row\n"
        << context;
  }
}

// CLI-07 -> CLI_07. A malformed or repeated id still gets a valid, unique
// name, so a bad document fails CliRowsAreNumberedInOrder instead of
// aborting test discovery.
std::string CliTestName(const ::testing::TestParamInfo<CliRow>& info) {
  std::string name;
  for (char c : info.param.id) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  static std::set<std::string> seen;
  if (name.empty() || !seen.insert(name).second) {
    name += "_row" + std::to_string(info.index);
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(BadInputDoc, CliBadInput,
                         ::testing::ValuesIn(CliRowsFromDoc()), CliTestName);

// Proves the CLI rows are numbered CLI-01, CLI-02, ... in document order,
// each once, and that the table holds at least the rows issue 7 asks for.
TEST(BadInputDoc, CliRowsAreNumberedInOrder) {
  const std::vector<CliRow> rows = CliRowsFromDoc();
  ASSERT_GE(rows.size(), 15u) << "too few CLI rows in " << TALLY_BAD_INPUT_DOC;
  for (size_t i = 0; i < rows.size(); ++i) {
    char want[32];
    std::snprintf(want, sizeof(want), "CLI-%02zu", i + 1);
    EXPECT_EQ(rows[i].id, want) << rows[i].where;
  }
}

// The command splitter itself, on the forms the document uses.
TEST(BadInputDoc, SplitCommandHandlesQuotes) {
  EXPECT_EQ(*SplitCommand("counterctl --db <DB> get orders"),
            (std::vector<std::string>{"counterctl", "--db", "<DB>", "get",
                                      "orders"}));
  EXPECT_EQ(*SplitCommand("counterctl create '' --by ''"),
            (std::vector<std::string>{"counterctl", "create", "", "--by", ""}));
  EXPECT_EQ(*SplitCommand("a $'bad\\xff' $'tab\\there' 'x y'"),
            (std::vector<std::string>{"a", "bad\xff", "tab\there", "x y"}));
  EXPECT_FALSE(SplitCommand("a 'open"));
  EXPECT_FALSE(SplitCommand("a $'\\xZZ'"));
}

// ---- The known defects of the table, as the rules want them ----
// These fail today and are disabled so the suite stays green; run them with
// --gtest_also_run_disabled_tests. Fixing a defect makes its test pass:
// enable it and update the row (whose test then fails) in the document.

class BadInputKnownDefect : public CounterctlTest {};

// CLI-52: lines whose deltas overflow a shard are rejected, and the counter
// keeps its value.
TEST_F(BadInputKnownDefect, DISABLED_ApplyRejectsLinesThatOverflowACounter) {
  CtlOk({"create", "single", "--shards", "1"});
  const std::string line =
      "{\"counter\":\"single\",\"delta\":9223372036854775807}\n";
  const std::string file = WriteFile("in.jsonl", line + line);
  const ProcessResult r = Ctl({"apply", "--file", file});
  EXPECT_EQ(r.exit_code, 1) << Describe({"apply"}, r);
  EXPECT_EQ(CtlValue({"get", "single"}), "9223372036854775807");
}

}  // namespace
}  // namespace tally::test
