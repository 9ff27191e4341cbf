#include "apply_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
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

// A chunk's outcome, kept until every chunk before it is finished.
struct Finished {
  ApplyReport counts;
  std::vector<Rejection> rejections;  // in line order
  size_t first_line = 0;
  size_t last_line = 0;  // the last line done (first_line - 1: none)
  uint64_t end_offset = 0;  // Chunk::end_offset
  // The run failed inside the chunk: lines after last_line are not done,
  // and no later chunk joins the committed prefix.
  bool partial = false;
};

// State the workers share. Everything else is per worker.
struct Shared {
  Shared(tally::Db* db, ApplySource* source, const ApplyConfig& config)
      : db(db),
        source(source),
        config(config),
        committed_line(source->next_line() - 1) {}

  tally::Db* const db;
  ApplySource* const source;  // guarded by mu
  const ApplyConfig& config;
  // How far past the first unfinished chunk a worker may take one.
  const size_t window = 2 * std::max<size_t>(1, config.threads);
  std::atomic<bool> stop{false};
  std::atomic<size_t> workers_done{0};
  std::atomic<uint64_t> committed_bytes{0};  // for the progress line

  std::mutex mu;
  std::condition_variable taken_cv;  // the prefix grew, or stop was set
  ApplyReport report;  // guarded by mu
  size_t taken = 0;    // chunks taken (guarded by mu)
  size_t prefix = 0;   // chunks 0..prefix-1 are finished (guarded by mu)
  bool prefix_closed = false;  // a chunk failed part-way (guarded by mu)
  size_t committed_line;       // guarded by mu
  std::map<size_t, Finished> waiting;  // finished past the prefix (mu)

  bool Stopping() const {
    return stop.load() ||
           (config.stop != nullptr && config.stop->load());
  }

  // Records `chunk`'s outcome; reports and counts it once every chunk
  // before it is finished (the caller holds mu).
  void FinishLocked(size_t chunk, Finished done) {
    waiting.emplace(chunk, std::move(done));
    const size_t before = committed_line;
    while (!prefix_closed && !waiting.empty() &&
           waiting.begin()->first == prefix) {
      Finished& f = waiting.begin()->second;
      Merge(f);
      committed_line = f.last_line;
      committed_bytes.store(f.end_offset, std::memory_order_relaxed);
      if (f.partial) {
        prefix_closed = true;
      } else {
        ++prefix;
      }
      waiting.erase(waiting.begin());
    }
    if (committed_line != before && config.on_committed) {
      config.on_committed(committed_line);
    }
    taken_cv.notify_all();
  }
  void Merge(const Finished& f) {
    AddCounts(f.counts, &report);
    if (config.on_rejected) {
      for (const Rejection& r : f.rejections) config.on_rejected(r);
    }
  }

  // Records the first database failure and stops all workers. `first` and
  // `last` are the 1-based input lines in flight: a plain increment among
  // them may or may not have been counted. The caller holds mu.
  void SetFatalLocked(tally::Status s, size_t first, size_t last) {
    if (report.fatal.ok()) {
      report.fatal = std::move(s);
      report.fatal_lines = first == last ? "line " + std::to_string(first)
                                         : "lines " + std::to_string(first) +
                                               ".." + std::to_string(last);
    }
    stop.store(true);
    taken_cv.notify_all();
  }
};

class Worker {
 public:
  explicit Worker(Shared* shared) : shared_(shared), cache_(shared->db) {}

  void Run() {
    const size_t batch_ops = shared_->config.batch_ops;
    for (;;) {
      size_t index = 0;
      {
        std::unique_lock<std::mutex> lock(shared_->mu);
        shared_->taken_cv.wait(lock, [this] {
          return shared_->Stopping() ||
                 shared_->taken < shared_->prefix + shared_->window;
        });
        if (shared_->Stopping()) return;
        if (!shared_->source->Next(batch_ops, &chunk_)) {
          tally::Status s = shared_->source->status();
          if (!s.ok()) {
            shared_->SetFatalLocked(std::move(s), chunk_.first_line,
                                    chunk_.first_line);
          }
          return;
        }
        index = shared_->taken++;
      }
      done_ = Finished{};
      done_.first_line = chunk_.first_line;
      done_.last_line = chunk_.last_line();
      done_.end_offset = chunk_.end_offset;
      tally::Status fatal;
      size_t fatal_first = 0;
      size_t fatal_last = 0;
      const bool ok = ProcessChunk(&fatal, &fatal_first, &fatal_last);
      std::sort(done_.rejections.begin(), done_.rejections.end(),
                [](const Rejection& a, const Rejection& b) {
                  return a.line < b.line;
                });
      std::lock_guard<std::mutex> lock(shared_->mu);
      if (!ok) {
        shared_->SetFatalLocked(std::move(fatal), fatal_first, fatal_last);
        // Part of the chunk is committed (lines before the failed one,
        // applied one at a time): it is reported as far as that.
        if (done_.partial) shared_->FinishLocked(index, std::move(done_));
        return;
      }
      shared_->FinishLocked(index, std::move(done_));
    }
  }

 private:
  // Line i of the chunk's input line number.
  size_t LineOf(size_t i) const { return chunk_.first_line + i; }

