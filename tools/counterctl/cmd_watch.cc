// watch [--interval DURATION] [--count N] [--top N] [--json]: a live view of
// a database an app is writing, one frame per interval, like `top` or
// `redis-cli --stat` (`top` here is a keyed counter's top keys).
//
// One read-only instance for the whole run: the database is opened once
// (OpenMode::kRead with the reads below) and each later frame starts with
// Db::Refresh(), which catches that instance up with the writer instead of
// opening the database again. A Refresh that returns Busy (the writer
// deleted logs during each attempt) is named in its frame, which shows the
// previous point without changes, and is tried again at the next frame;
// any other error ends the run (exit 1). A frame then shows
// (docs/counterctl.md, "watch"):
//  - the time (UTC), the writer's state (live, closed, gone or none, from
//    tally::GetStats' origin) and the age of the figures it last published;
//  - increments/s and duplicates/s: the change of the writer's published
//    `applied` and `duplicates` between its two latest publications this
//    run saw, over the time between them (their as_of times, not the
//    frames': a frame shorter than the writer's publish interval would
//    otherwise alternate between 0 and a multiple of the rate). "-" on the
//    first frame, after the writer changed (another pid or start), and
//    while no writer is live (a closed or gone writer writes nothing);
//  - the busiest counters: each watched counter's change since the previous
//    frame over the time between the two frames (signed: a stock going down
//    is busy too), the N with the largest change first, with their values
//    now. A keyed counter's value is its roll-up's total (Db::TopKeys: one
//    read, no scan of its keys), so its change moves in steps as the writer
//    rolls it up; a keyed counter never rolled up has no value to show. On
//    the first frame (and for a counter new since the previous one) there
//    is no change yet: "-", ranked after the others by value (equal
//    changes, as on an idle database, also rank by value);
//  - for each keyed counter among them, its N keys with the largest values
//    as its last roll-up listed them (not the keys that changed most: that
//    would take a scan of every key each frame), with the roll-up's age;
//  - roll-up lag: of the named counters whose cached total (Db::ReadCached)
//    differs from the value read now, the largest lag_ms (a counter whose
//    cached total is current but old is not behind: the writer rolls up
//    only counters that changed); and the writer's own published figures
//    (rollups_behind, rollup_lag_ms), which cover keyed counters too;
//  - pending merge operands: tally::PendingOperands summed over the watched
//    counters but keyed ones (for those it scans every key), the counter
//    with the most, and the writer's published memtable count;
//  - the outbox: entries not yet acknowledged and the oldest one's age
//    (tally::GetOutboxStatus, as `outbox status`).
//
// Cost per frame: one Refresh, then per watched counter one exact read (a
// MultiGet of its shards; a bucketed counter's buckets), one roll-up Get and
// one operand count (a lookup per shard), or for a keyed counter one Get of
// its top list; at most kMaxWatchedCounters counters, the first by name. A
// frame that takes longer than the interval is followed by the next at
// once, never by a backlog.
//
// Output: text frames; on a terminal the screen is cleared before each, else
// frames are separated by one blank line. --json: JSON Lines, one object per
// frame, flushed as each is written. SIGINT or SIGTERM ends the run after
// the frame in progress (interrupt.h) with exit 0: stopping is how a watch
// without --count ends, not a failure.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "interrupt.h"
#include "json_output.h"
#include "tally/admin.h"
#include "tally/limits.h"
#include "tally/outbox.h"

