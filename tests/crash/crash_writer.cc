// The writer half of the crash test (like RocksDB's db_stress): several
// threads run a randomized, duplicate-heavy workload until the driver
// SIGKILLs the process:
//   - once-increments, single and in batches (with copies of one event inside
//     a batch), and multi-counter events (an order's count and amount);
//   - plain increments, single and in batches, and batches mixing plain and
//     once increments;
//   - roll-ups: the background worker every 5 ms, and RollupNow calls.
//   - the strict counter "stock" (issue 16): takes of 1 unit, each
//     delivered twice at once (the copy must get the first answer,
//     refusals included), restocks, and takes batched with their order
//     (refused whole when the stock is out);
//   - reservations of "seats" (issue 16): fills of 1..3 units, and
//     reservations of 1 unit (each Reserve delivered twice: the copy must
//     get the first answer), then committed, released or left to run out;
//   - resets of "gauge" (issue 28, item 13): each thread's own keys get
//     once-increments, plain increments, resets and redeliveries of its
//     earlier once-increments and resets (which must get their first
//     answer);
//   - claims (issue 28, item 13): keys claimed with a 200 ms lease, then
//     completed with their count of "jobs" in the same write, released, or
//     left to run out;
//   - keyed counters (issue 15): once-increments of "likes" keys (posts
//     picked Zipf-ish, the event id names one of a few users, so hot posts
//     see many redeliveries), plain increments of "pageviews" keys (in
//     turn), and batches across keys: 8 "likes" keys, an "orders" event,
//     6 "pageviews" keys and "views", all under one fresh event id.
// Once-counters ("orders", "revenue", "hot", "likes") only ever get
// once-increments, so their shard sum (each key's, for "likes") must equal
// their markers' delta sum; the plain counters ("views", "pageviews") only
// get plain ones.
//
// Every acknowledged result is appended to ACK_LOG (one write(2) per call's
// results;
// with --sync the database syncs every commit and the log is fdatasync'ed
// after each append):
//   O <counter> <event id> <delta>   a once-increment applied or found
//                                    already counted with this delta
//   K <counter> <key> <event id> <delta>   the same, of a keyed counter
//   P <delta>                        a plain increment of "views"
//   Q <counter> <key> <delta>        a plain increment of a keyed counter
//   A <batch id>                     the batch of that intent is applied
//   S <key> <event id> <delta> <outcome> <value>   a strict once-increment
//                                    of "stock" and its answer
//   N <key> <event id>               a take batched with its order, refused
//                                    whole at the bound
//   R <key> <reservation id> <call> <outcome> <state> <units> <expires>
//                                    a reservation call's answer (call:
//                                    reserve, commit or release)
//   G <key> <kind> <id> <arg> <outcome> <value> <applied>   a call on
//                                    "gauge" and its answer (kind: o a
//                                    once-increment of arg, p a plain one
//                                    (id -), r a reset to arg)
//   C <key> <holder> <call> <token> <answer> <claim token> <result>   a
//                                    claim call (claim, token 0; complete
//                                    or release of token) and its answer
//                                    (result - when none)
// and before each call on "gauge", its intent (not fsynced):
//   g <key> <kind> <id> <arg>
// and before each Reserve, its intent (as for batches, below):
//   I <key> <reservation id>         every reservation made is named by one
// and before each batch across keys is applied, its intent (not fsynced: a
// process kill keeps what write(2) wrote):
//   B <batch id> <op>...             op: o|p:<counter>:<key>:<delta> (key
//                                    empty for a named counter); every o
//                                    op's event id is the batch id
// It writes one byte to stdout every kReportEvery calls so the driver can
// kill it at a random point of real progress without sleeping.
//
// Usage: tally_crash_writer DB_PATH SEED ACK_LOG [--sync SYNC_LOG]
// With --sync the database runs on a PowerCutFs that appends every WAL
// creation and sync to SYNC_LOG, so the checker can model a power cut.
//
// Import mode (item 6 of issue 12: a kill during import):
//   tally_crash_writer --import SOURCE DB_PATH
// imports every counter of SOURCE (opened read-only) that DB_PATH does not
// hold, one tally::ImportCounter each, as `counterctl import --merge
// skip-existing` does, writing one byte to stdout as it starts each
// counter's import (after reading it) or skips it, and one more when all are
// imported; then waits to be killed.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crash/workload.h"
#include "engine/open_on_env.h"
#include "tally/db.h"
#include "tally/import.h"
#include "testutil/exported.h"
#include "testutil/power_cut_fs.h"

