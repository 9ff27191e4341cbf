// get NAME [--cached] [--json]: the exact value (sum of all shards from one
// snapshot), alone on the last line so scripts can take `tail -n1`.
// --cached: the roll-up's value instead (one read, no shard scan), after
// lines with its as-of time and its lag.
// --json: {"counter": NAME, "value": N} (--cached adds as_of_ms, lag_ms and
// lag_increments, null when unknown).
// Bucketed counters: --from T --to T, --today or --last DUR read the sum of
// a range of buckets (Db::ReadRange), after "from:" and "to:" lines (JSON:
// from_ms, to_ms).
// Keyed counters: --key K reads one key (its value alone; JSON adds "key"),
// also over a range; several --key flags read every key from one snapshot
// (Db::ReadKeys), one "KEY<TAB>VALUE" line each in the order given (JSON:
// {"counter": NAME, "keys": [{"key", "value"}, ...]}). --cached reads a
// keyed counter's total over all keys and takes no --key.
// Quotas (a strict counter with time buckets, one counter or one --key):
// the exact read adds the window now (Db::ReadQuota, by the engine's
// clock): "window: FROM .. TO", "window_used: U", "remaining: R" (what an
// increment may still take) and "resets_at: TO" before the value (JSON:
// "window": {from_ms, to_ms, used, remaining, previous_used,
// resets_at_ms}).
// A strict counter with a minimum and no time buckets (one that takes
// reservations; one counter, or one --key) reads its value with its
// reservations (Db::ReadHeld, one consistent view): while any is held, the
// exact read adds "reservations: N" (held now), "held: H" (their units),
// "available: A" (the value less H: what a take may use) and
// "next_expiry: TIME" (the earliest hold's end) before the value; JSON
// always adds "reservations": {open, held, available, next_expiry_ms,
// next_expiry} (next_expiry* null when none is held).

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "commands.h"
#include "json_output.h"