namespace counterctl {
namespace {

// --interval bounds. 100 ms: each frame refreshes the instance (a catch-up,
// or a fresh open replaying the writer's log, which beside a busy writer
// takes tens to hundreds of ms) and reads every watched counter; a writer
// publishes its figures at most every 100 ms (kMinStatsPublishIntervalMs),
// so faster frames could not show newer engine figures anyway. One hour:
// the writer's longest publish interval (kMaxStatsPublishIntervalMs); past
// that a "live" view is a cron job (`stats`, `get`), and a typo ("1d") is
// refused rather than a watch that seems hung.
constexpr int64_t kMinWatchIntervalMs = 100;
constexpr int64_t kMaxWatchIntervalMs = 3'600'000;
// --count: at most a million frames (11.5 days at 1 s); without it the
// watch runs until stopped.
constexpr uint64_t kMaxWatchFrames = 1'000'000;
// --top: how many busiest counters and keys, at most (a frame is for a
// screen; `top NAME -n N` lists up to kMaxTopKeys keys of one counter).
constexpr uint64_t kMaxWatchTop = 100;
// Counters read per frame, at most (the first by name): bounds a frame's
// cost on a database with very many counters; the frame says when there
// are more.
constexpr size_t kMaxWatchedCounters = 1000;
// How often a wait between frames looks at the stop flag: a stop ends the
// run within this long (a signal may arrive just before a sleep starts, so
// the sleep itself cannot be relied on to be cut short).
constexpr auto kStopPoll = std::chrono::milliseconds(50);

// What the database reads: values (exact reads, operand counts), roll-ups
// (cached totals, top keys) and the outbox; not markers.
constexpr uint32_t kWatchReads =
    tally::kReadValues | tally::kReadRollups | tally::kReadOutbox;

using SteadyClock = std::chrono::steady_clock;

// One watched counter as this frame read it.
struct CounterNow {
  std::string name;
  uint64_t id = 0;
  bool keyed = false;
  int64_t value = 0;
  std::optional<double> per_s;  // change since the previous frame, per second
  std::optional<tally::TopKeysResult> top;  // keyed counters: the roll-up's
};

// The writer's publication the engine rates are computed from.
struct Publication {
  uint64_t pid = 0;
  int64_t started_ms = 0;
  int64_t as_of_ms = 0;
  uint64_t applied = 0;
  uint64_t duplicates = 0;
};

// What one frame shows.
struct Frame {
  uint64_t number = 0;
  int64_t time_ms = 0;
  std::string refresh_error;  // Db::Refresh's error; the previous point shown
  tally::EngineStats engine;
  std::string writer_state;  // live, closed, gone or none
  std::optional<double> applied_per_s, duplicates_per_s;
  size_t counters = 0;  // in the catalog
  size_t watched = 0;   // read this frame (at most kMaxWatchedCounters)
  size_t not_shown = 0;  // watched but not readable (first: not_shown_first)
  std::string not_shown_first;
  std::vector<CounterNow> busiest;
  std::optional<int64_t> rollup_lag_ms;  // named counters whose roll-up is behind
  std::string rollup_lag_counter;
  uint64_t pending = 0;  // PendingOperands over the watched named counters
  uint64_t pending_max = 0;
  std::string pending_max_counter;
  tally::OutboxStatus outbox;
  int64_t took_ms = 0;
};

class Watcher {
 public:
  Watcher(tally::Db* db, int64_t interval_ms, size_t top, int64_t opened_ms)
      : db_(db), interval_ms_(interval_ms), top_(top), opened_ms_(opened_ms) {}

  // Reads one frame (refreshing first, except for the first frame: the
  // instance was just opened). Fails only on an error that a next frame
  // would meet again (the catalog unreadable, the outbox damaged); a Busy
  // refresh and a counter that cannot be read are shown in the frame.
  tally::Status Read(Frame* f) {
    f->number = ++frames_;
    const SteadyClock::time_point start = SteadyClock::now();
    if (f->number > 1) {
      tally::Status s = db_->Refresh();
      if (s.ok()) {
        ++refreshes_;
      } else if (s.IsBusy()) {
        f->refresh_error = s.ToString();
      } else {
        return s;
      }
    }
    // The point the values below are read at: rates are per second of it.
    const SteadyClock::time_point point = SteadyClock::now();
    f->time_ms = tally::Clock::System()->NowMillis();
    ReadEngine(f);
    tally::Status s = ReadCounters(point, f->refresh_error.empty(), f);
    if (!s.ok()) return s;
    tally::Result<tally::OutboxStatus> outbox = tally::GetOutboxStatus(*db_);
    if (!outbox.ok()) return outbox.status();
    f->outbox = *outbox;
    f->took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     SteadyClock::now() - start)
                     .count();
    return tally::Status::OK();
  }