namespace {

using tally::crash::kKeyedOnceCounter;
using tally::crash::kKeyedPlainCounter;
using tally::crash::kOnceCounters;
using tally::crash::kPlainCounter;

constexpr int kReportEvery = 25;
constexpr int kEventSpace = 20000;  // small: many redeliveries

[[noreturn]] void Die(const std::string& what, const tally::Status& s) {
  std::fprintf(stderr, "crash_writer: %s: %s\n", what.c_str(),
               s.ToString().c_str());
  std::exit(2);
}

class AckLog {
 public:
  AckLog(const char* path, bool sync)
      : fd_(::open(path, O_WRONLY | O_CREAT | O_APPEND, 0600)), sync_(sync) {
    if (fd_ < 0) {
      std::perror("crash_writer: ack log");
      std::exit(2);
    }
  }
  // One append per call: O_APPEND keeps concurrent lines whole. An intent
  // (`durable` false) is not synced: only a process kill must keep it.
  void Append(const std::string& lines, bool durable = true) {
    if (lines.empty()) return;
    if (::write(fd_, lines.data(), lines.size()) !=
        static_cast<ssize_t>(lines.size())) {
      std::exit(3);
    }
    if (durable && sync_ && ::fdatasync(fd_) != 0) std::exit(3);
  }

 private:
  const int fd_;
  const bool sync_;
};

void Report() {
  static std::atomic<int> calls{0};
  if (calls.fetch_add(1) % kReportEvery == 0) {
    // A short write to a pipe is atomic; the driver only counts bytes.
    if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
  }
}

std::string OnceLine(std::string_view counter, const std::string& id,
                     int64_t delta) {
  return "O " + std::string(counter) + " " + id + " " + std::to_string(delta) +
         "\n";
}

std::string KeyedOnceLine(std::string_view counter, std::string_view key,
                          std::string_view id, int64_t delta) {
  return "K " + std::string(counter) + " " + std::string(key) + " " +
         std::string(id) + " " + std::to_string(delta) + "\n";
}

std::string StrictLine(std::string_view key, std::string_view id,
                       int64_t delta, const tally::IncrementResult& r) {
  return "S " + std::string(key) + " " + std::string(id) + " " +
         std::to_string(delta) + " " + tally::OutcomeName(r.outcome) + " " +
         std::to_string(r.value) + "\n";
}

// The answer a copy of a strict once-increment must get, after the first
// delivery got `first`.
bool SameAnswer(const tally::IncrementResult& first,
                const tally::IncrementResult& copy) {
  const tally::Outcome want = first.outcome == tally::Outcome::kApplied
                                  ? tally::Outcome::kDuplicate
                                  : first.outcome;
  return copy.outcome == want && copy.value == first.value;
}

std::string PlainLine(int64_t delta) {
  return "P " + std::to_string(delta) + "\n";
}

std::string KeyedPlainLine(std::string_view counter, std::string_view key,
                           int64_t delta) {
  return "Q " + std::string(counter) + " " + std::string(key) + " " +
         std::to_string(delta) + "\n";
}

// The acknowledged lines of one Apply's results.
std::string AckLines(const tally::Batch& batch,
                     const std::vector<tally::IncrementResult>& results) {
  std::string out;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& op = batch.ops()[i];
    if (!op.once) {
      out += op.key.empty() ? PlainLine(op.delta)
                            : KeyedPlainLine(op.counter, op.key, op.delta);
    } else if (results[i].outcome != tally::Outcome::kConflict) {
      out += op.key.empty()
                 ? OnceLine(op.counter, op.event_id, op.delta)
                 : KeyedOnceLine(op.counter, op.key, op.event_id, op.delta);
    }
  }
  return out;
}