  // Returns false when the run must stop (a database failure), with the
  // failure and the lines in flight.
  bool ProcessChunk(tally::Status* fatal, size_t* first, size_t* last) {
    batch_.Clear();
    batch_lines_.clear();
    for (size_t i = 0; i < chunk_.lines.size(); ++i) {
      if (chunk_.lines[i].too_long) {
        ++done_.counts.lines;
        Reject(LineOf(i), "line is longer than " +
                              std::to_string(kMaxApplyLineBytes) + " bytes");
        continue;
      }
      const std::string_view line = chunk_.Text(i);
      if (IsBlankLine(line)) continue;
      ++done_.counts.lines;
      if (!ParseApplyLine(line, &event_, &reason_)) {
        Reject(LineOf(i), std::move(reason_));
        continue;
      }
      const tally::CounterInfo* info = nullptr;
      tally::Status s = cache_.Lookup(event_.counter, &info);
      if (!s.ok()) {
        if (!IsLineError(s)) {
          // Nothing of the chunk was written.
          *fatal = std::move(s);
          *first = *last = LineOf(i);
          return false;
        }
        Reject(LineOf(i), s.IsNotFound() ? "unknown counter \"" +
                                               Printable(event_.counter) + "\""
                                         : s.ToString());
        continue;
      }
      if (info->keyed != !event_.key.empty()) {
        // The engine would refuse the whole batch for this one op.
        Reject(LineOf(i), info->keyed
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
        Reject(LineOf(i),
               "counter \"" + Printable(event_.counter) +
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
      batch_lines_.push_back(LineOf(i));
    }
    if (batch_.empty()) return true;
    return Submit(fatal, first, last);
  }

  bool Submit(tally::Status* fatal, size_t* first, size_t* last) {
    tally::Status s = shared_->db->Apply(batch_, &results_);
    if (s.ok()) {
      if (results_.size() != batch_.size()) {
        *fatal = tally::Status::Corruption(
            "Db::Apply returned " + std::to_string(results_.size()) +
            " results for " + std::to_string(batch_.size()) + " operations");
        *first = chunk_.first_line;
        *last = chunk_.last_line();
        return false;
      }
      for (size_t k = 0; k < results_.size(); ++k) {
        Count(results_[k], batch_lines_[k]);
      }
      return true;
    }
    if (!IsLineError(s)) {
      *fatal = std::move(s);
      *first = chunk_.first_line;
      *last = chunk_.last_line();
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
        *fatal = r.status();
        *first = *last = batch_lines_[k];
        DoneBefore(batch_lines_[k]);
        return false;
      }
    }
    return true;
  }

  // The run failed at `line` while the chunk went one operation at a time:
  // every line before it is done (committed or rejected), none after it
  // was written. Keeps the chunk's figures for those lines only, so they
  // and committed_through describe the same lines.
  void DoneBefore(size_t line) {
    done_.partial = true;
    done_.last_line = line - 1;
    std::vector<Rejection>& rejections = done_.rejections;
    const auto after = std::remove_if(
        rejections.begin(), rejections.end(),
        [line](const Rejection& r) { return r.line >= line; });
    done_.counts.rejected -= static_cast<uint64_t>(rejections.end() - after);
    rejections.erase(after, rejections.end());
    uint64_t lines = 0;
    for (size_t i = 0; LineOf(i) < line; ++i) {
      lines += chunk_.lines[i].too_long || !IsBlankLine(chunk_.Text(i));
    }
    done_.counts.lines = lines;
  }

  // `line`: the input line of the op.
  void Count(const tally::IncrementResult& r, size_t line) {
    ApplyReport& counts = done_.counts;
    switch (r.outcome) {
      case tally::Outcome::kApplied:
        ++counts.applied;
        break;
      case tally::Outcome::kDuplicate:
        ++counts.duplicates;
        break;
      case tally::Outcome::kConflict:
        ++counts.conflicts;
        break;
      case tally::Outcome::kOutsideWindow:
        ++counts.outside_window;
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
    ++done_.counts.rejected;
    done_.rejections.push_back(Rejection{line, std::move(reason)});
  }

  Shared* const shared_;
  CounterCache cache_;
  // Reused across chunks so their buffers are allocated once.
  Chunk chunk_;
  Finished done_;  // the current chunk's outcome
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
}

ApplyReport ApplyLines(tally::Db* db, ApplySource* source,
                       const ApplyConfig& config) {
  Shared shared(db, source, config);
  const size_t threads = std::max<size_t>(1, config.threads);
  // Drawn only when stderr is a terminal; then the workers always run on
  // their own threads and this one redraws the line until they finish.
  Progress progress("apply", "bytes", source->total_bytes());
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
      {
        // Under mu: no rejection is printed while the line is drawn.
        std::lock_guard<std::mutex> lock(shared.mu);
        progress.Update(shared.committed_bytes.load());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::thread& t : pool) t.join();
  }
  progress.Finish();
  // What finished past a failed chunk (other workers' whole batches).
  for (auto& [index, f] : shared.waiting) {
    shared.Merge(f);
    auto& after = shared.report.committed_after;
    if (!after.empty() && after.back().second + 1 == f.first_line) {
      after.back().second = f.last_line;
    } else {
      after.emplace_back(f.first_line, f.last_line);
    }
  }
  ApplyReport report = std::move(shared.report);
  report.committed_through = shared.committed_line;
  report.stopped = report.fatal.ok() && !source->exhausted();
  return report;
}

}  // namespace counterctl
