#include "crash/crash_check.h"

#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "crash/child_process.h"
#include "crash/workload.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "engine/rocksdb_options.h"
#include "schema/records.h"
#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/raw_db.h"

namespace tally::crash {
namespace {

// Starts the writer with its stdout on a pipe; returns its pid.
pid_t StartWriter(const CrashConfig& c, const std::string& db,
                  const std::string& log, uint64_t seed, int* out_fd) {
  std::vector<std::string> argv = {c.writer, db, std::to_string(seed), log};
  if (c.sync) argv.push_back("--sync");
  return StartChild(argv, out_fd);
}

// A read-only Db beside the live writer (issue 12, item 1): refreshes and
// runs Verify in a loop until stopped; every finding is a violation. Busy
// (the writer deleted logs during each attempt to reach one point) is not:
// it is the documented refusal, and the next round tries again.
class BesideReader {
 public:
  explicit BesideReader(const std::string& path)
      : thread_([this, path] { Run(path); }) {}
  ~BesideReader() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // After Stop().
  const std::vector<std::string>& problems() const { return problems_; }
  uint64_t points() const { return points_; }

 private:
  void Run(const std::string& path) {
    Options o;
    o.read_only = true;
    std::unique_ptr<Db> db;
    while (!stop_ && db == nullptr) {
      Status s = Db::Open(o, path, &db);
      // Not yet created, or no header yet: the writer has only started.
      if (!s.ok() && !s.IsNotFound() && !s.IsBusy() && !s.IsInvalidArgument()) {
        problems_.push_back("read-only open: " + s.ToString());
        return;
      }
    }
    while (!stop_) {
      Status s = db->Refresh();
      if (s.IsBusy()) continue;
      VerifyReport report;
      if (s.ok()) s = tally::Verify(*db, &report);
      if (s.IsBusy()) continue;
      if (!s.ok()) {
        problems_.push_back("read-only refresh/verify: " + s.ToString());
        return;
      }
      ++points_;
      if (!report.ok()) {
        problems_.push_back("read-only verify beside the writer: " +
                            report.problems.front());
        return;
      }
    }
  }

  std::atomic<bool> stop_{false};
  std::vector<std::string> problems_;  // written by the thread only
  uint64_t points_ = 0;                // likewise
  std::thread thread_;                 // last: starts after the fields
};

class Checker {
 public:
  Checker(const CrashConfig& config, CrashReport* report)
      : config_(config), report_(report) {}

  void Violation(const std::string& what) {
    report_->violations.push_back("cycle " + std::to_string(cycle_) + ": " +
                                  what);
  }
  void Pass() { ++report_->checks; }

  // Sums every marker's delta per counter id, straight from RocksDB.
  bool MarkerSums(const std::string& path, std::map<uint64_t, int64_t>* sums) {
    test::RawDb db(path, test::RawMode::kReadOnly);
    if (!db.status().ok()) {
      Violation("raw open: " + db.status().ToString());
      return false;
    }
    std::unique_ptr<rocksdb::Iterator> it = db.Scan(engine::kEvents);
    bool ok = true;
    for (; it->Valid(); it->Next()) {
      schema::MarkerRecord m;
      uint64_t id;
      std::string_view event;
      if (!schema::DecodeMarker(it->value().ToStringView(), &m).ok() ||
          !engine::DecodeMarkerKey(it->key().ToStringView(), &id, &event) ||
          id != m.counter_id || event != m.event_id) {
        Violation("marker " + engine::HexKey(it->key().ToStringView()) +
                  " does not decode or disagrees with its key");
        ok = false;
        continue;
      }
      (*sums)[id] += m.delta;
    }
    if (!it->status().ok()) {
      Violation("marker scan: " + it->status().ToString());
      ok = false;
    }
    return ok;
  }