// The intent line of a batch across keys (see the header comment).
std::string IntentLine(const std::string& id, const tally::Batch& batch) {
  std::string out = "B " + id;
  for (const auto& op : batch.ops()) {
    out += std::string(op.once ? " o:" : " p:") + op.counter + ":" + op.key +
           ":" + std::to_string(op.delta);
  }
  return out + "\n";
}

// One op on the strict counter (see the header comment).
void StrictOp(tally::Db* db, AckLog* log, std::mt19937_64& rng, uint64_t seed,
              uint64_t n) {
  using tally::crash::kStrictCounter;
  const std::string sku =
      "sku-" + std::to_string(rng() % tally::crash::kStockKeys);
  const int pick = static_cast<int>(rng() % 8);
  const bool restock = pick < 2;
  const std::string id = std::string(restock ? "restock-" : "take-") +
                         std::to_string(seed) + "-" + std::to_string(n);
  if (pick == 7) {  // a take and its order, in one write
    tally::Batch b;
    std::vector<tally::IncrementResult> results;
    b.AddOnce({kStrictCounter, sku}, id, -1);
    b.AddOnce("orders", id, 1);
    tally::Status s = db->Apply(b, &results);
    if (s.IsOutOfRange()) {
      log->Append("N " + sku + " " + id + "\n");
    } else if (!s.ok()) {
      Die("apply strict", s);
    } else {
      log->Append(AckLines(b, results));
    }
    return;
  }
  const int64_t delta = restock ? 1 + static_cast<int64_t>(rng() % 3) : -1;
  auto first = db->IncrementOnce({kStrictCounter, sku}, id, delta);
  if (!first.ok()) Die("strict once", first.status());
  auto copy = db->IncrementOnce({kStrictCounter, sku}, id, delta);
  if (!copy.ok()) Die("strict copy", copy.status());
  if (!SameAnswer(*first, *copy) || first->value < 0) {
    std::fprintf(stderr, "crash_writer: strict %s/%s: %s value %lld, then %s "
                 "value %lld\n", sku.c_str(), id.c_str(),
                 tally::OutcomeName(first->outcome),
                 static_cast<long long>(first->value),
                 tally::OutcomeName(copy->outcome),
                 static_cast<long long>(copy->value));
    std::exit(4);
  }
  log->Append(StrictLine(sku, id, delta, *first));
}

// One op on this thread's keys of "gauge" (see the header comment): a fresh
// once-increment, a plain increment, a reset, or a redelivery of one of
// `sent` (an earlier once-increment or reset of this run), which must get
// its first answer.
struct GaugeSent {
  std::string key, kind, id;
  int64_t arg;
  tally::IncrementResult first;
};
void GaugeOp(tally::Db* db, AckLog* log, std::mt19937_64& rng, uint64_t seed,
             std::vector<GaugeSent>* sent) {
  using tally::crash::kGaugeCounter;
  const int pick = static_cast<int>(rng() % 8);
  const std::string n =
      std::to_string(seed) + "-" + std::to_string(sent->size());
  GaugeSent op{"g" + std::to_string(seed % 1000) + "-" +
                   std::to_string(rng() % tally::crash::kGaugeKeysPerThread),
               pick <= 2   ? "o"
               : pick <= 4 ? "p"
                           : "r",
               "-",
               1 + static_cast<int64_t>(rng() % 5),
               {}};
  const bool again = pick == 7 && !sent->empty();
  if (again) {
    op = (*sent)[rng() % sent->size()];
  } else if (op.kind == "r") {
    op.id = "gr" + n;
    op.arg = static_cast<int64_t>(rng() % (tally::crash::kGaugeMaxReset + 1));
  } else if (op.kind == "o") {
    op.id = "go" + n;
  }
  const std::string what =
      op.key + " " + op.kind + " " + op.id + " " + std::to_string(op.arg);
  log->Append("g " + what + "\n", /*durable=*/false);
  const tally::CounterRef ref(kGaugeCounter, op.key);
  auto r = op.kind == "p"   ? db->Increment(ref, op.arg)
           : op.kind == "o" ? db->IncrementOnce(ref, op.id, op.arg)
                            : db->Reset(ref, op.id, op.arg);
  if (!r.ok()) Die("gauge " + what, r.status());
  if (again && (r->outcome != tally::Outcome::kDuplicate ||
                r->value != op.first.value || r->applied != op.first.applied)) {
    std::fprintf(stderr, "crash_writer: gauge %s asked again: %s\n",
                 what.c_str(), tally::OutcomeName(r->outcome));
    std::exit(4);
  }
  log->Append("G " + what + " " + tally::OutcomeName(r->outcome) + " " +
              std::to_string(r->value) + " " + std::to_string(r->applied) +
              "\n");
  if (!again && op.kind != "p") {
    op.first = *r;
    sent->push_back(std::move(op));
  }
}

