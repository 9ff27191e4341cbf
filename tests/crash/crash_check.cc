#include "crash/crash_check.h"

#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "crash/child_process.h"
#include "crash/op_checks.h"
#include "crash/workload.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "engine/rocksdb_options.h"
#include "schema/records.h"
#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/checkpoint.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/exported.h"
#include "testutil/power_cut_fs.h"
#include "testutil/raw_db.h"

namespace tally::crash {
namespace {

// The log of the WAL syncs of a sync writer's cycle (PowerCutFs).
std::string SyncLog(const CrashConfig& c, int cycle) {
  return c.dir + "/syncs-" + std::to_string(cycle) + ".log";
}

// Starts the writer with its stdout on a pipe; returns its pid.
pid_t StartWriter(const CrashConfig& c, const std::string& db,
                  const std::string& log, int cycle, int* out_fd) {
  std::vector<std::string> argv = {c.writer, db, std::to_string(c.seed + cycle),
                                   log};
  if (c.sync) {
    argv.push_back("--sync");
    argv.push_back(SyncLog(c, cycle));
  }
  return StartChild(argv, out_fd);
}

// Models a power cut on the sync writer's database `db`, killed in `cycle`:
// replaces it by a copy whose WALs are cut to their last logged sync
// (PowerCutFs). Adds the bytes cut off to *cut_bytes; "" or the error.
std::string PowerCut(const CrashConfig& c, const std::string& db, int cycle,
                     uint64_t* cut_bytes) {
  namespace fs = std::filesystem;
  const test::SyncedSizes synced = test::ReadSyncLog(SyncLog(c, cycle));
  std::error_code ec;
  for (const auto& [wal, size] : synced) {
    const uintmax_t now = fs::file_size(wal, ec);
    if (!ec && now > size) *cut_bytes += now - size;
  }
  const std::string cut = db + ".cut";
  std::string error;
  fs::remove_all(cut, ec);
  if (!test::CopyAfterPowerCut(db, cut, synced, &error)) return error;
  fs::remove_all(db, ec);
  if (!ec) fs::rename(cut, db, ec);
  return ec ? "replace the database: " + ec.message() : "";
}

// A read-only Db beside the live writer (issue 12, item 1): refreshes and
// runs Verify in a loop until stopped; every finding is a violation. Busy
// (the writer deleted logs during each attempt to reach one point) is not:
// it is the documented refusal, and the next round tries again. A writer
// that flushes every few milliseconds can make every round Busy (seen under
// TSAN), so the points counted live may be none; Finish() then asks for one
// last round with the writer stopped (SIGSTOP) mid-work, where nothing
// moves under the reader: that round must reach a point and verify it, so
// every cycle checks at least one point beside an unfinished writer.
class BesideReader {
 public:
  explicit BesideReader(const std::string& path)
      : thread_([this, path] { Run(path); }) {}
  ~BesideReader() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // With the writer stopped: one last open or refresh and verify, which
  // must succeed (Busy is a violation: no log can go), then Stop().
  void Finish() {
    final_ = true;
    Stop();
  }
  // After Stop().
  const std::vector<std::string>& problems() const { return problems_; }
  uint64_t points() const { return points_; }
  uint64_t final_points() const { return final_points_; }

