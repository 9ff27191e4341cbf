// RedisDb: opening, the catalog (create, describe, list, delete) and the
// catalog cache.
//
// A counter is created in three steps, each safe to be cut short: a new id
// (INCR of the catalog's next-id: never reused), a live key in each of its
// hash tags, then its catalog record (HSETNX: the one point where the
// counter comes into being; a name taken meanwhile loses and its live keys
// are removed). A creation killed before the record leaves live keys of an
// id no record names: never read, never written. A delete is the reverse:
// the record goes first (new callers no longer find the counter), then the
// live keys (a writer that still has the counter cached gets TALLYGONE from
// the function and answers NotFound), then the values, markers and indexes.

#include <algorithm>
#include <cassert>
#include <utility>

#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "core/decide.h"
#include "core/validate.h"
#include "tally/limits.h"
#include "util/random_id.h"

namespace tally::cluster {
namespace {

// The version of cluster/functions/tally.lua this build speaks (its
// `local VERSION`, cluster/CMakeLists.txt reads it).
constexpr std::string_view kFunctionsVersion = TALLY_FUNCTIONS_VERSION;

// Commands per pipelined Run when a counter's keys are created or dropped:
// bounds one Run's memory on a counter of kMaxShards x kKeyGroups tags.
constexpr size_t kChunk = 4096;

Command Cmd(std::vector<std::string> args, int slot) {
  Command c;
  c.args = std::move(args);
  c.slot = slot;
  return c;
}

Status ReplyError(const Reply& r, std::string_view what) {
  return Status::IOError(std::string(what) + ": " + r.str);
}

}  // namespace

Status OpenCluster(const Options& options, const std::string& target,
                   std::unique_ptr<Db>* db) {
  db->reset();
  Status s = core::ValidateOptions(options);
  if (!s.ok()) return s;
  Target t;
  s = ParseTarget(target, &t);
  if (!s.ok()) return s;
  ClientOptions co;
  co.seeds = t.seeds;
  co.user = t.user;
  co.read_from_replicas = t.read_from_replicas;
  s = ReadPassword(&co.password);
  if (!s.ok()) return s;
  std::unique_ptr<ClusterClient> client;
  s = ClusterClient::Connect(co, &client);
  if (!s.ok()) return s;
  auto impl = std::make_unique<RedisDb>(options, target, std::move(t),
                                        std::move(client));
  s = impl->CheckFunctions();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

RedisDb::RedisDb(const Options& options, std::string path, Target target,
                 std::unique_ptr<ClusterClient> client)
    : options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::System()),
      path_(std::move(path)),
      target_(std::move(target)),
      keys_(target_.ns),
      client_(std::move(client)) {}

RedisDb::~RedisDb() = default;

Status RedisDb::CheckFunctions() {
  Command c = Cmd({"FCALL_RO", "tally_version", "0"}, -1);
  std::vector<Reply> replies;
  Status s = client_->RunOnMasters(c, &replies);
  if (!s.ok()) return s;
  const std::vector<NodeInfo> nodes = client_->Nodes();
  std::vector<Endpoint> masters;
  for (const NodeInfo& n : nodes) {
    if (n.master) masters.push_back(n.endpoint);
  }
  for (size_t i = 0; i < replies.size(); ++i) {
    const Reply& r = replies[i];
    const std::string node =
        i < masters.size()
            ? masters[i].host + ":" + std::to_string(masters[i].port)
            : "a master";
    if (r.kind == Reply::Kind::kString && r.str == kFunctionsVersion) continue;
    const std::string held =
        r.kind == Reply::Kind::kString ? "version " + core::Quote(r.str)
                                       : core::Quote(r.str);
    return Status::NotSupported(
        "Redis node " + node + " does not hold the tally function library " +
        "version " + std::string(kFunctionsVersion) + " (it answered " +
        held + "): load cluster/functions/tally.lua on every master "
        "(scripts/redis_cluster load-functions, docs/cluster.md)");
  }
  return Status::OK();
}

Status RedisDb::Run(const std::vector<Command>& commands,
                    std::vector<Reply>* replies, bool writes) {
  if (commands.empty()) {
    replies->clear();
    return Status::OK();
  }
  RunOptions ro;
  if (writes && target_.wait_replicas > 0) {
    ro.wait_replicas = target_.wait_replicas;
    ro.wait_timeout_ms = target_.wait_ms;
  }
  return client_->Run(commands, replies, ro);
}

Status RedisDb::NeedsFiles(std::string_view call, std::string_view why) const {
  return Status::NotSupported(std::string(call) + " on a Redis Cluster target: " +
                              std::string(why));
}

Status RedisDb::CheckSpecBuilt(const CounterSpec& spec) const {
  if (spec.outbox) return NoOutbox("a counter with an outbox");
  return Status::OK();
}

Status RedisDb::CheckWritable() const {
  if (!options_.read_only) return Status::OK();
  return Status::NotSupported("database " + path_ +
                              " was opened read-only (Options::read_only); "
                              "writes are refused");
}

// A counter named `name` may be created: AlreadyExists when the catalog
// holds the name, InvalidArgument at kMaxCounters.
Status RedisDb::CheckNewName(std::string_view name) {
  const std::string catalog = keys_.Catalog();
  const int cat_slot = ClusterClient::SlotOf(catalog);
  std::vector<Reply> r;
  Status s = Run({Cmd({"HEXISTS", catalog, std::string(name)}, cat_slot),
                  Cmd({"HLEN", catalog}, cat_slot)},
                 &r, false);
  if (!s.ok()) return s;
  if (!r[0].ok()) return ReplyError(r[0], "catalog");
  if (r[0].integer == 1) {
    return Status::AlreadyExists("counter " + core::Quote(name) +
                                 " already exists");
  }
  if (r[1].ok() && static_cast<size_t>(r[1].integer) >= kMaxCounters) {
    return Status::InvalidArgument(
        "the database holds " + std::to_string(r[1].integer) +
        " counters, the limit (kMaxCounters)");
  }
  return Status::OK();
}

// A counter id never given out before.
Status RedisDb::NewCounterId(uint64_t* id) {
  std::vector<Reply> r;
  Status s = Run(
      {Cmd({"INCR", keys_.NextId()}, ClusterClient::SlotOf(keys_.NextId()))},
      &r, true);
  if (!s.ok()) return s;
  if (r[0].kind != Reply::Kind::kInteger) return ReplyError(r[0], "next id");
  *id = static_cast<uint64_t>(r[0].integer);
  return Status::OK();
}

// Runs `cmds` (writes) in pipelines of kChunk; `what` names the call.
Status RedisDb::RunChunked(const std::vector<Command>& cmds,
                           std::string_view what) {
  std::vector<Reply> r;
  for (size_t at = 0; at < cmds.size(); at += kChunk) {
    const std::vector<Command> chunk(
        cmds.begin() + at, cmds.begin() + std::min(cmds.size(), at + kChunk));
    Status s = Run(chunk, &r, true);
    if (!s.ok()) return s;
    for (const Reply& one : r) {
      if (!one.ok()) return ReplyError(one, what);
    }
  }
  return Status::OK();
}

// The live key of each tag of `c`: its keys are written from here on.
std::vector<Command> RedisDb::LiveKeys(const CounterInfo& c) const {
  std::vector<Command> out;
  for (const std::string& tag : keys_.TagsOf(c)) {
    const std::string key = KeySpace::Live(tag);
    out.push_back(Cmd({"SET", key, "1"}, ClusterClient::SlotOf(key)));
  }
  return out;
}

// Deletes the keys `written` wrote (each command's first key), best
// effort: keys of an id no catalog record names are harmless leftovers.
void RedisDb::DropWritten(const std::vector<Command>& written) {
  std::vector<Command> drop;
  for (const Command& w : written) {
    drop.push_back(Cmd({"DEL", w.args[1]}, w.slot));
  }
  Status ignored = RunChunked(drop, "drop");
  (void)ignored;
}

// The last step of a creation: the catalog record (HSETNX: the point
// where the counter comes into being). When another client took the name
// meanwhile, `written` (the keys of the new id) go again, best effort
// (leftovers of an unused id are harmless), and AlreadyExists.
Status RedisDb::Publish(const CounterInfo& c,
                        const std::vector<Command>& written) {
  const std::string catalog = keys_.Catalog();
  CounterInfo stored = c;
  stored.flags = 0;  // the plain-increment flag lives in {catalog}:plain
  std::vector<Reply> r;
  Status s = Run({Cmd({"HSETNX", catalog, c.name, EncodeCounter(stored)},
                      ClusterClient::SlotOf(catalog))},
                 &r, true);
  if (!s.ok()) return s;
  if (!r[0].ok()) return ReplyError(r[0], "catalog");
  if (r[0].integer == 0) {
    DropWritten(written);
    return Status::AlreadyExists("counter " + core::Quote(c.name) +
                                 " already exists");
  }
  MutexLock lock(&mu_);
  cache_[c.name] = c;
  return Status::OK();
}

Status RedisDb::CreateCounter(std::string_view name, const CounterSpec& spec) {
  Status writable = CheckWritable();
  if (!writable.ok()) return writable;
  Status s = core::ValidateCounterName(name);
  if (s.ok()) s = core::ValidateSpec(spec);
  if (s.ok()) s = CheckSpecBuilt(spec);
  if (s.ok()) s = CheckNewName(name);
  CounterInfo c;
  if (s.ok()) s = NewCounterId(&c.id);
  if (!s.ok()) return s;
  c.name = std::string(name);
  c.shards = spec.shards;
  c.policy = spec.policy;
  c.created_at_ms = clock_->NowMillis();
  c.dedupe_window_ms = spec.dedupe_window_ms;
  c.bucket = spec.bucket;
  c.retention_ms = spec.retention_ms;
  c.outbox = spec.outbox;
  c.keyed = spec.keyed;
  c.bounds = spec.bounds;
  c.sliding = spec.sliding;
  const std::vector<Command> live = LiveKeys(c);
  s = RunChunked(live, "create counter");
  return s.ok() ? Publish(c, live) : s;
}

Status RedisDb::FindCounter(std::string_view name, CounterInfo* c) {
  {
    MutexLock lock(&mu_);
    auto it = cache_.find(name);
    if (it != cache_.end()) {
      *c = it->second;
      return Status::OK();
    }
  }
  const std::string catalog = keys_.Catalog();
  std::vector<Reply> r;
  Status s = Run({Cmd({"HGET", catalog, std::string(name)},
                      ClusterClient::SlotOf(catalog))},
                 &r, false);
  if (!s.ok()) return s;
  if (r[0].kind == Reply::Kind::kNil) return core::CounterNotFound(name);
  if (r[0].kind != Reply::Kind::kString) return ReplyError(r[0], "catalog");
  s = DecodeCounter(name, r[0].str, c);
  if (!s.ok()) return s;
  const std::string plain = keys_.PlainFlags();
  s = Run({Cmd({"HGET", plain, std::to_string(c->id)},
               ClusterClient::SlotOf(plain))},
          &r, false);
  if (!s.ok()) return s;
  if (r[0].kind == Reply::Kind::kString) {
    c->flags |= kCounterFlagPlainIncrements;
  }
  MutexLock lock(&mu_);
  cache_[c->name] = *c;
  return Status::OK();
}

Status RedisDb::RecordPlain(const CounterInfo& c) {
  const std::string plain = keys_.PlainFlags();
  std::vector<Reply> r;
  Status s = Run({Cmd({"HSET", plain, std::to_string(c.id), "1"},
                      ClusterClient::SlotOf(plain))},
                 &r, true);
  if (s.ok() && !r[0].ok()) s = ReplyError(r[0], "catalog");
  if (!s.ok()) return s;
  MutexLock lock(&mu_);
  auto it = cache_.find(c.name);
  if (it != cache_.end() && it->second.id == c.id) {
    it->second.flags |= kCounterFlagPlainIncrements;
  }
  return Status::OK();
}

Status RedisDb::FindRef(CounterRef ref, bool whole_ok, CounterInfo* c) {
  Status s = FindCounter(ref.counter, c);
  if (s.ok() && !ref.key.empty()) s = core::ValidateCounterKey(ref.key);
  if (!s.ok()) return s;
  if (whole_ok && ref.key.empty()) return Status::OK();
  return core::CheckKeyed(*c, ref.key);
}

void RedisDb::Forget(std::string_view name, uint64_t id) {
  MutexLock lock(&mu_);
  auto it = cache_.find(name);
  if (it != cache_.end() && it->second.id == id) cache_.erase(it);
}

void RedisDb::Uncache(std::string_view name) {
  MutexLock lock(&mu_);
  auto it = cache_.find(name);
  if (it != cache_.end()) cache_.erase(it);
}

Result<CounterInfo> RedisDb::DescribeCounter(std::string_view name) {
  Status s = core::ValidateCounterName(name);
  if (!s.ok()) return core::CounterNotFound(name);
  // Always from the catalog: another client may have deleted it.
  Uncache(name);
  CounterInfo c;
  s = FindCounter(name, &c);
  if (!s.ok()) return s;
  return c;
}

Result<std::vector<CounterInfo>> RedisDb::ListCounters() {
  const std::string catalog = keys_.Catalog();
  const int slot = ClusterClient::SlotOf(catalog);
  std::vector<Reply> r;
  Status s = Run({Cmd({"HGETALL", catalog}, slot),
                  Cmd({"HGETALL", keys_.PlainFlags()}, slot)},
                 &r, false);
  if (!s.ok()) return s;
  for (const Reply& one : r) {
    if (one.kind != Reply::Kind::kArray) return ReplyError(one, "catalog");
  }
  std::vector<std::string> plain;
  for (size_t i = 0; i + 1 < r[1].elements.size(); i += 2) {
    plain.push_back(r[1].elements[i].str);
  }
  std::sort(plain.begin(), plain.end());
  std::vector<CounterInfo> out;
  const std::vector<Reply>& e = r[0].elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    CounterInfo c;
    s = DecodeCounter(e[i].str, e[i + 1].str, &c);
    if (!s.ok()) return s;
    if (std::binary_search(plain.begin(), plain.end(), std::to_string(c.id))) {
      c.flags |= kCounterFlagPlainIncrements;
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const CounterInfo& a, const CounterInfo& b) {
              return a.name < b.name;
            });
  return out;
}