namespace counterctl {
namespace {

int PrintCached(const GetArgs& args, const tally::CachedValue& c) {
  if (args.json) {
    PrintJson(
        Json{{"counter", args.name},
             {"value", c.value},
             {"as_of_ms", c.as_of_ms},
             {"lag_ms", c.lag_ms},
             {"lag_increments", c.lag_increments_known ? Json(c.lag_increments)
                                                       : Json(nullptr)}});
    return kExitOk;
  }
  std::cout << "as_of: " << FormatUtcMillis(c.as_of_ms) << "\n"
            << "lag_ms: " << c.lag_ms << "\n"
            << "lag_increments: "
            << (c.lag_increments_known ? std::to_string(c.lag_increments)
                                       : std::string("unknown"))
            << "\n"
            << c.value << "\n";
  return kExitOk;
}

int64_t NowMs() {
  const tally::Clock* clock = ToolClock();
  return (clock != nullptr ? clock : tally::Clock::System())->NowMillis();
}

// The [from, to) a range flag asks for; false (after a usage error) when
// the flags are wrong. `width` is the counter's bucket width in ms.
bool RangeOf(const GetArgs& args, int64_t width, int64_t* from, int64_t* to) {
  if (args.today) {
    const int64_t day = tally::BucketWidthMs(tally::BucketWidth::kDay);
    const int64_t now = NowMs();
    *from = now - now % day;
    *to = *from + day;
    return true;
  }
  if (!args.last.empty()) {
    std::optional<int64_t> d = ParseDurationMs(args.last);
    if (!d || *d <= 0 || *d % width != 0) {
      UsageError("--last " + Printable(args.last) +
                 ": expected a duration that is a whole number of the "
                 "counter's buckets (" + std::to_string(width) + " ms)");
      return false;
    }
    const int64_t now = NowMs();
    *to = now - now % width + width;
    *from = *to - *d;
    return true;
  }
  std::optional<int64_t> f = ParseTimeFlag("--from", args.from);
  if (!f) return false;
  std::optional<int64_t> t = ParseTimeFlag("--to", args.to);
  if (!t) return false;
  *from = *f;
  *to = *t;
  return true;
}

int RunRange(tally::Db* db, const GetArgs& args, tally::CounterRef ref) {
  tally::Result<tally::CounterInfo> info = db->DescribeCounter(args.name);
  if (!info.ok()) return Fail(info.status());
  const int64_t width = tally::BucketWidthMs(info->bucket);
  if (width == 0) {
    return Fail(tally::Status::InvalidArgument(
        "counter '" + Printable(args.name) +
        "' has no time buckets; read it whole (get NAME)"));
  }
  int64_t from = 0, to = 0;
  if (!RangeOf(args, width, &from, &to)) return kExitUsage;
  tally::Result<int64_t> value = db->ReadRange(ref, from, to);
  if (!value.ok()) return Fail(value.status());
  if (args.json) {
    Json doc = {{"counter", args.name},
                {"value", *value},
                {"from_ms", from},
                {"to_ms", to}};
    if (!ref.key.empty()) doc["key"] = ref.key;
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "from: " << FormatUtcMillis(from) << "\n"
            << "to: " << FormatUtcMillis(to) << "\n"
            << *value << "\n";
  return kExitOk;
}

// Several keys of a keyed counter, from one snapshot.
int RunKeys(tally::Db* db, const GetArgs& args) {
  const std::vector<std::string_view> keys(args.keys.begin(), args.keys.end());
  tally::Result<std::vector<int64_t>> values = db->ReadKeys(args.name, keys);
  if (!values.ok()) return Fail(values.status());
  if (values->size() != keys.size()) {
    return Fail(tally::Status::Corruption(
        "Db::ReadKeys returned " + std::to_string(values->size()) +
        " values for " + std::to_string(keys.size()) + " keys"));
  }
  std::vector<tally::KeyValue> read;
  read.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    read.push_back(tally::KeyValue{args.keys[i], (*values)[i]});
  }
  if (args.json) {
    PrintJson(Json{{"counter", args.name}, {"keys", KeyValuesJson(read)}});
    return kExitOk;
  }
  PrintKeyValues(read);
  return kExitOk;
}

}  // namespace

int RunGet(const GlobalArgs& global, const GetArgs& args) {
  const int ranges = (args.today ? 1 : 0) + (args.last.empty() ? 0 : 1) +
                     (args.from.empty() && args.to.empty() ? 0 : 1);
  if (ranges > 1 || (ranges == 1 && args.cached)) {
    return UsageError("use one of --from/--to, --today, --last and --cached");
  }
  if (args.from.empty() != args.to.empty()) {
    return UsageError("--from and --to go together");
  }
  for (const std::string& key : args.keys) {
    if (!CheckKeyFlag(key)) return kExitUsage;
  }
  if (args.cached && !args.keys.empty()) {
    return UsageError(
        "--cached reads a keyed counter's total over all its keys and takes "
        "no --key");
  }
  if (ranges == 1 && args.keys.size() > 1) {
    return UsageError(
        "a range reads one key: give one --key with --from/--to, "
        "--today or --last");
  }
  const tally::CounterRef ref = args.keys.size() == 1
                                    ? tally::CounterRef(args.name, args.keys[0])
                                    : tally::CounterRef(args.name);
  std::unique_ptr<tally::Db> db;
  // A range and the exact value read shards; --cached the roll-up only.
  tally::Status s = OpenDb(
      global, OpenMode::kRead, &db,
      ranges == 0 && args.cached ? tally::kReadRollups : tally::kReadValues);
  if (!s.ok()) return Fail(s);
  if (ranges == 1) return RunRange(db.get(), args, ref);
  if (args.keys.size() > 1) return RunKeys(db.get(), args);
  if (args.cached) {
    tally::Result<tally::CachedValue> cached = db->ReadCached(args.name);
    if (!cached.ok()) {
      return Fail(NoRollupYet(*db, args.name, cached.status(),
                              ", or `counterctl get " + args.name +
                                  "` for the exact value now"));
    }
    return PrintCached(args, *cached);
  }
  tally::Result<int64_t> value = db->ReadExact(ref);
  if (!value.ok()) return Fail(value.status());
  tally::Result<tally::CounterInfo> info = db->DescribeCounter(args.name);
  if (!info.ok()) return Fail(info.status());
  const bool quota =
      info->bounds.any() && info->bucket != tally::BucketWidth::kNone;
  tally::QuotaState w;
  if (quota) {
    tally::Result<tally::QuotaState> q = db->ReadQuota(ref);
    if (!q.ok()) return Fail(q.status());
    w = *q;
  }
  // What Db::Reserve takes: a minimum and no time buckets.
  const bool holds =
      info->bounds.has_min && info->bucket == tally::BucketWidth::kNone;
  tally::HeldValue h;
  int64_t shown = *value;
  if (holds) {
    tally::Result<tally::HeldValue> held = db->ReadHeld(ref);
    if (!held.ok()) return Fail(held.status());
    h = *held;
    // The value of the same view as the holds, so value - held is
    // available also while a writer moves them.
    shown = h.value;
  }
  if (args.json) {
    Json doc = {{"counter", args.name}, {"value", shown}};
    if (!ref.key.empty()) doc["key"] = ref.key;
    if (quota) {
      doc["window"] = Json{{"from_ms", w.window_start_ms},
                           {"to_ms", w.window_ends_ms},
                           {"used", w.used},
                           {"remaining", w.remaining},
                           {"previous_used", w.previous_used},
                           {"resets_at_ms", w.window_ends_ms}};
    }
    if (holds) {
      Json r = {{"open", h.open}, {"held", h.held}, {"available", h.available}};
      SetTimeOrNull(&r, "next_expiry", h.next_expiry_ms != 0,
                    h.next_expiry_ms);
      doc["reservations"] = r;
    }
    PrintJson(doc);
    return kExitOk;
  }
  if (quota) {
    std::cout << "window: " << FormatUtcMillis(w.window_start_ms) << " .. "
              << FormatUtcMillis(w.window_ends_ms) << "\n"
              << "window_used: " << w.used << "\n"
              << "remaining: " << w.remaining << "\n"
              << "resets_at: " << FormatUtcMillis(w.window_ends_ms) << "\n";
  }
  if (holds && h.open > 0) {
    std::cout << "reservations: " << h.open << "\n"
              << "held: " << h.held << "\n"
              << "available: " << h.available << "\n"
              << "next_expiry: " << FormatUtcMillis(h.next_expiry_ms) << "\n";
  }
  std::cout << shown << "\n";
  return kExitOk;
}

}  // namespace counterctl