  void PrintText(const Frame& f, bool terminal) const;
  void PrintJsonFrame(const Frame& f) const;

 private:
  // The writer's published figures and the rates between its publications.
  void ReadEngine(Frame* f) {
    f->engine = tally::GetStats(*db_);
    const tally::EngineStats& e = f->engine;
    const tally::StatsOrigin& o = e.origin;
    // "none": nothing published (GetStats' origin.problem says why).
    const std::string state = WriterState(o);
    f->writer_state = state.empty() ? "none" : state;
    if (o.source == tally::StatsSource::kNone) {
      last_pub_.reset();
      rates_.reset();
      return;
    }
    const Publication now{o.writer_pid, o.writer_started_ms, o.as_of_ms, e.applied,
                          e.duplicates};
    if (!last_pub_ || last_pub_->pid != now.pid ||
        last_pub_->started_ms != now.started_ms ||
        now.as_of_ms < last_pub_->as_of_ms || now.applied < last_pub_->applied ||
        now.duplicates < last_pub_->duplicates) {
      rates_.reset();  // a first look, or another writer: nothing to compare
      last_pub_ = now;
    } else if (now.as_of_ms > last_pub_->as_of_ms) {
      const double secs =
          static_cast<double>(now.as_of_ms - last_pub_->as_of_ms) / 1000.0;
      rates_ = std::make_pair(
          static_cast<double>(now.applied - last_pub_->applied) / secs,
          static_cast<double>(now.duplicates - last_pub_->duplicates) / secs);
      last_pub_ = now;
    }
    // (The same publication as the previous frame: its rates still hold.)
    if (rates_ && o.live) {
      f->applied_per_s = rates_->first;
      f->duplicates_per_s = rates_->second;
    }
  }

  // Every watched counter's value, change, roll-up and pending operands.
  // `moved`: the instance was refreshed (or just opened); after a failed
  // Refresh it still shows the previous point, so the frame has no changes
  // and the next one measures from that point.
  tally::Status ReadCounters(SteadyClock::time_point point, bool moved,
                             Frame* f) {
    tally::Result<std::vector<tally::CounterInfo>> list = db_->ListCounters();
    if (!list.ok()) return list.status();
    f->counters = list->size();
    f->watched = std::min(list->size(), kMaxWatchedCounters);
    const double secs =
        prev_point_
            ? std::chrono::duration<double>(point - *prev_point_).count()
            : 0;
    std::map<std::string, std::pair<uint64_t, int64_t>> values;  // id, value
    std::vector<CounterNow> read;
    auto not_shown = [f](const std::string& name, const tally::Status& s) {
      if (f->not_shown++ == 0) f->not_shown_first = name + ": " + s.ToString();
    };
    for (size_t i = 0; i < f->watched; ++i) {
      const tally::CounterInfo& c = (*list)[i];
      CounterNow one{c.name, c.id, c.keyed, 0, std::nullopt, std::nullopt};
      if (c.keyed) {
        // The roll-up's top list and total: one Get.
        tally::Result<tally::TopKeysResult> top = db_->TopKeys(c.name, top_);
        if (!top.ok()) {
          not_shown(c.name, top.status());
          continue;
        }
        one.value = top->total;
        one.top = std::move(*top);
      } else {
        tally::Result<int64_t> exact = db_->ReadExact(c.name);
        if (!exact.ok()) {
          not_shown(c.name, exact.status());
          continue;
        }
        one.value = *exact;
        // Behind: the cached total is not the value now (NotFound: never
        // rolled up, nothing to lag).
        tally::Result<tally::CachedValue> cached = db_->ReadCached(c.name);
        if (cached.ok() && cached->value != one.value &&
            (!f->rollup_lag_ms || cached->lag_ms > *f->rollup_lag_ms)) {
          f->rollup_lag_ms = cached->lag_ms;
          f->rollup_lag_counter = c.name;
        }
        tally::Result<uint64_t> pending = tally::PendingOperands(*db_, c.name);
        if (pending.ok()) {
          f->pending += *pending;
          if (*pending > f->pending_max) {
            f->pending_max = *pending;
            f->pending_max_counter = c.name;
          }
        }
      }
      auto prev = prev_values_.find(c.name);
      if (moved && secs > 0 && prev != prev_values_.end() &&
          prev->second.first == c.id) {
        one.per_s = static_cast<double>(one.value - prev->second.second) / secs;
      }
      values[c.name] = {c.id, one.value};
      read.push_back(std::move(one));
    }
    // The largest change first (either sign), then those without one; ties
    // (an idle database: every change 0) by the largest value, then by name.
    std::sort(read.begin(), read.end(),
              [](const CounterNow& a, const CounterNow& b) {
                if (a.per_s.has_value() != b.per_s.has_value()) {
                  return a.per_s.has_value();
                }
                if (a.per_s && std::fabs(*a.per_s) != std::fabs(*b.per_s)) {
                  return std::fabs(*a.per_s) > std::fabs(*b.per_s);
                }
                const double va = std::fabs(static_cast<double>(a.value));
                const double vb = std::fabs(static_cast<double>(b.value));
                if (va != vb) return va > vb;
                return a.name < b.name;
              });
    if (read.size() > top_) read.resize(top_);
    f->busiest = std::move(read);
    if (moved) {
      prev_values_ = std::move(values);
      prev_point_ = point;
    }
    return tally::Status::OK();
  }

