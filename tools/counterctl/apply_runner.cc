#include "apply_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>

#include "apply_line.h"
#include "common.h"
#include "counter_cache.h"
#include "progress.h"
#include "tally/batch.h"
#include "tally/types.h"

namespace counterctl {
namespace {

// Errors that are about one operation (bad input) rather than about the
// database: they reject a line, everything else stops the run.
bool IsLineError(const tally::Status& s) {
  return s.IsNotFound() || s.IsInvalidArgument() || s.IsOutOfRange();
}

// State the workers share. Everything else is per worker.
struct Shared {
  Shared(tally::Db* db, const std::vector<std::string_view>& lines,
         const ApplyConfig& config)
      : db(db), lines(lines), config(config) {}

  tally::Db* const db;
  const std::vector<std::string_view>& lines;
  const ApplyConfig& config;
  const size_t chunks =
      (lines.size() + config.batch_ops - 1) / config.batch_ops;
  std::atomic<size_t> next_chunk{0};
  std::atomic<bool> stop{false};
  // For the progress line: chunks processed, workers finished.
  std::atomic<size_t> chunks_done{0};
  std::atomic<size_t> workers_done{0};

  std::mutex mu;
  ApplyReport report;  // guarded by mu; workers merge into it when done
  // Chunks finished, and how many of the first ones all are (guarded by mu).
  std::vector<bool> finished = std::vector<bool>(chunks, false);
  size_t prefix = 0;

  // Input line number of lines[i].
  size_t LineOf(size_t i) const { return config.first_line + i; }

  // Records that `chunk` was committed (or rejected) whole.
  void Finished(size_t chunk) {
    std::lock_guard<std::mutex> lock(mu);
    finished[chunk] = true;
    const size_t before = prefix;
    while (prefix < chunks && finished[prefix]) ++prefix;
    if (prefix != before && config.on_committed) {
      config.on_committed(LineOf(CommittedLines()) - 1);
    }
  }
  // Lines in the committed prefix (the caller holds mu).
  size_t CommittedLines() const {
    return std::min(lines.size(), prefix * config.batch_ops);
  }

  // Records the first database failure and stops all workers. `first` and
  // `last` are the 1-based input lines in flight: a plain increment among
  // them may or may not have been counted.
  void SetFatal(tally::Status s, size_t first, size_t last) {
    std::lock_guard<std::mutex> lock(mu);
    if (report.fatal.ok()) {
      report.fatal = std::move(s);
      report.fatal_lines = first == last ? "line " + std::to_string(first)
                                         : "lines " + std::to_string(first) +
                                               ".." + std::to_string(last);
    }
    stop.store(true);
  }
};

class Worker {
 public:
  explicit Worker(Shared* shared) : shared_(shared), cache_(shared->db) {}