namespace {

// The FCALL of tally_drop_buckets for the keys `keys` of a bucketed
// counter's tag (a named counter's: its shard's buckets).
Command DropBuckets(const std::string& tag, bool keyed,
                    const std::vector<Reply>& keys) {
  std::vector<std::string> names;
  if (!keyed) names.emplace_back();
  for (const Reply& k : keys) names.push_back(k.str);
  std::vector<std::string> args = {"FCALL", "tally_drop_buckets",
                                   std::to_string(names.size())};
  for (const std::string& k : names) {
    args.push_back(KeySpace::BucketIndex(tag, k));
  }
  args.push_back(tag);
  args.insert(args.end(), names.begin(), names.end());
  return Cmd(std::move(args), ClusterClient::SlotOf(tag));
}

}  // namespace

Status RedisDb::DeleteCounter(std::string_view name) {
  Status writable = CheckWritable();
  if (!writable.ok()) return writable;
  Uncache(name);
  CounterInfo c;
  Status s = FindCounter(name, &c);
  if (!s.ok()) return s;
  const std::string catalog = keys_.Catalog();
  std::vector<Reply> r;
  s = Run({Cmd({"HDEL", catalog, c.name}, ClusterClient::SlotOf(catalog)),
           Cmd({"HDEL", keys_.PlainFlags(), std::to_string(c.id)},
               ClusterClient::SlotOf(catalog))},
          &r, true);
  if (s.ok() && !r[0].ok()) s = ReplyError(r[0], "catalog");
  Forget(name, c.id);
  if (!s.ok()) return s;
  if (r[0].integer == 0) return core::CounterNotFound(name);
  // The live keys first (writers stop), then what each tag holds.
  const std::vector<std::string> tags = keys_.TagsOf(c);
  for (size_t at = 0; at < tags.size(); at += kChunk) {
    std::vector<Command> cmds;
    for (size_t i = at; i < std::min(tags.size(), at + kChunk); ++i) {
      const int slot = ClusterClient::SlotOf(tags[i]);
      cmds.push_back(Cmd({"DEL", KeySpace::Live(tags[i])}, slot));
      cmds.push_back(Cmd({"ZRANGE", KeySpace::MarkerIndex(tags[i]), "0", "-1"},
                         slot));
      cmds.push_back(Cmd({"ZRANGE", KeySpace::KeyIndex(tags[i]), "0", "-1"},
                         slot));
      cmds.push_back(
          Cmd({"ZRANGE", KeySpace::ForwardIndex(tags[i]), "0", "-1"}, slot));
      cmds.push_back(
          Cmd({"ZRANGE", KeySpace::HoldIndex(tags[i]), "0", "-1"}, slot));
    }
    s = Run(cmds, &r, true);
    if (!s.ok()) return s;
    std::vector<Command> drop;
    for (size_t i = at, j = 0; i < std::min(tags.size(), at + kChunk);
         ++i, j += 5) {
      const std::string& tag = tags[i];
      const int slot = ClusterClient::SlotOf(tag);
      std::vector<std::string> del = {
          "DEL", KeySpace::MarkerIndex(tag), KeySpace::KeyIndex(tag),
          KeySpace::ForwardIndex(tag), KeySpace::HoldIndex(tag)};
      if (!c.keyed) del.push_back(KeySpace::Value(tag, {}));
      del.push_back(KeySpace::Rollup(tag));
      // Markers and forwards are kept at the same keys (TAG:m:NAME).
      for (const size_t index : {j + 1, j + 3}) {
        for (const Reply& m : r[index].elements) {
          del.push_back(KeySpace::Marker(tag, m.str));
        }
      }
      for (const Reply& k : r[j + 2].elements) {
        del.push_back(KeySpace::Value(tag, k.str));
      }
      // A strict key's reservations: its open holds and records.
      for (const Reply& h : r[j + 4].elements) del.push_back(tag + ":" + h.str);
      if (c.bucket != BucketWidth::kNone &&
          (!c.keyed || !r[j + 2].elements.empty())) {
        drop.push_back(DropBuckets(tag, c.keyed, r[j + 2].elements));
      }
      drop.push_back(Cmd(std::move(del), slot));
    }
    s = Run(drop, &r, true);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// The database's id, made once: the first writable client to ask stores a
// random one (SET NX), every client reads the stored one. A read-only
// client of a database no writable client asked yet gets NotFound.
Result<std::string> RedisDb::DatabaseId() {
  const std::string key = keys_.DatabaseId();
  const int slot = ClusterClient::SlotOf(key);
  std::vector<Command> cmds;
  if (!options_.read_only) {
    cmds.push_back(Cmd({"SET", key, RandomHexId(), "NX"}, slot));
  }
  cmds.push_back(Cmd({"GET", key}, slot));
  std::vector<Reply> r;
  Status s = Run(cmds, &r, !options_.read_only);
  if (!s.ok()) return s;
  const Reply& got = r.back();
  if (got.kind == Reply::Kind::kNil) {
    return Status::NotFound("database " + path_ +
                            " has no id yet: a writable client makes it");
  }
  if (got.kind != Reply::Kind::kString || !IsHexId(got.str)) {
    return Status::Corruption("database id " + core::Quote(key) +
                              " is not 32 hex characters: " +
                              core::Quote(got.str));
  }
  return got.str;
}

}  // namespace tally::cluster