// The ack line of a claim call: "C key holder call token answer" and the
// claim after it ("token result", "-" for no result).
std::string ClaimLine(std::string_view key, std::string_view holder,
                      std::string_view call, uint64_t token,
                      const tally::ClaimResult& r) {
  return "C " + std::string(key) + " " + std::string(holder) + " " +
         std::string(call) + " " + std::to_string(token) + " " +
         tally::ClaimAnswerName(r.answer) + " " +
         std::to_string(r.claim.token) + " " +
         (r.claim.result.empty() ? "-" : r.claim.result) + "\n";
}

// One claim (see the header comment): claimed, then completed with its
// count, released, or left to run out.
void ClaimOp(tally::Db* db, AckLog* log, std::mt19937_64& rng, uint64_t seed) {
  using tally::ClaimAnswer;
  const uint64_t window = (seed / 1000) % 1000 * (tally::crash::kJobWindow / 2);
  const std::string key =
      "job-" + std::to_string(window + rng() % tally::crash::kJobWindow);
  const std::string holder = "h" + std::to_string(seed);
  auto claim = db->Claim(key, holder, tally::crash::kJobLeaseMs);
  if (!claim.ok()) Die("claim " + key, claim.status());
  log->Append(ClaimLine(key, holder, "claim", 0, *claim));
  const int pick = static_cast<int>(rng() % 5);
  if (claim->answer != ClaimAnswer::kAcquired || pick >= 3) return;
  const uint64_t token = claim->claim.token;
  const bool complete = pick <= 1;
  auto done = complete ? db->CompleteClaim(key, token, "by-" + holder,
                                           tally::crash::JobCount(key))
                       : db->ReleaseClaim(key, token);
  if (!done.ok()) Die("complete or release " + key, done.status());
  // Its lease may have run out and another holder taken the key since.
  const bool fine =
      done->answer == ClaimAnswer::kStaleToken ||
      (complete ? done->answer == ClaimAnswer::kCompleted && !done->repeated &&
                      done->counted.size() == 1 &&
                      done->counted[0].outcome == tally::Outcome::kApplied
                : done->answer == ClaimAnswer::kReleased ||
                      done->answer == ClaimAnswer::kDone);
  if (!fine) {
    std::fprintf(stderr, "crash_writer: claim %s token %llu: %s\n", key.c_str(),
                 static_cast<unsigned long long>(token),
                 tally::ClaimAnswerName(done->answer));
    std::exit(4);
  }
  log->Append(
      ClaimLine(key, holder, complete ? "complete" : "release", token, *done));
}