  // Checks the acknowledged log lines from byte `from` on; returns the
  // offset checked up to (only whole lines).
  size_t CheckAcks(Db* db, const std::string& log, size_t from) {
    std::ifstream in(log, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    std::string line;
    size_t offset = from;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a torn last line: the writer died mid-append
      offset += line.size() + 1;
      std::istringstream fields(line);
      std::string kind;
      fields >> kind;
      if (kind == "P") {
        int64_t delta = 0;
        fields >> delta;
        acked_plain_ += delta;
        ++report_->acknowledged;
        continue;
      }
      std::string counter, event;
      int64_t delta = 0;
      fields >> counter >> event >> delta;
      if (kind != "O" || fields.fail()) {
        Violation("ack log: malformed line '" + line + "'");
        continue;
      }
      ++report_->acknowledged;
      auto marker = db->GetMarker(counter, event);
      if (!marker.ok()) {
        Violation("acknowledged " + counter + "/" + event +
                  " lost: " + marker.status().ToString());
      } else if (marker->delta != delta) {
        Violation("acknowledged " + counter + "/" + event + " delta " +
                  std::to_string(delta) + " but marker holds " +
                  std::to_string(marker->delta));
      } else {
        Pass();
      }
    }
    return offset;
  }

  void CheckCycle(const std::string& path, const std::string& log) {
    std::map<uint64_t, int64_t> marker_sums;
    if (!MarkerSums(path, &marker_sums)) return;
    Pass();
    std::unique_ptr<Db> db;
    Status s = Db::Open(Options(), path, &db);
    if (!s.ok()) {
      Violation("reopen: " + s.ToString());
      return;
    }
    VerifyReport verify;
    s = tally::Verify(*db, &verify);
    if (!s.ok() || !verify.ok()) {
      Violation("verify: " + (s.ok() ? verify.problems.front() : s.ToString()));
    } else {
      Pass();
    }
    for (const char* name : kOnceCounters) {
      auto info = db->DescribeCounter(name);
      if (!info.ok()) continue;  // the writer died before creating it
      auto value = db->ReadExact(name);
      if (!value.ok()) {
        Violation(std::string(name) + ": " + value.status().ToString());
      } else if (*value != marker_sums[info->id]) {
        Violation(std::string(name) + ": value " + std::to_string(*value) +
                  " != marker delta sum " +
                  std::to_string(marker_sums[info->id]));
      } else {
        Pass();
      }
    }
    // Roll-ups: a cached value is one the counter passed through (deltas are
    // positive: between 0 and the exact value), and a roll-up now makes it
    // the exact value.
    for (const char* name : {kOnceCounters[0], kOnceCounters[1],
                             kOnceCounters[2], kPlainCounter}) {
      auto exact = db->ReadExact(name);
      auto cached = db->ReadCached(name);
      if (!exact.ok() || !cached.ok()) continue;  // not created yet
      if (cached->value < 0 || cached->value > *exact) {
        Violation(std::string(name) + ": cached " +
                  std::to_string(cached->value) + " outside [0, exact " +
                  std::to_string(*exact) + "]");
        continue;
      }
      Status r = db->RollupNow(name);
      auto fresh = db->ReadCached(name);
      if (!r.ok() || !fresh.ok() || fresh->value != *exact) {
        Violation(std::string(name) + ": after a roll-up cached != exact");
      } else {
        Pass();
      }
    }
    checked_to_ = CheckAcks(db.get(), log, checked_to_);
    auto views = db->ReadExact(kPlainCounter);
    if (views.ok()) {
      // Each killed call may have been written without being logged.
      const int64_t slack = int64_t{cycle_ + 1} * kThreads * kMaxPlainPerCall;
      if (*views < acked_plain_ || *views > acked_plain_ + slack) {
        Violation(std::string(kPlainCounter) + ": value " +
                  std::to_string(*views) + " outside [" +
                  std::to_string(acked_plain_) + ", " +
                  std::to_string(acked_plain_ + slack) + "]");
      } else {
        Pass();
      }
    }
  }