  tally::Db* db_;
  const int64_t interval_ms_;
  const size_t top_;
  const int64_t opened_ms_;  // when the one instance was opened
  uint64_t frames_ = 0;
  uint64_t refreshes_ = 0;  // Refresh calls that succeeded
  std::optional<Publication> last_pub_;
  std::optional<std::pair<double, double>> rates_;  // applied/s, duplicates/s
  std::map<std::string, std::pair<uint64_t, int64_t>> prev_values_;
  std::optional<SteadyClock::time_point> prev_point_;
};

// "1 key", "2 keys".
std::string Count(uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Rate(const std::optional<double>& r) {
  if (!r) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", *r);
  return buf;
}

Json RateJson(const std::optional<double>& r) {
  // One decimal, as the text shows it.
  return r ? Json(std::round(*r * 10) / 10) : Json(nullptr);
}

void Watcher::PrintText(const Frame& f, bool terminal) const {
  std::ostringstream out;
  if (terminal) {
    out << "\x1b[H\x1b[2J";  // home, clear the screen
  } else if (f.number > 1) {
    out << "\n";  // one blank line between frames
  }
  const tally::EngineStats& e = f.engine;
  const tally::StatsOrigin& o = e.origin;
  out << "time: " << FormatUtcMillis(f.time_ms) << " (frame " << f.number
      << ", every " << interval_ms_ << " ms, took " << f.took_ms << " ms)\n"
      << "reader: opened " << FormatUtcMillis(opened_ms_) << ", refreshed "
      << Count(refreshes_, "time") << " since\n";
  if (!f.refresh_error.empty()) {
    out << "refresh: " << Printable(f.refresh_error, 400)
        << " (showing the previous point; trying again next frame)\n";
  }
  if (o.source == tally::StatsSource::kNone) {
    out << "writer: none (" << Printable(o.problem, 400) << ")\n";
  } else {
    out << "writer: " << f.writer_state << " (pid " << o.writer_pid
        << "), figures as of " << FormatUtcMillis(o.as_of_ms) << " (age "
        << o.age_ms << " ms)\n";
  }
  out << "increments/s: " << Rate(f.applied_per_s) << " (applied "
      << e.applied << ")\n"
      << "duplicates/s: " << Rate(f.duplicates_per_s) << " (duplicates "
      << e.duplicates << ")\n";
  out << "counters: " << f.counters;
  if (f.watched < f.counters) {
    out << " (watching the first " << f.watched << " by name)";
  }
  out << "\n";
  if (f.not_shown > 0) {
    out << "not shown: " << f.not_shown << " (first: "
        << Printable(f.not_shown_first, 400) << ")\n";
  }
  out << "busiest (change/s since the previous frame, value now):\n";
  // Names left-aligned, rates right-aligned.
  size_t width = 0, rate_width = 0;
  for (const CounterNow& c : f.busiest) {
    width = std::max(width, Printable(c.name).size());
    rate_width = std::max(rate_width, Rate(c.per_s).size());
  }
  for (const CounterNow& c : f.busiest) {
    const std::string name = Printable(c.name);
    const std::string rate = Rate(c.per_s);
    out << "  " << name << std::string(width - name.size(), ' ') << "  "
        << std::string(rate_width - rate.size(), ' ') << rate << "  "
        << c.value << (c.keyed ? " (keyed: roll-up total)" : "") << "\n";
  }
  for (const CounterNow& c : f.busiest) {
    if (!c.top) continue;
    const tally::TopKeysResult& t = *c.top;
    out << "largest keys of " << Printable(c.name) << " (from its roll-up as of "
        << FormatUtcMillis(t.as_of_ms) << ", lag " << t.lag_ms << " ms; "
        << Count(t.key_count, "key") << "):\n";
    size_t kw = 0;
    for (const tally::KeyValue& kv : t.keys) {
      kw = std::max(kw, Escaped(kv.key).size());
    }
    for (const tally::KeyValue& kv : t.keys) {
      const std::string key = Escaped(kv.key);
      out << "  " << key << std::string(kw - key.size(), ' ') << "  "
          << kv.value << "\n";
    }
  }
  out << "rollup lag: ";
  if (f.rollup_lag_ms) {
    out << *f.rollup_lag_ms << " ms (" << Printable(f.rollup_lag_counter)
        << ")";
  } else {
    out << "none (every cached total read is current)";
  }
  out << "; writer: " << Count(e.rollups_behind, "counter") << " behind, "
      << e.rollup_lag_ms << " ms\n";
  out << "pending operands: " << f.pending;
  if (!f.pending_max_counter.empty()) {
    out << " (most: " << Printable(f.pending_max_counter) << ", "
        << f.pending_max << ")";
  }
  out << "; writer memtable entries: " << e.pending_operands << "\n";
  out << "outbox: " << f.outbox.entries
      << (f.outbox.entries == 1 ? " entry" : " entries");
  if (f.outbox.entries > 0) {
    out << ", oldest " << FormatUtcMillis(f.outbox.oldest_time_ms) << " (age "
        << f.outbox.age_ms << " ms)";
  }
  out << "\n";
  std::cout << out.str() << std::flush;
}

void Watcher::PrintJsonFrame(const Frame& f) const {
  const tally::EngineStats& e = f.engine;
  const tally::StatsOrigin& o = e.origin;
  const bool none = o.source == tally::StatsSource::kNone;
  Json writer{{"state", f.writer_state}, {"problem", o.problem}};
  if (none) {
    for (const char* key : {"pid", "as_of_ms", "as_of", "age_ms"}) {
      writer[key] = nullptr;
    }
  } else {
    writer["pid"] = o.writer_pid;
    SetTime(&writer, "as_of", o.as_of_ms);
    writer["age_ms"] = o.age_ms;
  }
  Json busiest = Json::array();
  Json keys = Json::array();
  for (const CounterNow& c : f.busiest) {
    busiest.push_back(Json{{"name", c.name},
                           {"keyed", c.keyed},
                           {"value", c.value},
                           {"per_s", RateJson(c.per_s)}});
    if (!c.top) continue;
    Json k{{"counter", c.name},
           {"lag_ms", c.top->lag_ms},
           {"key_count", c.top->key_count},
           {"total", c.top->total},
           {"keys", KeyValuesJson(c.top->keys)}};
    SetTime(&k, "as_of", c.top->as_of_ms);
    keys.push_back(std::move(k));
  }
  Json doc{{"frame", f.number},
           {"interval_ms", interval_ms_},
           {"refreshes", refreshes_},
           {"refresh_error",
            f.refresh_error.empty() ? Json(nullptr) : Json(f.refresh_error)},
           {"took_ms", f.took_ms},
           {"writer", writer},
           {"applied", e.applied},
           {"applied_per_s", RateJson(f.applied_per_s)},
           {"duplicates", e.duplicates},
           {"duplicates_per_s", RateJson(f.duplicates_per_s)},
           {"counters", f.counters},
           {"counters_watched", f.watched},
           {"not_shown", f.not_shown},
           {"not_shown_first",
            f.not_shown ? Json(f.not_shown_first) : Json(nullptr)},
           {"busiest", busiest},
           {"keys", keys},
           {"rollup_lag_ms",
            f.rollup_lag_ms ? Json(*f.rollup_lag_ms) : Json(nullptr)},
           {"rollup_lag_counter",
            f.rollup_lag_ms ? Json(f.rollup_lag_counter) : Json(nullptr)},
           {"writer_rollups_behind", e.rollups_behind},
           {"writer_rollup_lag_ms", e.rollup_lag_ms},
           {"pending_operands", f.pending},
           {"pending_operands_max", f.pending_max},
           {"pending_operands_max_counter",
            f.pending_max_counter.empty() ? Json(nullptr)
                                          : Json(f.pending_max_counter)},
           {"writer_pending_operands", e.pending_operands},
           {"outbox_entries", f.outbox.entries},
           {"outbox_age_ms",
            f.outbox.entries ? Json(f.outbox.age_ms) : Json(nullptr)}};
  SetTime(&doc, "time", f.time_ms);
  SetTime(&doc, "opened", opened_ms_);
  SetTimeOrNull(&doc, "outbox_oldest_time", f.outbox.entries != 0,
                f.outbox.oldest_time_ms);
  PrintJson(doc);
  std::cout << std::flush;
}

// Waits until `deadline` or a stop, whichever comes first; true on a stop.
bool WaitUntil(SteadyClock::time_point deadline) {
  const std::atomic<bool>& stop = StopRequested();
  while (!stop.load()) {
    const SteadyClock::time_point now = SteadyClock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(deadline - now, kStopPoll));
  }
  return true;
}

}  // namespace