// One op on "seats" (see the header comment).
void SeatOp(tally::Db* db, AckLog* log, std::mt19937_64& rng, uint64_t seed,
            uint64_t n) {
  using tally::crash::kSeatCounter;
  const std::string key =
      "seat-" + std::to_string(rng() % tally::crash::kSeatKeys);
  const int pick = static_cast<int>(rng() % 6);
  const std::string id = std::string(pick == 0 ? "fill-" : "cart-") +
                         std::to_string(seed) + "-" + std::to_string(n);
  if (pick == 0) {
    auto r = db->IncrementOnce({kSeatCounter, key}, id,
                               1 + static_cast<int64_t>(rng() % 3));
    if (!r.ok()) Die("fill seats", r.status());
    return;
  }
  auto line = [&](const char* call, const tally::ReservationResult& r) {
    return "R " + key + " " + id + " " + call + " " +
           tally::OutcomeName(r.outcome) + " " + tally::HoldStateName(r.state) +
           " " + std::to_string(r.units) + " " +
           std::to_string(r.expires_at_ms) + "\n";
  };
  log->Append("I " + key + " " + id + "\n");
  auto first = db->Reserve({kSeatCounter, key}, id, 1, tally::crash::kSeatHoldMs);
  if (!first.ok()) Die("reserve", first.status());
  auto copy = db->Reserve({kSeatCounter, key}, id, 1, tally::crash::kSeatHoldMs);
  if (!copy.ok()) Die("reserve copy", copy.status());
  // The copy: the same reservation, or one whose hold ran out since.
  const bool same = copy->outcome == tally::Outcome::kDuplicate &&
                    (copy->state == first->state ||
                     (first->state == tally::HoldState::kHeld &&
                      copy->state == tally::HoldState::kExpired));
  if (!same || first->available < 0 || first->value < 0) {
    std::fprintf(stderr, "crash_writer: reserve %s/%s: %s %s, then %s %s\n",
                 key.c_str(), id.c_str(), tally::OutcomeName(first->outcome),
                 tally::HoldStateName(first->state),
                 tally::OutcomeName(copy->outcome),
                 tally::HoldStateName(copy->state));
    std::exit(4);
  }
  log->Append(line("reserve", *first));
  if (first->state != tally::HoldState::kHeld || pick >= 4) return;  // runs out
  auto done = pick <= 2 ? db->CommitReservation({kSeatCounter, key}, id)
                        : db->ReleaseReservation({kSeatCounter, key}, id);
  if (!done.ok()) Die("commit or release", done.status());
  log->Append(line(pick <= 2 ? "commit" : "release", *done));
}

// Post i of "likes" is picked with probability ~ 1/(i+1) (Zipf, s = 1): a
// few celebrity posts take most likes, most posts are cold.
std::string LikeKey(std::mt19937_64& rng) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  const int i = static_cast<int>(std::pow(double{tally::crash::kLikeKeys}, u));
  return "post-" + std::to_string(std::min(i, tally::crash::kLikeKeys) - 1);
}