  void Run() {
    const size_t n = shared_->lines.size();
    const size_t chunk_lines = shared_->config.batch_ops;
    const std::atomic<bool>* interrupt = shared_->config.stop;
    while (!shared_->stop.load(std::memory_order_relaxed) &&
           (interrupt == nullptr || !interrupt->load())) {
      const size_t chunk = shared_->next_chunk.fetch_add(1);
      if (chunk >= shared_->chunks) break;
      const size_t begin = chunk * chunk_lines;
      if (!ProcessChunk(begin, std::min(n, begin + chunk_lines))) break;
      shared_->Finished(chunk);
      shared_->chunks_done.fetch_add(1, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(shared_->mu);
    AddCounts(local_, &shared_->report);
  }

 private:
  // Returns false when the run must stop (a database failure).
  bool ProcessChunk(size_t begin, size_t end) {
    batch_.Clear();
    batch_lines_.clear();
    for (size_t i = begin; i < end; ++i) {
      const std::string_view line = shared_->lines[i];
      if (IsBlankLine(line)) continue;
      ++local_.lines;
      if (!ParseApplyLine(line, &event_, &reason_)) {
        Reject(shared_->LineOf(i), std::move(reason_));
        continue;
      }
      const tally::CounterInfo* info = nullptr;
      tally::Status s = cache_.Lookup(event_.counter, &info);
      if (!s.ok()) {
        if (!IsLineError(s)) {
          shared_->SetFatal(std::move(s), shared_->LineOf(i), shared_->LineOf(i));
          return false;
        }
        Reject(shared_->LineOf(i), s.IsNotFound() ? "unknown counter \"" +
                                           Printable(event_.counter) + "\""
                                     : s.ToString());
        continue;
      }
      if (info->keyed != !event_.key.empty()) {
        // The engine would refuse the whole batch for this one op.
        Reject(shared_->LineOf(i), info->keyed
                          ? "counter \"" + Printable(event_.counter) +
                                "\" is keyed: the line needs a \"key\""
                          : "counter \"" + Printable(event_.counter) +
                                "\" is not keyed: the line may not have a "
                                "\"key\"");
        continue;
      }
      if (!event_.once && info->policy == tally::ShardPolicy::kAffinity) {
        // The line format has no affinity key, and the engine refuses a
        // plain increment without one under this policy.
        Reject(shared_->LineOf(i), "counter \"" + Printable(event_.counter) +
                          "\" has policy affinity: plain increments need an "
                          "affinity key, use an event_id or `incr --affinity`");
        continue;
      }
      const tally::CounterRef ref(event_.counter, event_.key);
      if (event_.once) {
        batch_.AddOnce(ref, event_.event_id, event_.delta,
                       tally::OnceOptions{event_.event_time_ms, {}});
      } else {
        batch_.Add(ref, event_.delta,
                   tally::IncrementOptions{{}, event_.event_time_ms});
      }
      batch_lines_.push_back(shared_->LineOf(i));
    }
    if (batch_.empty()) return true;
    return Submit(begin, end);
  }

  bool Submit(size_t begin, size_t end) {
    tally::Status s = shared_->db->Apply(batch_, &results_);
    if (s.ok()) {
      if (results_.size() != batch_.size()) {
        shared_->SetFatal(
            tally::Status::Corruption(
                "Db::Apply returned " + std::to_string(results_.size()) +
                " results for " + std::to_string(batch_.size()) +
                " operations"),
            shared_->LineOf(begin), shared_->LineOf(end - 1));
        return false;
      }
      for (size_t k = 0; k < results_.size(); ++k) {
        Count(results_[k], batch_lines_[k]);
      }
      return true;
    }
    if (!IsLineError(s)) {
      shared_->SetFatal(std::move(s), shared_->LineOf(begin),
                        shared_->LineOf(end - 1));
      return false;
    }
    // The batch was refused whole and nothing was written, so retrying its
    // operations one by one cannot count anything twice.
    const std::vector<tally::Batch::Op>& ops = batch_.ops();
    for (size_t k = 0; k < ops.size(); ++k) {
      const tally::Batch::Op& op = ops[k];
      const tally::CounterRef ref(op.counter, op.key);
      tally::Result<tally::IncrementResult> r =
          op.once
              ? shared_->db->IncrementOnce(ref, op.event_id, op.delta,
                                           {op.event_time_ms, op.affinity_key})
              : shared_->db->Increment(
                    ref, op.delta,
                    tally::IncrementOptions{op.affinity_key, op.event_time_ms});
      if (r.ok()) {
        Count(*r, batch_lines_[k]);
      } else if (IsLineError(r.status())) {
        Reject(batch_lines_[k], "refused: " + r.status().ToString());
      } else {
        shared_->SetFatal(r.status(), batch_lines_[k], batch_lines_[k]);
        return false;
      }
    }
    return true;
  }

  // `line`: the input line of the op.
  void Count(const tally::IncrementResult& r, size_t line) {
    switch (r.outcome) {
      case tally::Outcome::kApplied:
        ++local_.applied;
        break;
      case tally::Outcome::kDuplicate:
        ++local_.duplicates;
        break;
      case tally::Outcome::kConflict:
        ++local_.conflicts;
        break;
      case tally::Outcome::kOutsideWindow:
        ++local_.outside_window;
        break;
      case tally::Outcome::kRefused:
        // A strict counter's bound: nothing was counted for the line.
        Reject(line, "refused: the strict counter holds " +
                         std::to_string(r.value) +
                         " and the delta would take it past a bound");
        break;
    }
  }

  void Reject(size_t line, std::string reason) {
    ++local_.rejected;
    local_.rejections.push_back(Rejection{line, std::move(reason)});
  }

  Shared* const shared_;
  CounterCache cache_;
  ApplyReport local_;
  // Reused across chunks so their buffers are allocated once.
  tally::Batch batch_;
  std::vector<size_t> batch_lines_;  // input line of each op in batch_
  std::vector<tally::IncrementResult> results_;
  ApplyEvent event_;
  std::string reason_;
};

}  // namespace

void AddCounts(const ApplyReport& from, ApplyReport* to) {
  to->lines += from.lines;
  to->applied += from.applied;
  to->duplicates += from.duplicates;
  to->conflicts += from.conflicts;
  to->outside_window += from.outside_window;
  to->rejected += from.rejected;
  to->rejections.insert(to->rejections.end(), from.rejections.begin(),
                        from.rejections.end());
}

ApplyReport ApplyLines(tally::Db* db,
                       const std::vector<std::string_view>& lines,
                       const ApplyConfig& config) {
  Shared shared(db, lines, config);
  const size_t chunks = shared.chunks;
  const size_t threads = std::max<size_t>(1, std::min(config.threads, chunks));
  // Drawn only when stderr is a terminal; then the workers always run on
  // their own threads and this one redraws the line until they finish.
  Progress progress("apply", "lines", lines.size());
  if (threads == 1 && !progress.enabled()) {
    Worker(&shared).Run();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (size_t t = 0; t < threads; ++t) {
      pool.emplace_back([&shared] {
        Worker(&shared).Run();
        shared.workers_done.fetch_add(1);
      });
    }
    while (progress.enabled() && shared.workers_done.load() < threads) {
      progress.Update(std::min(
          lines.size(), shared.chunks_done.load() * config.batch_ops));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::thread& t : pool) t.join();
  }
  progress.Finish();
  ApplyReport report = std::move(shared.report);
  report.committed_through = shared.LineOf(shared.CommittedLines()) - 1;
  report.stopped = report.fatal.ok() && shared.prefix < chunks;
  std::sort(
      report.rejections.begin(), report.rejections.end(),
      [](const Rejection& a, const Rejection& b) { return a.line < b.line; });
  return report;
}

}  // namespace counterctl
