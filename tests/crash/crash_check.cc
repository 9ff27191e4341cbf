#include "crash/crash_check.h"

#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "crash/child_process.h"
#include "crash/workload.h"
#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "schema/records.h"
#include "tally/db.h"

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
      if (s.ok()) s = db->Verify(&report);
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
    engine::RocksOptions ro = engine::MakeRocksOptions(Options());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s =
        rocksdb::DB::OpenForReadOnly(ro.db, path, ro.families, &handles, &raw);
    if (!s.ok()) {
      Violation("raw open: " + s.ToString());
      return false;
    }
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::ReadOptions read;
    read.total_order_seek = true;
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(read, handles[engine::kEvents]));
    bool ok = true;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
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
    it.reset();
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
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
      auto marker = db->GetEvent(counter, event);
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
    s = db->Verify(&verify);
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

}  // namespace tally::crash