  void FinalCheck(const std::string& path, const std::string& log) {
    std::unique_ptr<Db> db;
    Status s = Db::Open(Options(), path, &db);
    if (!s.ok()) {
      Violation("final reopen: " + s.ToString());
      return;
    }
    acked_plain_ = 0;
    const uint64_t before = report_->acknowledged;
    CheckAcks(db.get(), log, 0);
    report_->acknowledged = before;  // the same calls, checked again
  }

  void set_cycle(int cycle) { cycle_ = cycle; }

 private:
  const CrashConfig& config_;
  CrashReport* report_;
  int cycle_ = 0;
  size_t checked_to_ = 0;
  int64_t acked_plain_ = 0;
};

}  // namespace

CrashReport RunCrashCycles(const CrashConfig& config) {
  CrashReport report;
  Checker checker(config, &report);
  const std::string db = config.dir + "/db";
  const std::string log = config.dir + "/acks.log";
  std::mt19937 rng(static_cast<unsigned>(config.seed));
  for (int cycle = 0; cycle < config.cycles; ++cycle) {
    checker.set_cycle(cycle);
    int fd = -1;
    const pid_t pid = StartWriter(config, db, log, config.seed + cycle, &fd);
    if (pid <= 0) {
      checker.Violation("cannot start the writer");
      break;
    }
    const int wait_for = 1 + static_cast<int>(rng() % config.max_progress);
    // The first progress byte: the database and its counters exist.
    bool progressed = AwaitProgress(fd, 1);
    {
      BesideReader reader(db);
      if (progressed) progressed = AwaitProgress(fd, wait_for);
      reader.Stop();
      for (const std::string& p : reader.problems()) checker.Violation(p);
      report.reader_points += reader.points();
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(fd);
    if (!progressed || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      checker.Violation("writer exited on its own, status " +
                        std::to_string(status));
      break;
    }
    ++report.cycles;
    checker.CheckCycle(db, log);
    if (!report.violations.empty()) break;
  }
  if (report.violations.empty()) checker.FinalCheck(db, log);
  return report;
}

namespace {

// The import mode's source: counters of several shapes; "imp-bulk" has more
// markers than one write holds (kMaxBatchOps), so its import takes several.
bool BuildImportSource(const std::string& path, std::string* error) {
  std::unique_ptr<Db> db;
  Status s = Db::Open(Options(), path, &db);
  std::vector<IncrementResult> results;
  for (int c = 0; s.ok() && c < 6; ++c) {
    const std::string name = "imp-" + std::to_string(c);
    s = db->CreateCounter(name, {static_cast<uint32_t>(1 + c * 3)});
    Batch b;
    for (int i = 0; s.ok() && i < 3000; ++i) {
      b.AddOnce(name, "e-" + std::to_string(i), i % 7 + 1);
      if (i % 5 == 0) b.Add(name, 2);
    }
    if (s.ok()) s = db->Apply(b, &results);
  }
  if (s.ok()) s = db->CreateCounter("imp-bulk", {4});
  for (int round = 0; s.ok() && round < 2; ++round) {
    Batch b;
    for (size_t i = 0; i < 40000; ++i) {
      b.AddOnce("imp-bulk", "b-" + std::to_string(round * 40000 + i), 1);
    }
    s = db->Apply(b, &results);
  }
  if (!s.ok()) *error = "build import source: " + s.ToString();
  return s.ok();
}

// Whether `path` holds an unfinished import's note (meta key 0x05...), read
// with raw RocksDB before any tally open removes it.
bool HasImportNote(const std::string& path) {
  test::RawDb db(path, test::RawMode::kReadOnly);
  if (!db.status().ok()) return false;
  bool found = false;
  for (auto it = db.Scan(engine::kMeta); it->Valid() && !found; it->Next()) {
    found = it->key().starts_with(rocksdb::Slice(&engine::kImportKeyTag, 1));
  }
  return found;
}

}  // namespace

CrashReport RunImportCycles(const CrashConfig& config) {
  CrashReport report;
  auto violation = [&](int cycle, const std::string& what) {
    report.violations.push_back("import cycle " + std::to_string(cycle) + ": " +
                                what);
  };
  const std::string source = config.dir + "/import-source";
  const std::string target = config.dir + "/import-target";
  std::string error;
  if (!BuildImportSource(source, &error)) {
    violation(0, error);
    return report;
  }
  std::unique_ptr<Db> src;
  Options ro;
  ro.read_only = true;
  Status s = Db::Open(ro, source, &src);
  if (!s.ok()) {
    violation(0, "open source: " + s.ToString());
    return report;
  }
  const std::vector<CounterInfo> counters = *src->ListCounters();
  const int n = static_cast<int>(counters.size());
  // The target exists before any kill: a kill while a database is being
  // created is another check's business (issue 12, item 12).
  auto create_target = [&]() {
    std::unique_ptr<Db> fresh;
    Status cs = Db::Open(Options(), target, &fresh);
    if (!cs.ok()) violation(0, "create target: " + cs.ToString());
    return cs.ok();
  };
  if (!create_target()) return report;
  std::mt19937 rng(static_cast<unsigned>(config.seed));
  for (int cycle = 0; cycle <= config.cycles && report.violations.empty();
       ++cycle) {
    const bool last = cycle == config.cycles;
    int fd = -1;
    const pid_t pid = StartChild({config.writer, "--import", source, target}, &fd);
    if (pid <= 0) {
      violation(cycle, "cannot start the importer");
      break;
    }
    // A kill after byte k (1..n) lands in counter k's import (or after it);
    // byte n + 1 says every counter is in.
    const int wait_for = last ? n + 1 : 1 + static_cast<int>(rng() % n);
    const bool progressed = AwaitProgress(fd, wait_for);
    if (!KillChild(pid, fd) || !progressed) {
      violation(cycle, "importer exited on its own");
      break;
    }
    ++report.cycles;
    if (HasImportNote(target)) ++report.interrupted_imports;
    std::unique_ptr<Db> db;
    s = Db::Open(Options(), target, &db);
    if (!s.ok()) {
      violation(cycle, "reopen: " + s.ToString());
      break;
    }
    VerifyReport verify;
    s = tally::Verify(*db, &verify);
    if (!s.ok() || !verify.ok()) {
      violation(cycle,
                "verify: " + (s.ok() ? verify.problems.front() : s.ToString()));
    } else {
      ++report.checks;
    }
    int present = 0;
    for (const CounterInfo& c : counters) {
      if (!db->DescribeCounter(c.name).ok()) continue;
      ++present;
      auto want = src->ReadExact(c.name);
      auto got = db->ReadExact(c.name);
      auto want_events = src->CountMarkers(c.name);
      auto got_events = db->CountMarkers(c.name);
      if (!got.ok() || *got != *want || !got_events.ok() ||
          *got_events != *want_events ||
          *db->ShardCounts(c.name) != *src->ShardCounts(c.name)) {
        violation(cycle, c.name + ": differs from the export (value " +
                             (got.ok() ? std::to_string(*got) : "?") +
                             ", want " + std::to_string(*want) + ")");
        continue;
      }
      ListMarkersOptions one;
      one.limit = 1;
      auto first = src->ListMarkers(c.name, one);
      if (first.ok() && !first->empty()) {
        auto again = db->IncrementOnce(c.name, first->front().event_id,
                                       first->front().delta);
        if (!again.ok() || again->outcome != Outcome::kDuplicate ||
            *db->ReadExact(c.name) != *want) {
          violation(cycle, c.name + ": a redelivered event counted again");
          continue;
        }
      }
      ++report.checks;
      ++report.acknowledged;
    }
    if (last && present != n) {
      violation(cycle, "the finished import holds " + std::to_string(present) +
                           " of " + std::to_string(n) + " counters");
    }
    db.reset();
    if (present == n && !last) {
      std::filesystem::remove_all(target);
      if (!create_target()) break;
    }
  }
  return report;
}

}  // namespace tally::crash