void Work(tally::Db* db, AckLog* log, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<tally::IncrementResult> results;
  auto event = [&rng] {
    const int e = static_cast<int>(rng() % kEventSpace);
    // The delta is a function of the event, so redeliveries are duplicates;
    // one delivery in 50 carries another delta (a conflict).
    int64_t delta = e % 13 + 1;
    if (rng() % 50 == 0) delta += 100;
    return std::make_pair("evt-" + std::to_string(e), delta);
  };
  uint64_t batches = 0, strict_ops = 0;
  std::vector<GaugeSent> gauge_sent;
  int next_page = static_cast<int>(seed % tally::crash::kPageKeys);
  auto page = [&next_page] {
    next_page = (next_page + 1) % tally::crash::kPageKeys;
    return "page-" + std::to_string(next_page);
  };
  for (;;) {
    const int kind = static_cast<int>(rng() % 16);
    tally::Batch b;
    if (kind == 15) {
      if (rng() % 2 == 0) {
        GaugeOp(db, log, rng, seed, &gauge_sent);
      } else {
        ClaimOp(db, log, rng, seed);
      }
      Report();
      continue;
    }
    if (kind == 14) {
      if (rng() % 2 == 0) {
        StrictOp(db, log, rng, seed, strict_ops++);
      } else {
        SeatOp(db, log, rng, seed, strict_ops++);
      }
      Report();
      continue;
    }
    if (kind >= 10) {  // keyed counters
      std::string key = kind == 12 ? page() : LikeKey(rng);
      // A like: once per (post, user). One call in 42 is a batch across
      // keys instead: its fresh markers are what the checks' scans grow with.
      if (kind <= 11 || (kind == 13 && rng() % 3 != 0)) {
        const int user = static_cast<int>(rng() % tally::crash::kLikeUsers);
        const std::string id = "user-" + std::to_string(user);
        int64_t delta = user % 3 + 1;
        if (rng() % 50 == 0) delta += 100;  // a conflict
        auto r = db->IncrementOnce({kKeyedOnceCounter, key}, id, delta);
        if (!r.ok()) Die("increment once keyed", r.status());
        if (r->outcome != tally::Outcome::kConflict) {
          log->Append(KeyedOnceLine(kKeyedOnceCounter, key, id, delta));
        }
      } else if (kind == 12) {  // a page view
        const int64_t delta =
            1 +
            static_cast<int64_t>(rng() % tally::crash::kMaxKeyedPlainPerCall);
        auto r = db->Increment({kKeyedPlainCounter, key}, delta);
        if (!r.ok()) Die("increment keyed", r.status());
        log->Append(KeyedPlainLine(kKeyedPlainCounter, key, delta));
      } else {  // one batch across many keys of several counters
        const std::string id =
            "x" + std::to_string(seed) + "-" + std::to_string(batches++);
        for (int i = 0; i < 8; ++i) {
          // A post picked twice is a copy of the event inside the batch.
          const std::string post = i == 0 ? key : LikeKey(rng);
          b.AddOnce({kKeyedOnceCounter, post}, id,
                    static_cast<int64_t>(post.size() % 3 + 1));
        }
        b.AddOnce("orders", id, 1);
        for (int i = 0; i < 6; ++i) {
          b.Add({kKeyedPlainCounter, page()},
                1 + static_cast<int64_t>(rng() % 3));
        }
        b.Add(kPlainCounter, 1 + static_cast<int64_t>(rng() % 3));
        log->Append(IntentLine(id, b), /*durable=*/false);
        tally::Status s = db->Apply(b, &results);
        if (!s.ok()) Die("apply across keys", s);
        log->Append(AckLines(b, results) + "A " + id + "\n");
      }
      Report();
      continue;
    }
    if (kind <= 3) {  // a single once-increment
      auto [id, delta] = event();
      const char* counter = kOnceCounters[rng() % 3];
      auto r = db->IncrementOnce(counter, id, delta);
      if (!r.ok()) Die("increment once", r.status());
      if (r->outcome != tally::Outcome::kConflict) {
        log->Append(OnceLine(counter, id, delta));
      }
      Report();
      continue;
    }
    if (kind <= 5) {  // one order: count and amount, sometimes twice
      auto [id, delta] = event();
      const int copies = rng() % 4 == 0 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        b.AddOnce("orders", id, 1);
        b.AddOnce("revenue", id, delta);
        b.AddOnce("hot", id, delta);
      }
    } else if (kind == 6) {  // 20 once-increments, repeats inside
      std::vector<std::pair<std::string, int64_t>> picked;
      for (int i = 0; i < 20; ++i) {
        if (!picked.empty() && rng() % 3 == 0) {
          picked.push_back(picked[rng() % picked.size()]);
        } else {
          picked.push_back(event());
        }
      }
      for (const auto& [id, delta] : picked) {
        b.AddOnce(kOnceCounters[rng() % 3], id, delta);
      }
    } else if (kind == 7 && rng() % 8 == 0) {  // a roll-up now and then
      const int which = static_cast<int>(rng() % 3);
      tally::Status s = db->RollupNow(which == 0   ? kOnceCounters[rng() % 3]
                                      : which == 1 ? kKeyedOnceCounter
                                                   : "");
      if (!s.ok()) Die("rollup", s);
      Report();
      continue;
    } else if (kind <= 8) {  // a plain increment
      const int64_t delta = 1 + static_cast<int64_t>(rng() % 5);
      auto r = rng() % 2 == 0
                   ? db->Increment(kPlainCounter, delta)
                   : db->Increment(kPlainCounter, delta,
                                   {"device-" + std::to_string(rng() % 16)});
      if (!r.ok()) Die("increment", r.status());
      log->Append(PlainLine(delta));
      Report();
      continue;
    } else {  // plain and once in one batch
      for (int i = 0; i < 10; ++i) {
        b.Add(kPlainCounter, 1 + static_cast<int64_t>(rng() % 3));
      }
      for (int i = 0; i < 5; ++i) {
        auto [id, delta] = event();
        b.AddOnce("orders", id, delta);
      }
    }
    tally::Status s = db->Apply(b, &results);
    if (!s.ok()) Die("apply", s);
    log->Append(AckLines(b, results));
    Report();
  }
}

}  // namespace