int RunWatch(const GlobalArgs& global, const WatchArgs& args) {
  std::optional<int64_t> interval = ParseDurationMs(args.interval);
  if (!interval || *interval < kMinWatchIntervalMs ||
      *interval > kMaxWatchIntervalMs) {
    return UsageError("--interval " + Printable(args.interval) +
                      ": expected a duration of 100ms..1h, such as 1s");
  }
  std::optional<uint64_t> count;  // none: until stopped
  if (!args.count.empty()) {
    count = ParseCountFlag("--count", args.count, 1, kMaxWatchFrames);
    if (!count) return kExitUsage;
  }
  std::optional<uint64_t> top =
      ParseCountFlag("--top", args.top, 1, kMaxWatchTop);
  if (!top) return kExitUsage;

  // Before the open, so a stop during it still ends the run cleanly, after
  // the first frame.
  InstallStopHandlers();
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, kWatchReads);
  if (!s.ok()) return Fail(s);
  const bool terminal = !args.json && ::isatty(STDOUT_FILENO) == 1;
  Watcher watcher(db.get(), *interval, static_cast<size_t>(*top),
                  tally::Clock::System()->NowMillis());
  SteadyClock::time_point next = SteadyClock::now();
  for (uint64_t n = 1;; ++n) {
    Frame frame;
    s = watcher.Read(&frame);
    if (!s.ok()) return Fail(s);
    if (args.json) {
      watcher.PrintJsonFrame(frame);
    } else {
      watcher.PrintText(frame, terminal);
    }
    // A reader that went away (a closed pipe, with SIGPIPE ignored): stop
    // rather than refresh forever for nobody.
    if (!std::cout) {
      PrintError("stdout: write failed; stopping");
      return kExitError;
    }
    if (count && n >= *count) break;
    // The next frame one interval after this one began; at once when this
    // one took longer (no backlog of frames is kept).
    next = std::max(next + std::chrono::milliseconds(*interval),
                    SteadyClock::now());
    if (WaitUntil(next)) break;
  }
  return kExitOk;
}

}  // namespace counterctl