 private:
  void Run(const std::string& path) {
    Options o;
    o.read_only = true;
    std::unique_ptr<Db> db;
    bool last = false;  // this attempt began with the writer stopped
    while (db == nullptr) {
      const bool stopping = stop_;  // stop_ first: Finish() sets final_ first
      last = final_;
      if (stopping && !last) return;
      Status s = Db::Open(o, path, &db);
      if (s.ok()) break;
      // Not yet created, or no header yet: the writer has only started.
      if ((!s.IsNotFound() && !s.IsBusy() && !s.IsInvalidArgument()) || last) {
        problems_.push_back(std::string(last ? "with the writer stopped, " : "") +
                            "read-only open: " + s.ToString());
        return;
      }
    }
    // An open with the writer stopped is that last point: no refresh.
    for (bool refresh = !last;; refresh = true) {
      if (refresh) {
        const bool stopping = stop_;
        last = final_;
        if (stopping && !last) return;
      }
      Status s = refresh ? db->Refresh() : Status::OK();
      if (s.IsBusy() && !last) continue;
      VerifyReport report;
      if (s.ok()) s = tally::Verify(*db, &report);
      if (s.IsBusy() && !last) continue;
      if (!s.ok()) {
        problems_.push_back(std::string(last ? "with the writer stopped, " : "") +
                            "read-only refresh/verify: " + s.ToString());
        return;
      }
      ++(last ? final_points_ : points_);
      if (!report.ok()) {
        problems_.push_back("read-only verify beside the writer: " +
                            report.problems.front());
        return;
      }
      if (last) return;
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<bool> final_{false};  // set before stop_ by Finish()
  std::vector<std::string> problems_;  // written by the thread only
  uint64_t points_ = 0;                // likewise
  uint64_t final_points_ = 0;          // likewise
  std::thread thread_;                 // last: starts after the fields
};

// Marker delta sums per (counter id, key); the key is empty for a named
// counter.
using MarkerSumMap = std::map<std::pair<uint64_t, std::string>, int64_t>;

// A fixed time for the copy that checks holds ran out (CheckSeats).
class LaterClock : public Clock {
 public:
  explicit LaterClock(int64_t ms) : ms_(ms) {}
  int64_t NowMillis() const override { return ms_; }

 private:
  int64_t ms_;
};

class Checker : public CheckSink {
 public:
  Checker(const CrashConfig& config, CrashReport* report)
      : config_(config), report_(report) {}

  void Violation(const std::string& what) override {
    report_->violations.push_back("cycle " + std::to_string(cycle_) + ": " +
                                  what);
  }
  void Pass() override { ++report_->checks; }
  void Acknowledged() override { ++report_->acknowledged; }

  // Sums every marker's delta per counter id and key (empty for a named
  // counter), straight from RocksDB.
  bool MarkerSums(const std::string& path, MarkerSumMap* sums) {
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
      std::string_view key, event;
      if (!schema::DecodeMarker(it->value().ToStringView(), &m).ok() ||
          !engine::DecodeAnyMarkerKey(it->key().ToStringView(), &id, &key,
                                      &event) ||
          id != m.counter_id || event != m.event_id) {
        Violation("marker " + engine::HexKey(it->key().ToStringView()) +
                  " does not decode or disagrees with its key");
        ok = false;
        continue;
      }
      (*sums)[{id, std::string(key)}] += m.delta;
    }
    if (!it->status().ok()) {
      Violation("marker scan: " + it->status().ToString());
      ok = false;
    }
    return ok;
  }

  // Checks the acknowledged log lines from byte `from` on; returns the
  // offset checked up to (only whole lines). Batches whose intent has no
  // acknowledgement were in flight at the kill: ResolveInFlight.
  size_t CheckAcks(Db* db, const std::string& log, size_t from) {
    std::ifstream in(log, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    std::string line;
    size_t offset = from;
    std::map<std::string, std::string> intents;  // batch id -> its ops
    acked_once_.clear();
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
      if (kind == "S" || kind == "N") {
        CheckStrictAck(db, kind, &fields, line);
        continue;
      }
      if (kind == "I" || kind == "R") {
        CheckSeatAck(db, kind, &fields, line);
        continue;
      }
      if (kind == "g" || kind == "G") {
        if (kind == "g") gauge_.Intent(&fields, line, this);
        if (kind == "G") gauge_.Ack(db, &fields, line, this);
        continue;
      }
      if (kind == "C") {
        CheckClaimAck(db, &fields, line, this);
        continue;
      }
      if (kind == "B" || kind == "A") {
        std::string id, ops;
        fields >> id;
        std::getline(fields, ops);
        if (kind == "B") {
          intents[id] = ops;
        } else if (intents.erase(id) != 1) {
          Violation("ack log: batch " + id + " acknowledged without intent");
        }
        continue;
      }
      std::string counter, key, event;
      int64_t delta = 0;
      fields >> counter;
      if (kind == "K" || kind == "Q") fields >> key;
      if (kind != "Q") fields >> event;
      fields >> delta;
      if ((kind != "O" && kind != "K" && kind != "Q") || fields.fail()) {
        Violation("ack log: malformed line '" + line + "'");
        continue;
      }
      ++report_->acknowledged;
      if (kind == "Q") {
        acked_keyed_plain_[key] += delta;
        acked_keyed_plain_total_ += delta;
        continue;
      }
      const std::string what =
          counter + "/" + (key.empty() ? "" : key + "/") + event;
      auto marker = db->GetMarker({counter, key}, event);
      if (!marker.ok()) {
        Violation("acknowledged " + what +
                  " lost: " + marker.status().ToString());
      } else if (marker->delta != delta) {
        Violation("acknowledged " + what + " delta " + std::to_string(delta) +
                  " but marker holds " + std::to_string(marker->delta));
      } else {
        acked_once_.push_back({counter, key, event, delta});
        Pass();
      }
    }
    for (const auto& [id, ops] : intents) ResolveInFlight(db, id, ops);
    return offset;
  }

  // A strict once-increment's acknowledged answer ("S"), asked again: the
  // event is answered as it was (kDuplicate with the value it left for an
  // applied one, kRefused with the value that refused it), whatever the
  // value is now. A take batched with its order and refused ("N") left no
  // marker in either counter.
  void CheckStrictAck(Db* db, const std::string& kind,
                      std::istringstream* fields, const std::string& line) {
    std::string key, event, outcome;
    int64_t delta = 0, value = 0;
    *fields >> key >> event;
    if (kind == "S") *fields >> delta >> outcome >> value;
    if (fields->fail()) {
      Violation("ack log: malformed line '" + line + "'");
      return;
    }
    ++report_->acknowledged;
    const std::string what = std::string(kStrictCounter) + "/" + key + "/" +
                             event;
    if (kind == "N") {
      const bool stock = db->GetMarker({kStrictCounter, key}, event)
                             .status()
                             .IsNotFound();
      const bool order = db->GetMarker("orders", event).status().IsNotFound();
      if (!stock || !order) {
        Violation("refused batch " + what + " left a marker");
      } else {
        Pass();
      }
      return;
    }
    auto again = db->IncrementOnce({kStrictCounter, key}, event, delta);
    const char* want = outcome == OutcomeName(Outcome::kRefused)
                           ? OutcomeName(Outcome::kRefused)
                           : OutcomeName(Outcome::kDuplicate);
    if (!again.ok() || OutcomeName(again->outcome) != std::string(want) ||
        again->value != value) {
      Violation("acknowledged " + what + " (" + outcome + ", value " +
                std::to_string(value) + ") answered " +
                (again.ok() ? std::string(OutcomeName(again->outcome)) +
                                  ", value " + std::to_string(again->value)
                            : again.status().ToString()));
    } else {
      Pass();
    }
  }

  // A reservation's intent ("I": every reservation made has one, since it
  // is written before the Reserve) or an acknowledged answer ("R"), whose
  // call (Reserve, CommitReservation or ReleaseReservation) asked again
  // gets its answer: `duplicate` for an applied one and for any Reserve,
  // else the same outcome, with the same units; a decided state (committed,
  // released, refused, expired) is still the stored one and the answer's, with
  // the same end; a held one may have been decided since (its later calls are
  // checked by their own lines).
  void CheckSeatAck(Db* db, const std::string& kind,
                    std::istringstream* fields, const std::string& line) {
    std::string key, id, call, outcome, state;
    int64_t units = 0, ends = 0;
    *fields >> key >> id;
    if (kind == "R") *fields >> call >> outcome >> state >> units >> ends;
    if (fields->fail()) {
      Violation("ack log: malformed line '" + line + "'");
      return;
    }
    if (kind == "I") {
      seat_intents_[key].insert(id);
      return;
    }
    ++report_->acknowledged;
    const CounterRef ref(kSeatCounter, key);
    auto stored = db->GetReservation(ref, id);
    auto again = call == "commit"    ? db->CommitReservation(ref, id)
                 : call == "release" ? db->ReleaseReservation(ref, id)
                                     : db->Reserve(ref, id, 1, kSeatHoldMs);
    // A Reserve asked again is a duplicate, a refused one too (db.h).
    const std::string want =
        outcome == OutcomeName(Outcome::kApplied) || call == "reserve"
            ? OutcomeName(Outcome::kDuplicate)
            : outcome;
    const bool decided = state != HoldStateName(HoldState::kHeld);
    const bool same = stored.ok() && again.ok() &&
                      OutcomeName(again->outcome) == want &&
                      again->units == units &&
                      (!decided || (HoldStateName(stored->state) == state &&
                                    HoldStateName(again->state) == state &&
                                    again->expires_at_ms == ends));
    if (!same) {
      Violation("acknowledged " + std::string(kSeatCounter) + "/" + key + "/" +
                id + " " + call + " (" + outcome + ", " + state + ") is now " +
                (stored.ok() ? HoldStateName(stored->state)
                             : stored.status().ToString()) +
                ", and asked again answers " +
                (again.ok() ? std::string(OutcomeName(again->outcome)) + " " +
                                  HoldStateName(again->state) + " ends " +
                                  std::to_string(again->expires_at_ms)
                            : again.status().ToString()));
    } else {
      Pass();
    }
  }

  // "seats": every key's value is at least 0 and equals its fills' marker
  // sum less its committed reservations (1 unit each), and what is
  // available (the value less the units held) is at least 0. Then, on a
  // checkpoint opened kSeatHoldMs later by its clock, no reservation holds
  // anything: none outlives its hold, whatever the kills did.
  void CheckSeats(Db* db, const std::string& path, uint64_t seats_id,
                  const MarkerSumMap& sums) {
    std::map<std::string, int64_t> committed;
    for (const auto& [key, ids] : seat_intents_) {
      for (const std::string& id : ids) {
        auto r = db->GetReservation({kSeatCounter, key}, id);
        if (r.ok() && r->state == HoldState::kCommitted) ++committed[key];
        if (!r.ok() && !r.status().IsNotFound()) {
          Violation("reservation " + key + "/" + id + ": " +
                    r.status().ToString());
        }
      }
    }
    for (int k = 0; k < kSeatKeys; ++k) {
      const std::string key = "seat-" + std::to_string(k);
      auto held = db->ReadHeld({kSeatCounter, key});
      auto fills = sums.find({seats_id, key});
      const int64_t filled = fills == sums.end() ? 0 : fills->second;
      if (!held.ok() || held->value < 0 || held->available < 0 ||
          held->value != filled - committed[key]) {
        Violation(std::string(kSeatCounter) + " key " + key + ": " +
                  (held.ok() ? "value " + std::to_string(held->value) +
                                   ", available " +
                                   std::to_string(held->available) +
                                   ", fills " + std::to_string(filled) +
                                   ", committed " +
                                   std::to_string(committed[key])
                             : held.status().ToString()));
        continue;
      }
      Pass();
    }
    const std::string copy = path + ".seats";
    std::error_code ec;
    std::filesystem::remove_all(copy, ec);
    Status s = Checkpoint(*db, copy);
    if (!s.ok()) {
      Violation("seats checkpoint: " + s.ToString());
      return;
    }
    {
      const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      LaterClock later(now + kSeatHoldMs + 1);
      Options o;
      o.clock = &later;
      std::unique_ptr<Db> at;
      s = Db::Open(o, copy, &at);
      if (!s.ok()) {
        Violation("seats checkpoint open: " + s.ToString());
        return;
      }
      for (int k = 0; k < kSeatKeys; ++k) {
        const std::string key = "seat-" + std::to_string(k);
        auto held = at->ReadHeld({kSeatCounter, key});
        if (!held.ok() || held->held != 0 || held->available != held->value) {
          Violation(std::string(kSeatCounter) + " key " + key + ": " +
                    (held.ok() ? std::to_string(held->held) +
                                     " units still held past every hold's end"
                               : held.status().ToString()));
        } else {
          Pass();
        }
      }
    }
    std::filesystem::remove_all(copy, ec);
  }

  // The strict counter: every key's value is at least 0 and equals its
  // markers' delta sum (takes and restocks are all once-increments; a
  // refused take's marker counts 0): the takes accepted are exactly the
  // stock consumed.
  void CheckStrict(Db* db, uint64_t stock_id, const MarkerSumMap& sums) {
    std::vector<KeyValue> keys;
    if (!AllKeys(db, kStrictCounter, &keys)) return;
    for (const KeyValue& kv : keys) {
      auto found = sums.find({stock_id, kv.key});
      const int64_t markers = found == sums.end() ? 0 : found->second;
      if (kv.value < 0 || kv.value != markers) {
        Violation(std::string(kStrictCounter) + " key " + kv.key + ": value " +
                  std::to_string(kv.value) + ", marker delta sum " +
                  std::to_string(markers));
        return;
      }
      Pass();
    }
  }

  // A batch across keys the kill caught before it was acknowledged: all of
  // its once-increments (event id `id`, fresh) have their markers, and then
  // its plain deltas count as acknowledged, or none of them has one.
  void ResolveInFlight(Db* db, const std::string& id, const std::string& ops) {
    struct Op {
      bool once;
      std::string counter, key;
      int64_t delta;
    };
    std::vector<Op> parsed;
    std::istringstream tokens(ops);
    std::string token;
    while (tokens >> token) {
      std::istringstream parts(token);
      Op op;
      std::string type, delta;
      std::getline(parts, type, ':');
      std::getline(parts, op.counter, ':');
      std::getline(parts, op.key, ':');
      std::getline(parts, delta);
      op.once = type == "o";
      op.delta = std::strtoll(delta.c_str(), nullptr, 10);
      if ((type != "o" && type != "p") || parts.fail() || op.delta <= 0) {
        Violation("ack log: malformed op '" + token + "' of batch " + id);
        return;
      }
      parsed.push_back(std::move(op));
    }
    size_t once = 0, present = 0;
    for (const Op& op : parsed) {
      if (!op.once) continue;
      ++once;
      auto marker = db->GetMarker({op.counter, op.key}, id);
      if (marker.ok() && marker->delta == op.delta) {
        ++present;
      } else if (!marker.status().IsNotFound()) {
        Violation("in-flight batch " + id + ": " + op.counter + "/" + op.key +
                  (marker.ok() ? " holds another delta"
                               : ": " + marker.status().ToString()));
        return;
      }
    }
    ++report_->in_flight_batches;
    if (once == 0 || (present != 0 && present != once)) {
      Violation("in-flight batch " + id + ": " + std::to_string(present) +
                " of " + std::to_string(once) +
                " once-increments applied (a batch is all or nothing)");
      return;
    }
    Pass();
    if (present == 0) return;
    ++report_->in_flight_applied;
    for (const Op& op : parsed) {
      if (op.once) continue;
      if (op.key.empty()) {
        acked_plain_ += op.delta;
      } else {
        acked_keyed_plain_[op.key] += op.delta;
        acked_keyed_plain_total_ += op.delta;
      }
    }
  }

  // Every key of keyed counter `name` in key order (ListKeys, paged).
  bool AllKeys(Db* db, const char* name, std::vector<KeyValue>* out) {
    Status s = ListAllKeys(db, name, out);
    if (!s.ok()) {
      Violation(std::string(name) + ": list keys: " + s.ToString());
    }
    return s.ok();
  }

  // The keyed counters (issue 15), after CheckAcks: every key of "likes"
  // equals its markers' delta sum, by ListKeys and by ReadKeys (one MultiGet
  // per 1024 keys); every key of "pageviews" holds at least its
  // acknowledged deltas and all keys together at most what the killed
  // single calls could add; each roll-up (total and top keys) is one the
  // counter passed through and exact after a RollupNow.
  void CheckKeyed(Db* db, uint64_t likes_id, const MarkerSumMap& sums) {
    std::vector<KeyValue> likes, views;
    if (!AllKeys(db, kKeyedOnceCounter, &likes) ||
        !AllKeys(db, kKeyedPlainCounter, &views)) {
      return;
    }
    std::map<std::string, int64_t> want;  // marker sums of "likes"' keys
    for (auto it = sums.lower_bound({likes_id, ""});
         it != sums.end() && it->first.first == likes_id; ++it) {
      want[it->first.second] = it->second;
    }
    std::map<std::string, int64_t> listed;
    for (const KeyValue& kv : likes) listed[kv.key] = kv.value;
    if (listed != want) {
      auto l = listed.begin();
      auto w = want.begin();
      while (l != listed.end() && w != want.end() && *l == *w) ++l, ++w;
      // The first key whose listing and markers disagree.
      const std::string key =
          w == want.end() || (l != listed.end() && l->first < w->first)
              ? l->first
              : w->first;
      auto text = [&key](const std::map<std::string, int64_t>& m) {
        auto it = m.find(key);
        return it == m.end() ? std::string("nothing")
                             : std::to_string(it->second);
      };
      Violation(std::string(kKeyedOnceCounter) + ": key " + key + " lists " +
                text(listed) + ", its markers sum to " + text(want));
      return;
    }
    report_->keys_checked += likes.size();
    Pass();
    for (size_t from = 0; from < likes.size(); from += kMaxReadKeys) {
      std::vector<std::string_view> keys;
      for (size_t i = from; i < likes.size() && keys.size() < kMaxReadKeys;
           ++i) {
        keys.push_back(likes[i].key);
      }
      auto values = db->ReadKeys(kKeyedOnceCounter, keys);
      for (size_t i = 0; values.ok() && i < keys.size(); ++i) {
        if ((*values)[i] != likes[from + i].value) {
          values = Status::Corruption("key " + likes[from + i].key);
        }
      }
      if (!values.ok()) {
        Violation(
            std::string(kKeyedOnceCounter) +
            ": ReadKeys differs from ListKeys: " + values.status().ToString());
        return;
      }
      Pass();
    }
    int64_t views_total = 0;
    std::map<std::string, int64_t> viewed;
    for (const KeyValue& kv : views) {
      views_total += kv.value;
      viewed[kv.key] = kv.value;
    }
    for (const auto& [key, acked] : acked_keyed_plain_) {
      const auto it = viewed.find(key);
      const int64_t value = it == viewed.end() ? 0 : it->second;
      if (value < acked) {
        Violation(std::string(kKeyedPlainCounter) + "/" + key + ": value " +
                  std::to_string(value) + " below its acknowledged " +
                  std::to_string(acked));
        return;
      }
    }
    report_->keys_checked += views.size();
    const int64_t slack =
        int64_t{cycle_ + 1} * kThreads * kMaxKeyedPlainPerCall;
    if (views_total < acked_keyed_plain_total_ ||
        views_total > acked_keyed_plain_total_ + slack) {
      Violation(std::string(kKeyedPlainCounter) + ": total " +
                std::to_string(views_total) + " of " +
                std::to_string(views.size()) + " keys outside [" +
                std::to_string(acked_keyed_plain_total_) + ", " +
                std::to_string(acked_keyed_plain_total_ + slack) + "]");
      return;
    }
    Pass();
    CheckKeyedRollup(db, kKeyedOnceCounter, likes);
    CheckKeyedRollup(db, kKeyedPlainCounter, views);
  }

  // `keys`: every key of keyed counter `name` now.
  void CheckKeyedRollup(Db* db, const char* name,
                        const std::vector<KeyValue>& keys) {
    int64_t exact = 0;
    for (const KeyValue& kv : keys) exact += kv.value;
    auto cached = db->ReadCached(name);
    if (!cached.ok() || cached->value < 0 || cached->value > exact) {
      Violation(std::string(name) + ": cached total " +
                (cached.ok() ? std::to_string(cached->value)
                             : cached.status().ToString()) +
                " outside [0, exact " + std::to_string(exact) + "]");
      return;
    }
    Status r = db->RollupNow(name);
    auto fresh = db->ReadCached(name);
    auto top = db->TopKeys(name, 10);
    TopKeysOptions now;
    now.exact = true;
    auto scan = db->TopKeys(name, 10, now);
    if (!r.ok() || !fresh.ok() || fresh->value != exact || !top.ok() ||
        !scan.ok() || top->total != exact || scan->total != exact ||
        top->key_count != keys.size()) {
      Violation(std::string(name) +
                ": after a roll-up the cached total or top keys != exact");
      return;
    }
    for (size_t i = 0; i < top->keys.size() || i < scan->keys.size(); ++i) {
      if (i >= top->keys.size() || i >= scan->keys.size() ||
          top->keys[i].key != scan->keys[i].key ||
          top->keys[i].value != scan->keys[i].value) {
        Violation(std::string(name) +
                  ": top 10 of the roll-up != top 10 of a scan");
        return;
      }
    }
    Pass();
  }

  // Redelivers up to 16 once-increments this cycle acknowledged (named and
  // keyed): each is a duplicate that changes nothing.
  void CheckRedelivery(Db* db) {
    std::shuffle(acked_once_.begin(), acked_once_.end(), rng_);
    for (size_t i = 0; i < acked_once_.size() && i < 16; ++i) {
      const AckedOnce& a = acked_once_[i];
      const CounterRef ref(a.counter, a.key);
      auto before = db->ReadExact(ref);
      auto again = db->IncrementOnce(ref, a.event, a.delta);
      auto after = db->ReadExact(ref);
      if (!before.ok() || !again.ok() ||
          again->outcome != Outcome::kDuplicate || !after.ok() ||
          *after != *before) {
        Violation("redelivered " + a.counter + "/" + a.key + "/" + a.event +
                  ": " +
                  (again.ok() ? OutcomeName(again->outcome)
                              : again.status().ToString()) +
                  ", value changed or unreadable");
        return;
      }
      Pass();
    }
  }

  void CheckCycle(const std::string& path, const std::string& log) {
    MarkerSumMap marker_sums;
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
      } else if (*value != marker_sums[{info->id, ""}]) {
        Violation(std::string(name) + ": value " + std::to_string(*value) +
                  " != marker delta sum " +
                  std::to_string(marker_sums[{info->id, ""}]));
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
    // A torn last line (SIGKILL can cut a write(2) that crosses a page) is
    // a call never acknowledged: cut it off, or the next writer's first line
    // would continue it.
    std::error_code error;
    if (std::filesystem::file_size(log, error) > checked_to_ && !error) {
      std::filesystem::resize_file(log, checked_to_, error);
    }
    if (error) Violation("cut the torn ack log tail: " + error.message());
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
    auto likes = db->DescribeCounter(kKeyedOnceCounter);
    if (likes.ok() && db->DescribeCounter(kKeyedPlainCounter).ok()) {
      CheckKeyed(db.get(), likes->id, marker_sums);
    }
    auto stock = db->DescribeCounter(kStrictCounter);
    if (stock.ok()) CheckStrict(db.get(), stock->id, marker_sums);
    auto seats = db->DescribeCounter(kSeatCounter);
    if (seats.ok()) CheckSeats(db.get(), path, seats->id, marker_sums);
    gauge_.Settle(db.get(), this);
    report_->in_flight_gauge = gauge_.in_flight();
    CheckClaimsCounted(db.get(), this);
    CheckRedelivery(db.get());
  }

  void FinalCheck(const std::string& path, const std::string& log) {
    std::unique_ptr<Db> db;
    Status s = Db::Open(Options(), path, &db);
    if (!s.ok()) {
      Violation("final reopen: " + s.ToString());
      return;
    }
    acked_plain_ = 0;
    acked_keyed_plain_.clear();
    acked_keyed_plain_total_ = 0;
    const CrashReport before = *report_;
    gauge_.BeginFinal();
    CheckAcks(db.get(), log, 0);
    gauge_.CheckValues(db.get(), this);
    CheckClaimsCounted(db.get(), this);
    // The same calls and batches, checked again.
    report_->acknowledged = before.acknowledged;
    report_->in_flight_batches = before.in_flight_batches;
    report_->in_flight_applied = before.in_flight_applied;
  }

  void set_cycle(int cycle) { cycle_ = cycle; }

 private:
  const CrashConfig& config_;
  CrashReport* report_;
  struct AckedOnce {
    std::string counter, key, event;
    int64_t delta;
  };

  int cycle_ = 0;
  size_t checked_to_ = 0;
  int64_t acked_plain_ = 0;
  std::map<std::string, int64_t> acked_keyed_plain_;  // "pageviews" keys
  int64_t acked_keyed_plain_total_ = 0;
  std::vector<AckedOnce> acked_once_;  // by the last CheckAcks
  // Every reservation the writers made, by key ("I" lines, all cycles).
  std::map<std::string, std::set<std::string>> seat_intents_;
  GaugeModel gauge_;  // "gauge": each key's value, all cycles
  std::mt19937 rng_{static_cast<unsigned>(config_.seed)};
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
    const pid_t pid = StartWriter(config, db, log, cycle, &fd);
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
      int stopped = 0;
      if (progressed && ::kill(pid, SIGSTOP) == 0 &&
          ::waitpid(pid, &stopped, WUNTRACED) == pid && WIFSTOPPED(stopped)) {
        reader.Finish();  // the writer frozen mid-work, its files as they are
        if (reader.problems().empty() && reader.final_points() != 1) {
          checker.Violation("the read-only reader verified no point with the "
                            "writer stopped");
        }
      } else {
        reader.Stop();
      }
      for (const std::string& p : reader.problems()) checker.Violation(p);
      report.reader_points += reader.points();
      report.reader_stopped_points += reader.final_points();
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
    // With sync, every other kill is also a power cut: every acknowledged
    // call was synced first, so each must still hold.
    if (config.sync && cycle % 2 == 1) {
      const std::string error =
          PowerCut(config, db, cycle, &report.cut_wal_bytes);
      if (!error.empty()) {
        checker.Violation("power cut: " + error);
        break;
      }
      ++report.power_cuts;
    }
    if (config.sync) std::filesystem::remove(SyncLog(config, cycle));
    checker.CheckCycle(db, log);
    if (!report.violations.empty()) break;
  }
  if (report.violations.empty()) checker.FinalCheck(db, log);
  return report;
}

namespace {

// The import mode's keyed counters (issue 28, item 13).
constexpr char kImpKeyed[] = "imp-keyed";
constexpr char kImpStock[] = "imp-stock";
constexpr int kImpStockKeys = 6;
std::string ImpHold(int h) { return "hold-" + std::to_string(h); }

// One key of "imp-stock": a restock of 5; two reservations of 1, the first
// committed, the second held for kMaxHoldMs (a hold at the export); 10
// takes of 1 (3 accepted, 7 refused: markers answering `refused`); and on
// key 0 a reset to 2.
Status BuildStockKey(Db* db, int k) {
  const std::string key = "sku-" + std::to_string(k);
  const CounterRef ref(kImpStock, key);
  Status s = db->IncrementOnce(ref, "restock", 5).status();
  for (int h = 0; s.ok() && h < 2; ++h) {
    s = db->Reserve(ref, ImpHold(h), 1, kMaxHoldMs).status();
  }
  if (s.ok()) s = db->CommitReservation(ref, ImpHold(0)).status();
  for (int t = 0; s.ok() && t < 10; ++t) {
    s = db->IncrementOnce(ref, "take-" + std::to_string(t), -1).status();
  }
  if (s.ok() && k == 0) s = db->Reset(ref, "reset", 2).status();
  return s;
}

// "imp-keyed": 200 keys (3 shards) of once and plain increments;
// "imp-stock": a keyed strict counter (min 0) of kImpStockKeys keys, each
// built by BuildStockKey.
Status BuildKeyedSource(Db* db) {
  CounterSpec spec;
  spec.keyed = true;
  spec.shards = 3;
  Status s = db->CreateCounter(kImpKeyed, spec);
  Batch b;
  for (int i = 0; s.ok() && i < 2000; ++i) {
    const std::string key = "k-" + std::to_string(i % 200);
    b.AddOnce({kImpKeyed, key}, "e-" + std::to_string(i), i % 5 + 1);
    if (i % 3 == 0) b.Add({kImpKeyed, key}, 1);
  }
  std::vector<IncrementResult> results;
  if (s.ok()) s = db->Apply(b, &results);
  spec.shards = 1;
  spec.bounds = CounterBounds::AtLeast(0);
  if (s.ok()) s = db->CreateCounter(kImpStock, spec);
  for (int k = 0; s.ok() && k < kImpStockKeys; ++k) s = BuildStockKey(db, k);
  return s;
}

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
  if (s.ok()) s = BuildKeyedSource(db.get());
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

// "" when a named counter of the import target holds the source's value,
// shard values and marker count.
std::string SameNamed(Db* src, Db* db, const std::string& name) {
  auto want = src->ReadExact(name);
  auto want_events = src->CountMarkers(name);
  auto want_shards = src->ShardCounts(name);
  if (!want.ok() || !want_events.ok() || !want_shards.ok()) {
    return "read source: " + (!want.ok()          ? want.status()
                              : !want_events.ok() ? want_events.status()
                                                  : want_shards.status())
                                 .ToString();
  }
  auto got = db->ReadExact(name);
  auto got_events = db->CountMarkers(name);
  auto got_shards = db->ShardCounts(name);
  if (!got.ok() || *got != *want || !got_events.ok() ||
      *got_events != *want_events || !got_shards.ok() ||
      *got_shards != *want_shards) {
    return "differs from the export (value " +
           (got.ok() ? std::to_string(*got) : "?") + ", want " +
           std::to_string(*want) + ")";
  }
  return "";
}

// "" when a keyed counter of the import target holds the source's keys
// with their values and shard values, and its marker count.
std::string SameKeyed(Db* src, Db* db, const std::string& name) {
  std::vector<KeyValue> want, got;
  Status s = ListAllKeys(src, name, &want);
  if (s.ok()) s = ListAllKeys(db, name, &got);
  if (!s.ok()) return "list keys: " + s.ToString();
  bool same = want.size() == got.size();
  for (size_t i = 0; same && i < want.size(); ++i) {
    auto want_shards = src->ShardCounts({name, want[i].key});
    auto got_shards = db->ShardCounts({name, got[i].key});
    same = want[i].key == got[i].key && want[i].value == got[i].value &&
           want_shards.ok() && got_shards.ok() && *want_shards == *got_shards;
  }
  auto want_events = src->CountMarkers({name, ""});
  auto got_events = db->CountMarkers({name, ""});
  if (!same || !want_events.ok() || !got_events.ok() ||
      *want_events != *got_events) {
    auto count = [](const Result<uint64_t>& r) {
      return r.ok() ? std::to_string(*r) : r.status().ToString();
    };
    return "differs from the export (" + std::to_string(got.size()) +
           " keys, want " + std::to_string(want.size()) + "; " +
           count(got_events) + " markers, want " + count(want_events) + ")";
  }
  return "";
}

// "" when the source's marker `m` of `ref`, asked again of the import
// target, gets the source's answer: a reset `duplicate` with the value it
// set and the delta it took, a strict event its answer (`refused` with the
// value that refused it, or `duplicate` with the value it left), another
// event `duplicate`; the value does not move.
std::string AskImportedAgain(Db* db, const CounterRef& ref,
                             const MarkerInfo& m) {
  auto before = db->ReadExact(ref);
  auto again = m.reset ? db->Reset(ref, m.event_id, m.value)
                       : db->IncrementOnce(ref, m.event_id,
                                           m.strict ? m.asked : m.delta);
  auto after = db->ReadExact(ref);
  const Outcome want = m.refused ? Outcome::kRefused : Outcome::kDuplicate;
  if (again.ok() && again->outcome == want && again->value == m.value &&
      (m.refused || again->applied == m.delta) && before.ok() && after.ok() &&
      *before == *after) {
    return "";
  }
  return "event " + std::string(ref.key) + "/" + m.event_id + " answered " +
         (again.ok() ? std::string(OutcomeName(again->outcome)) + " value " +
                           std::to_string(again->value)
                     : again.status().ToString()) +
         ", the source's answer " + (m.refused ? "refused" : "duplicate") +
         " value " + std::to_string(m.value);
}

// "" when the import target answers the source's events as the source does
// (every event of a strict counter, the first of another) and, for
// "imp-stock", holds none of the source's reservations (reservations are
// not exported: docs/counterctl.md) while its values are the source's.
std::string SameAnswers(Db* src, Db* db, const CounterInfo& c) {
  std::vector<KeyValue> keys;
  if (c.keyed) {
    Status s = ListAllKeys(src, c.name, &keys);
    if (!s.ok()) return "list source keys: " + s.ToString();
  } else {
    keys.push_back({});
  }
  const bool every = c.bounds.any();
  for (size_t k = 0; k < keys.size() && (every || k == 0); ++k) {
    const CounterRef ref(c.name, keys[k].key);
    std::vector<MarkerInfo> markers;
    ListMarkersOptions first;
    first.limit = 1;
    auto one = src->ListMarkers(ref, first);
    Status s = every ? test::ReadExportedMarkers(src, ref, 1000, &markers)
                     : one.status();
    if (!s.ok()) return "read source markers: " + s.ToString();
    if (!every) markers = *one;
    for (const MarkerInfo& m : markers) {
      const std::string problem = AskImportedAgain(db, ref, m);
      if (!problem.empty()) return problem;
    }
    if (c.name != kImpStock) continue;
    auto held = db->ReadHeld(ref);
    auto source = src->ReadHeld(ref);
    if (!held.ok() || !source.ok() || held->held != 0 ||
        held->value != source->value || source->held != 1 ||
        !db->GetReservation(ref, ImpHold(1)).status().IsNotFound()) {
      return "key " + keys[k].key + ": holds " +
             (held.ok() ? std::to_string(held->held) + " of value " +
                              std::to_string(held->value)
                        : held.status().ToString()) +
             " where the source holds " +
             (source.ok() ? std::to_string(source->held) + " of value " +
                                std::to_string(source->value)
                          : source.status().ToString()) +
             " (holds are not imported)";
    }
  }
  return "";
}

// "" when counter `c` of the import target is the source's: its contents
// and its answers.
std::string CheckImported(Db* src, Db* db, const CounterInfo& c) {
  const std::string problem =
      c.keyed ? SameKeyed(src, db, c.name) : SameNamed(src, db, c.name);
  return problem.empty() ? SameAnswers(src, db, c) : problem;
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
  auto listed = src->ListCounters();
  if (!listed.ok()) {
    violation(0, "list source: " + listed.status().ToString());
    return report;
  }
  const std::vector<CounterInfo> counters = *listed;
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
      const std::string problem = CheckImported(src.get(), db.get(), c);
      if (!problem.empty()) {
        violation(cycle, c.name + ": " + problem);
        continue;
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