int ImportMain(const char* source, const char* target) {
  tally::Options ro;
  ro.read_only = true;
  std::unique_ptr<tally::Db> src, db;
  tally::Status s = tally::Db::Open(ro, source, &src);
  if (!s.ok()) Die("open source", s);
  s = tally::Db::Open(tally::Options(), target, &db);
  if (!s.ok()) Die("open", s);
  auto counters = src->ListCounters();
  if (!counters.ok()) Die("list", counters.status());
  auto progress = [] {
    if (::write(STDOUT_FILENO, "x", 1) != 1) std::exit(3);
  };
  for (const tally::CounterInfo& c : *counters) {
    if (db->DescribeCounter(c.name).ok()) {
      progress();
      continue;
    }
    tally::CounterImport im;
    s = tally::test::ReadExported(src.get(), c, 1000, &im);
    if (!s.ok()) Die("read " + c.name, s);
    progress();  // a kill now lands inside this counter's import
    s = tally::ImportCounter(*db, im);
    if (!s.ok()) Die("import " + c.name, s);
  }
  progress();          // all imported
  for (;;) ::pause();  // killed by the driver
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--import") == 0) {
    return ImportMain(argv[2], argv[3]);
  }
  const bool sync = argc == 6 && std::strcmp(argv[4], "--sync") == 0;
  if (argc != 4 && !sync) {
    std::fprintf(stderr,
                 "usage: tally_crash_writer DB_PATH SEED ACK_LOG "
                 "[--sync SYNC_LOG]\n");
    return 2;
  }
  tally::Options options;
  options.sync = sync;
  // With sync, every WAL sync is logged, so the checker can model a power
  // cut (tests/testutil/power_cut_fs.h).
  std::unique_ptr<rocksdb::Env> env;
  if (sync) {
    env = rocksdb::NewCompositeEnv(
        std::make_shared<tally::test::PowerCutFs>(argv[5]));
  }
  options.rollup_interval_ms = 5;
  // Small write buffers: the families flush often, which is what the
  // driver's read-only reader must see through (issue 12, item 1).
  options.write_buffer_bytes = 256 << 10;
  std::unique_ptr<tally::Db> db;
  tally::Status s = tally::engine::OpenOnEnv(options, argv[1], env.get(), &db);
  if (!s.ok()) Die("open", s);
  for (size_t i = 0; i < 3; ++i) {
    s = db->CreateCounter(kOnceCounters[i], {tally::crash::kOnceShards[i]});
    if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  }
  s = db->CreateCounter(kPlainCounter, {8});
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  tally::CounterSpec keyed;
  keyed.keyed = true;
  keyed.shards = tally::crash::kKeyedOnceShards;
  s = db->CreateCounter(kKeyedOnceCounter, keyed);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  keyed.shards = tally::crash::kKeyedPlainShards;
  s = db->CreateCounter(kKeyedPlainCounter, keyed);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  tally::CounterSpec stock;
  stock.keyed = true;
  stock.bounds = tally::CounterBounds::AtLeast(0);
  s = db->CreateCounter(tally::crash::kStrictCounter, stock);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  s = db->CreateCounter(tally::crash::kSeatCounter, stock);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  keyed.shards = tally::crash::kGaugeShards;
  s = db->CreateCounter(tally::crash::kGaugeCounter, keyed);
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  s = db->CreateCounter(tally::crash::kJobCounter, {2});
  if (!s.ok() && !s.IsAlreadyExists()) Die("create", s);
  AckLog log(argv[3], sync);
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  std::vector<std::thread> threads;
  for (int t = 0; t < tally::crash::kThreads; ++t) {
    threads.emplace_back(Work, db.get(), &log, seed * 1000 + t);
  }
  for (auto& t : threads) t.join();  // never returns: killed by the driver
  return 0;
}
