#include "crash/outbox_check.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "crash/child_process.h"
#include "crash/outbox_workload.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "tally/sync.h"
#include "testutil/power_cut_fs.h"

namespace tally::crash {
namespace {

namespace fs = std::filesystem;

// The increments the checker makes after each cut: all must reach the hub.
constexpr int kAfterCut = 3;
constexpr int64_t kAfterCutDelta = 7;

class OutboxChecker {
 public:
  OutboxChecker(const OutboxCrashConfig& config, OutboxCrashReport* report)
      : config_(config),
        report_(report),
        edge_(test::NormalPath(config.dir + "/edge")),
        hub_(config.dir + "/hub"),
        ack_log_(config.dir + "/acks.log") {}

  const std::string& edge() const { return edge_; }
  const std::string& hub() const { return hub_; }
  const std::string& ack_log() const { return ack_log_; }
  std::string sync_log() const {
    return config_.dir + "/syncs-" + std::to_string(cycle_) + ".log";
  }
  void set_cycle(int cycle) { cycle_ = cycle; }

  void Violation(const std::string& what) {
    report_->violations.push_back("cycle " + std::to_string(cycle_) + ": " +
                                  what);
  }
  void Check(bool ok, const std::string& what) {
    if (ok) {
      ++report_->checks;
    } else {
      Violation(what);
    }
  }

  // The edge as a power cut would leave it: every WAL the killed writer
  // wrote truncated to its last logged sync.
  bool CutEdge() {
    const std::string cut = edge_ + ".cut";
    std::string error;
    std::error_code ec;
    fs::remove_all(cut, ec);
    if (!test::CopyAfterPowerCut(edge_, cut, test::ReadSyncLog(sync_log()),
                                 &error)) {
      Violation("power-cut copy: " + error);
      return false;
    }
    fs::remove_all(edge_, ec);
    if (!ec) fs::rename(cut, edge_, ec);
    if (ec) {
      Violation("replace the edge: " + ec.message());
      return false;
    }
    return true;
  }

  void CheckCycle() {
    if (!CutEdge()) return;
    std::unique_ptr<Db> edge, hub;
    Options ho;
    ho.sync = true;
    ho.rollup_interval_ms = 0;
    Options eo;
    eo.rollup_interval_ms = 0;
    Status s = Db::Open(eo, edge_, &edge);
    if (s.ok()) s = Db::Open(ho, hub_, &hub);
    if (!s.ok()) {
      Violation("reopen: " + s.ToString());
      return;
    }
    auto created = edge->DescribeCounter(kOutboxCounter);
    if (!created.ok() || !hub->DescribeCounter(kOutboxCounter).ok()) {
      return;  // killed before the counters existed: nothing to check
    }
    const int64_t edge_total = Total(edge.get());
    auto pending = tally::GetOutboxStatus(*edge);
    SyncReport report;
    s = SyncOutbox(edge.get(), hub.get(), SyncOptions(), &report);
    Check(s.ok(), "sync of the surviving outbox: " + s.ToString());
    if (!s.ok()) return;
    auto after = tally::GetOutboxStatus(*edge);
    Check(after.ok() && after->entries == 0,
          after.ok()
              ? std::string("outbox not empty after sync")
              : "outbox status after sync: " + after.status().ToString());
    const int64_t hub_after = Total(hub.get());
    Check(hub_after >= edge_total,
          "hub holds " + std::to_string(hub_after) + " < edge total " +
              std::to_string(edge_total) +
              ": an edge increment was taken for one the hub had");
    if (pending.ok() && pending->last_seq > 0) {
      report_->cut_entries += static_cast<uint64_t>(hub_after - edge_total);
    }

    for (int i = 0; i < kAfterCut; ++i) {
      auto r = edge->Increment(kOutboxCounter, kAfterCutDelta);
      if (!r.ok()) {
        Violation("increment after the cut: " + r.status().ToString());
        return;
      }
    }
    added_ += kAfterCut * kAfterCutDelta;
    s = SyncOutbox(edge.get(), hub.get(), SyncOptions(), &report);
    Check(s.ok(), "sync after the cut: " + s.ToString());
    if (!s.ok()) return;
    Check(report.applied == kAfterCut && report.duplicates == 0,
          "after the cut " + std::to_string(report.applied) + " applied, " +
              std::to_string(report.duplicates) + " duplicates of " +
              std::to_string(kAfterCut) + " new entries");
    const int64_t hub_final = Total(hub.get());
    Check(hub_final == hub_after + kAfterCut * kAfterCutDelta,
          "hub grew by " + std::to_string(hub_final - hub_after) +
              " for new increments of " +
              std::to_string(kAfterCut * kAfterCutDelta));
    const int64_t acked = AckedSum();
    const int64_t slack =
        int64_t{cycle_ + 1} * kOutboxThreads * kMaxOutboxPerCall;
    Check(hub_final <= acked + added_ + slack,
          "hub holds " + std::to_string(hub_final) +
              ", more than every increment made (" +
              std::to_string(acked + added_) + " + " + std::to_string(slack) +
              " in flight): counted twice");
  }

 private:
  int64_t Total(Db* db) {
    auto v = db->ReadExact(kOutboxCounter);
    if (!v.ok()) Violation("read: " + v.status().ToString());
    return v.ok() ? *v : 0;
  }
  // The sum of the deltas the writers logged as applied (whole lines).
  int64_t AckedSum() {
    std::ifstream in(ack_log_);
    std::string line;
    int64_t sum = 0;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a torn last line
      std::istringstream fields(line);
      std::string kind;
      int64_t delta = 0;
      if (fields >> kind >> delta && kind == "A") sum += delta;
    }
    return sum;
  }

  const OutboxCrashConfig& config_;
  OutboxCrashReport* report_;
  const std::string edge_, hub_, ack_log_;
  int cycle_ = 0;
  int64_t added_ = 0;  // what the checker itself incremented
};

}  // namespace

OutboxCrashReport RunOutboxPowerCutCycles(const OutboxCrashConfig& config) {
  OutboxCrashReport report;
  OutboxChecker checker(config, &report);
  std::mt19937 rng(static_cast<unsigned>(config.seed));
  for (int cycle = 0; cycle < config.cycles; ++cycle) {
    checker.set_cycle(cycle);
    int fd = -1;
    const pid_t pid =
        StartChild({config.writer, checker.edge(), checker.hub(),
                    std::to_string(config.seed + static_cast<uint64_t>(cycle)),
                    checker.sync_log(), checker.ack_log()},
                   &fd);
    if (pid <= 0) {
      checker.Violation("cannot start the writer");
      break;
    }
    const int wait_for = 1 + static_cast<int>(rng() % config.max_progress);
    const bool progressed = AwaitProgress(fd, wait_for);
    if (!KillChild(pid, fd) || !progressed) {
      checker.Violation("writer exited on its own (see its stderr)");
      break;
    }
    ++report.cycles;
    checker.CheckCycle();
    if (!report.violations.empty()) break;
  }
  return report;
}

}  // namespace tally::crash
