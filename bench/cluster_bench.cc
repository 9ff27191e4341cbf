// tally_cluster_bench: the Redis Cluster backend (docs/cluster.md,
// "Performance") on a running cluster, in one run. Run it through
// bench/cluster_bench.sh, which starts a cluster of its own
// (scripts/redis_cluster) and stops it after; this binary reads that
// cluster's env file from $TALLY_REDIS_ENV.
//
// 1. Client overhead: tally's Db against redis-benchmark calling the same
//    function with the same keys and arguments, side by side, alternated
//    (--rounds pairs; the order flips every round). Each call is FCALL
//    tally_write with ONE once-increment of a fresh event (GET of its new
//    marker, INCRBY, SET, ZADD, the prune query): 5 keys (the tag's live
//    key, marker index, key index, value, the event's marker) and 11
//    arguments (the client's now, the op count, then the op's 9 fields:
//    "o", 4, 5, delta 1, the marker record as the backend encodes it, TTL
//    0, the event id, expiry 0, ""); event ids of 15 bytes.
//      tally:  --conns threads, each calling Db::Apply on batches of
//              --depth once-increments per master (3 x 16 by default),
//              each op of a batch in a shard of its own (its event id,
//              "ev-" + 12 digits, is picked so that it hashes there), so
//              the backend sends one tally_write call of one op per
//              shard, pipelined: --depth calls per master on one
//              connection per thread, on --depth tags per master.
//      redis-benchmark: one process per master (127.0.0.1:PORT, without
//              --cluster: in cluster mode it replaces "{tag}" with tags
//              of its own, whose live keys do not exist), -c --conns -P
//              --depth, on one shard's tag of the same counter on that
//              master; event ids "rNN" (the round) + __rand_int__'s 12
//              digits (-r 2^31-1: a repeated id, a duplicate that writes
//              nothing, once in ~10^5 calls; each occurrence is drawn on
//              its own, so the marker key's id and the index member's
//              differ: the same work, unrelated names). Authenticated as
//              the same ACL user `tally`: redis-benchmark reads no
//              password file and no REDISCLI_AUTH, so the password is on
//              its command line (-a) while it runs, visible in ps to the
//              users of this machine; it is the throwaway cluster's, and
//              never printed.
//    Each side is checked: every tally op kApplied and one FCALL per op;
//    every redis-benchmark call an FCALL that did not fail (INFO
//    commandstats' failed_calls) and the tags' values grown by the calls
//    (less the rare repeated ids).
//    Reported per side: the rate, the client's CPU per call (getrusage of
//    this process; of the redis-benchmark processes, their start-up
//    included), and per master the FCALLs served, their usec_per_call
//    (INFO commandstats) and the server's CPU per call (its threads' time
//    on a CPU, /proc/PID/task/*/schedstat).
// 2. A hot counter with 1 shard and with 16 shards: --hot-threads threads
//    writing one counter, one call per op (IncrementOnce of a fresh event,
//    Increment) and in batches of 16 once-increments (Apply), alternated
//    1 then 16 shards (flipped every round); per run the rate, each
//    master's share of the calls, usec_per_call and CPU per call; and the
//    16 shards' hash tags per master (the slot map, cross-checked with
//    CLUSTER KEYSLOT).
// 3. The model of docs/cluster.md, "Performance": a master on a machine of
//    its own serves 1e6 / (its CPU us per call) calls per second; a
//    counter's events spread evenly over its shards, so the master with
//    most of its shards caps the total at capacity x shards / its shards.
//
// Not a test: it measures; the checks above only make sure each side did
// the work it claims. Figures on a 2-core machine running the client and
// six servers show that machine: the ratios and the per-call costs are
// what carries over (docs/cluster.md).
//
// Usage: tally_cluster_bench [--rounds N] [--ops N] [--conns N] [--depth N]
//        [--hot-rounds N] [--hot-ops N] [--hot-threads N] [--skip-overhead]
//        [--skip-hot] [--tally-only] [--json FILE]
// Defaults: 21 overhead rounds of 16,000 calls per side (short sides, many
// pairs: a burst of other work on the machine spoils one pair, not the
// median), 4 connections per master, 16 calls in flight per connection;
// 3 hot-counter rounds of 24,000 ops per run, 4 threads.
// --tally-only runs the overhead part's tally side alone (for perf: the
// client's time without redis-benchmark beside it).
// Environment: TALLY_REDIS_ENV (required), REDIS_BENCHMARK (default
// redis-benchmark).

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/client/connection.h"
#include "cluster/keys.h"
#include "cluster/records.h"
#include "core/shard_picker.h"
#include "tally/tally.h"
#include "tests/testutil/redis_env.h"

extern char** environ;

namespace tally::bench {
namespace {

using cluster::ClusterClient;
using cluster::Connection;
using cluster::Endpoint;
using cluster::Reply;
using Json = nlohmann::json;

// ---- small helpers ----

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tally_cluster_bench: %s\n", what.c_str());
  std::exit(1);
}

void Must(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

double Seconds(std::chrono::steady_clock::time_point a,
               std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double CpuSeconds(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

double SelfCpuSeconds() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return CpuSeconds(r);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) Die("cannot read " + path);
  return line;
}

// The CPU time of process `pid`, all its threads, in seconds: the sum of
// its threads' /proc/PID/task/TID/schedstat (nanoseconds on a CPU); else
// utime + stime of /proc/PID/stat (clock ticks, 10 ms); 0 when the process
// is not on this machine.
double ProcessCpuSeconds(int64_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::error_code ec;
  double ns = 0;
  bool any = false;
  for (const auto& task :
       std::filesystem::directory_iterator(dir + "/task", ec)) {
    std::ifstream stat(task.path() / "schedstat");
    double on_cpu = 0;
    if (stat >> on_cpu) {
      ns += on_cpu;
      any = true;
    }
  }
  if (any) return ns / 1e9;
  std::ifstream in(dir + "/stat");
  std::string all;
  if (!in || !std::getline(in, all)) return 0;
  const size_t close = all.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(all.substr(close + 2));
  std::vector<std::string> f;
  std::string field;
  while (rest >> field) f.push_back(field);
  // Fields 14 (utime) and 15 (stime) of proc(5); f[0] is field 3.
  if (f.size() < 13) return 0;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (std::stod(f[11]) + std::stod(f[12])) / ticks;
}

// "ev-" and 12 digits: as long as redis-benchmark's ids ("rNN" and
// __rand_int__'s 12 digits).
std::string EventId(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "ev-%012" PRIu64, n);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Rate(double per_s) {
  return per_s >= 1000 ? Fixed(per_s / 1000, 1) + "k/s" : Fixed(per_s, 0) + "/s";
}

// ---- the cluster, as its admin sees it ----

struct Node {
  Endpoint endpoint;
  std::string id;
  bool master = false;
  size_t master_index = 0;  // masters: own index; replicas: their master's
  int64_t pid = 0;
  std::unique_ptr<Connection> admin;
};

// One node's counters at a point in time.
struct NodeSample {
  double cpu_s = 0;
  uint64_t fcalls = 0;
  uint64_t fcall_usec = 0;
  uint64_t fcall_failed = 0;
};

// What one node did between two samples.
struct NodeDelta {
  uint64_t calls = 0;
  double usec_per_call = 0;  // INFO commandstats: the call's execution
  double cpu_us_per_call = 0;  // the process's CPU over its master's calls
  uint64_t failed = 0;
  double cpu_s = 0;
};

class Cluster {
 public:
  Cluster(const std::vector<int>& ports, const std::string& admin_password) {
    cluster::ClientOptions o;
    for (int p : ports) o.seeds.push_back({"127.0.0.1", p});
    o.user = "admin";
    o.password = admin_password;
    o.client_name = "tally-bench-admin";
    Must(ClusterClient::Connect(o, &client_), "connect as admin");
    // CLUSTER SLOTS lists a replica once its master counts it as one,
    // which can lag the replica's own link by a moment: wait (up to 10 s)
    // until every node of the env file is in the map.
    std::vector<cluster::NodeInfo> infos = client_->Nodes();
    for (int i = 0; i < 100 && infos.size() < ports.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      Must(client_->RefreshSlots(), "CLUSTER SLOTS");
      infos = client_->Nodes();
    }
    if (infos.size() < ports.size()) {
      std::fprintf(stderr,
                   "tally_cluster_bench: the slot map lists %zu of the %zu "
                   "nodes: the replicas' figures miss the others\n",
                   infos.size(), ports.size());
    }
    for (const cluster::NodeInfo& info : infos) {
      if (!info.master) continue;
      masters_.push_back(info);
    }
    cluster::ConnectionOptions co;
    co.user = "admin";
    co.password = admin_password;
    co.client_name = "tally-bench-admin";
    for (const cluster::NodeInfo& info : infos) {
      Node n;
      n.endpoint = info.endpoint;
      n.id = info.id;
      n.master = info.master;
      for (size_t m = 0; m < masters_.size(); ++m) {
        if (masters_[m].id == (info.master ? info.id : info.master_id)) {
          n.master_index = m;
        }
      }
      Must(Connection::Open(n.endpoint, co, &n.admin),
           "connect to " + cluster::AddressOf(n.endpoint));
      n.pid = std::stoll(InfoField(&n, "server", "process_id"));
      nodes_.push_back(std::move(n));
    }
  }

  size_t masters() const { return masters_.size(); }
  const Endpoint& master(size_t m) const { return masters_[m].endpoint; }
  const std::vector<Node>& nodes() const { return nodes_; }

  // The master serving `slot`, by the slot map.
  size_t MasterOfSlot(int slot) const {
    for (size_t m = 0; m < masters_.size(); ++m) {
      for (const auto& [from, to] : masters_[m].slot_ranges) {
        if (slot >= from && slot <= to) return m;
      }
    }
    Die("slot " + std::to_string(slot) + " has no master");
  }

  // CLUSTER KEYSLOT of `key`, asked of the cluster (the client computes
  // the same CRC16 itself: this checks it).
  int KeySlot(const std::string& key) {
    std::vector<Reply> replies;
    cluster::Command c;
    c.args = {"CLUSTER", "KEYSLOT", key};
    Must(client_->Run({c}, &replies), "CLUSTER KEYSLOT");
    if (replies[0].kind != Reply::Kind::kInteger) {
      Die("CLUSTER KEYSLOT: " + replies[0].str);
    }
    return static_cast<int>(replies[0].integer);
  }

  // The integer value of `key` (0 when missing), from its master.
  int64_t GetInt(const std::string& key) {
    std::vector<Reply> replies;
    cluster::Command c;
    c.args = {"GET", key};
    c.slot = ClusterClient::SlotOf(key);
    Must(client_->Run({c}, &replies), "GET");
    if (replies[0].kind == Reply::Kind::kNil) return 0;
    if (replies[0].kind != Reply::Kind::kString) Die("GET: " + replies[0].str);
    return std::stoll(replies[0].str);
  }

  std::vector<NodeSample> Sample() {
    std::vector<NodeSample> out;
    for (Node& n : nodes_) {
      NodeSample s;
      s.cpu_s = ProcessCpuSeconds(n.pid);
      // cmdstat_fcall:calls=N,usec=N,usec_per_call=F,rejected_calls=N,
      // failed_calls=N
      const std::string line = InfoField(&n, "commandstats", "cmdstat_fcall");
      s.fcalls = Stat(line, "calls");
      s.fcall_usec = Stat(line, "usec");
      s.fcall_failed = Stat(line, "failed_calls") + Stat(line, "rejected_calls");
      out.push_back(s);
    }
    return out;
  }

  // Per node, what it did between `a` and `b`; a replica's CPU is counted
  // over its master's calls (what it replicated).
  std::vector<NodeDelta> Delta(const std::vector<NodeSample>& a,
                               const std::vector<NodeSample>& b) const {
    std::vector<NodeDelta> d(nodes_.size());
    std::vector<uint64_t> master_calls(masters_.size(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      d[i].calls = b[i].fcalls - a[i].fcalls;
      d[i].failed = b[i].fcall_failed - a[i].fcall_failed;
      d[i].cpu_s = b[i].cpu_s - a[i].cpu_s;
      if (d[i].calls > 0) {
        d[i].usec_per_call =
            static_cast<double>(b[i].fcall_usec - a[i].fcall_usec) /
            static_cast<double>(d[i].calls);
      }
      if (nodes_[i].master) master_calls[nodes_[i].master_index] = d[i].calls;
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const uint64_t calls = master_calls[nodes_[i].master_index];
      if (calls > 0) {
        d[i].cpu_us_per_call = d[i].cpu_s * 1e6 / static_cast<double>(calls);
      }
    }
    return d;
  }

 private:
  // A field of INFO `section` ("" when absent).
  std::string InfoField(Node* n, const std::string& section,
                        const std::string& field) {
    Reply r;
    Must(n->admin->Call({"INFO", section}, &r), "INFO " + section);
    if (r.kind != Reply::Kind::kString) Die("INFO " + section + ": " + r.str);
    std::istringstream in(r.str);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
    }
    return "";
  }

  static uint64_t Stat(const std::string& line, const std::string& name) {
    size_t at = 0;
    while ((at = line.find(name + "=", at)) != std::string::npos) {
      if (at == 0 || line[at - 1] == ',') {
        return std::stoull(line.substr(at + name.size() + 1));
      }
      at += name.size();
    }
    return 0;
  }

  std::unique_ptr<ClusterClient> client_;
  std::vector<cluster::NodeInfo> masters_;
  std::vector<Node> nodes_;
};

Json NodesJson(const Cluster& cl, const std::vector<NodeDelta>& d) {
  Json out = Json::array();
  for (size_t i = 0; i < d.size(); ++i) {
    const Node& n = cl.nodes()[i];
    out.push_back({{"node", cluster::AddressOf(n.endpoint)},
                   {"role", n.master ? "master" : "replica"},
                   {"master", n.master_index},
                   {"fcalls", d[i].calls},
                   {"usec_per_call", d[i].usec_per_call},
                   {"cpu_s", d[i].cpu_s},
                   {"cpu_us_per_call", d[i].cpu_us_per_call},
                   {"failed_calls", d[i].failed}});
  }
  return out;
}

std::string MastersLine(const Cluster& cl, const std::vector<NodeDelta>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    const Node& n = cl.nodes()[i];
    if (!n.master) continue;
    if (!s.empty()) s += "; ";
    s += "m" + std::to_string(n.master_index) + " " +
         std::to_string(d[i].calls) + " calls, " +
         Fixed(d[i].usec_per_call, 1) + " us/call exec, " +
         Fixed(d[i].cpu_us_per_call, 1) + " us/call cpu";
  }
  return s;
}

// ---- settings ----

struct Settings {
  int rounds = 21;        // overhead pairs
  uint64_t ops = 16000;   // per side and round
  int conns = 4;          // per master
  int depth = 16;         // calls in flight per connection
  int hot_rounds = 3;
  uint64_t hot_ops = 24000;
  int hot_threads = 4;
  bool overhead = true;
  bool redis_benchmark = true;  // --tally-only: the tally side alone (perf)
  bool hot = true;
  std::string json;
};

Settings ParseArgs(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") {
      s.rounds = std::stoi(next());
    } else if (a == "--ops") {
      s.ops = std::stoull(next());
    } else if (a == "--conns") {
      s.conns = std::stoi(next());
    } else if (a == "--depth") {
      s.depth = std::stoi(next());
    } else if (a == "--hot-rounds") {
      s.hot_rounds = std::stoi(next());
    } else if (a == "--hot-ops") {
      s.hot_ops = std::stoull(next());
    } else if (a == "--hot-threads") {
      s.hot_threads = std::stoi(next());
    } else if (a == "--skip-overhead") {
      s.overhead = false;
    } else if (a == "--tally-only") {
      s.redis_benchmark = false;
    } else if (a == "--skip-hot") {
      s.hot = false;
    } else if (a == "--json") {
      s.json = next();
    } else {
      Die("unknown argument " + a + " (see the comment at the top of "
          "bench/cluster_bench.cc)");
    }
  }
  if (s.rounds < 1 || s.rounds > 99 || s.hot_rounds < 1 ||
      s.hot_rounds > 99 || s.conns < 1 || s.conns > 64 ||
      s.depth < 1 || s.depth > 1000 || s.hot_threads < 1 ||
      s.hot_threads > 64) {
    Die("--rounds and --hot-rounds 1..99, --conns 1..64, --depth 1..1000, "
        "--hot-threads 1..64");
  }
  return s;
}

// ---- 1. client overhead ----

struct Overhead {
  Db* db;
  Cluster* cl;
  const Settings* set;
  std::string counter;
  CounterInfo info;
  cluster::KeySpace keys;
  std::string password;                    // the tally user's
  std::vector<std::vector<uint32_t>> on;   // per master, --depth shards
  uint64_t batches = 0;                    // per thread and round
};

struct SideResult {
  double rate = 0;
  double wall_s = 0;
  uint64_t calls = 0;
  double client_cpu_us_per_call = 0;
  std::vector<NodeDelta> nodes;
};

// The tally side of round `round`: --conns threads of Apply.
SideResult RunTallySide(Overhead* o, int round) {
  const Settings& set = *o->set;
  const size_t per_batch = o->on.size() * static_cast<size_t>(set.depth);
  // Event ids, per thread, batch after batch, op k of a batch in shard
  // order[k]: picked (not timed) by hashing fresh numbers, 10^11 + round x
  // 10^9 + thread x 10^7 + a count: 12 digits, unique, and never one of
  // redis-benchmark's (below 2^31).
  std::vector<uint32_t> order;
  for (const auto& shards : o->on) {
    order.insert(order.end(), shards.begin(), shards.end());
  }
  std::vector<std::vector<std::string>> ids(static_cast<size_t>(set.conns));
  for (int t = 0; t < set.conns; ++t) {
    std::map<uint32_t, std::vector<std::string>> pool;
    for (uint32_t s : order) pool[s];
    const uint64_t first = 100'000'000'000ULL +
                           static_cast<uint64_t>(round) * 1'000'000'000ULL +
                           static_cast<uint64_t>(t) * 10'000'000ULL;
    uint64_t n = first;
    size_t short_of = order.size();
    while (short_of > 0) {
      if (n - first >= 10'000'000ULL) Die("--ops is too large for the ids");
      std::string id = EventId(n++);
      auto it = pool.find(core::ShardOfKey(id, o->info.shards));
      if (it == pool.end() || it->second.size() >= o->batches) continue;
      it->second.push_back(std::move(id));
      if (it->second.size() == o->batches) --short_of;
    }
    std::vector<std::string>& mine = ids[static_cast<size_t>(t)];
    mine.reserve(o->batches * per_batch);
    for (uint64_t b = 0; b < o->batches; ++b) {
      for (uint32_t s : order) mine.push_back(std::move(pool[s][b]));
    }
  }

  std::atomic<uint64_t> not_applied{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::vector<std::thread> threads;
  const std::vector<NodeSample> before = o->cl->Sample();
  const double cpu0 = SelfCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < set.conns; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<std::string>& mine = ids[static_cast<size_t>(t)];
      std::vector<IncrementResult> results;
      Batch batch;
      for (uint64_t b = 0; b < o->batches; ++b) {
        batch.Clear();
        for (size_t k = 0; k < per_batch; ++k) {
          batch.AddOnce(o->counter, mine[b * per_batch + k], 1);
        }
        Status s = o->db->Apply(batch, &results);
        if (!s.ok()) {
          if (!failed.exchange(true)) failure = s.ToString();
          return;
        }
        uint64_t other = 0;
        for (const IncrementResult& r : results) {
          other += r.outcome != Outcome::kApplied ? 1 : 0;
        }
        not_applied += other;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu1 = SelfCpuSeconds();
  const std::vector<NodeSample> after = o->cl->Sample();
  if (failed) Die("tally side: Apply: " + failure);
  if (not_applied > 0) {
    Die("tally side: " + std::to_string(not_applied.load()) +
        " once-increments of fresh events were not kApplied");
  }
  SideResult r;
  r.calls = o->batches * per_batch * static_cast<uint64_t>(set.conns);
  r.wall_s = Seconds(t0, t1);
  r.rate = static_cast<double>(r.calls) / r.wall_s;
  r.client_cpu_us_per_call = (cpu1 - cpu0) * 1e6 / static_cast<double>(r.calls);
  r.nodes = o->cl->Delta(before, after);
  uint64_t served = 0;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (o->cl->nodes()[i].master) served += r.nodes[i].calls;
  }
  // One tally_write call per op: the backend put each op of the batch in a
  // call of its own (one per shard's tag), as the comparison needs.
  if (served != r.calls) {
    Die("tally side: the masters served " + std::to_string(served) +
        " FCALLs for " + std::to_string(r.calls) + " ops (want one each)");
  }
  return r;
}

// The redis-benchmark side of round `round`: one process per master, at
// once.
SideResult RunRedisBenchmarkSide(Overhead* o, int round) {
  const Settings& set = *o->set;
  const char* rb = std::getenv("REDIS_BENCHMARK");
  const std::string exe = rb != nullptr && *rb != '\0' ? rb : "redis-benchmark";
  const uint64_t per_master =
      o->batches * static_cast<uint64_t>(set.depth) *
      static_cast<uint64_t>(set.conns);
  const int64_t now = Clock::System()->NowMillis();

  struct Proc {
    pid_t pid = 0;
    std::string out_path;
    std::string value_key;
    int64_t value_before = 0;
    rusage usage{};
  };
  std::vector<Proc> procs(o->on.size());
  std::vector<std::vector<std::string>> argvs;
  for (size_t m = 0; m < o->on.size(); ++m) {
    const uint32_t shard = o->on[m][0];
    const std::string tag = o->keys.NamedTag(o->info.id, shard);
    MarkerInfo marker;  // as Commit encodes a new event's marker
    marker.shard = shard;
    marker.delta = 1;
    marker.created_at_ms = now;
    marker.expires_at_ms = 0;
    // redis-benchmark seeds random() with time(NULL) alone, so two runs
    // started in the same second draw the same ids: each round's ids
    // carry the round ("r07" + 12 digits, as long as "ev-" + 12 digits),
    // or a later round would find every marker there and count nothing.
    char prefix[8];
    std::snprintf(prefix, sizeof(prefix), "r%02d", round % 100);
    const std::string name = std::string(prefix) + "__rand_int__";
    procs[m].value_key = cluster::KeySpace::Value(tag, "");
    procs[m].value_before = o->cl->GetInt(procs[m].value_key);
    argvs.push_back({exe, "-h", o->cl->master(m).host, "-p",
                     std::to_string(o->cl->master(m).port), "--user", "tally",
                     "-a", o->password, "-c", std::to_string(set.conns), "-P",
                     std::to_string(set.depth), "-n",
                     std::to_string(per_master), "-r", "2147483647", "-q",
                     // the call, as RedisDb::Commit forms it for one op
                     "FCALL", "tally_write", "5", cluster::KeySpace::Live(tag),
                     cluster::KeySpace::MarkerIndex(tag),
                     cluster::KeySpace::KeyIndex(tag), procs[m].value_key,
                     cluster::KeySpace::Marker(tag, name), std::to_string(now),
                     "1", "o", "4", "5", "1", cluster::EncodeMarker(marker),
                     "0", name, "0", ""});
  }
  const std::vector<NodeSample> before = o->cl->Sample();
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t m = 0; m < procs.size(); ++m) {
    // Its output (the rate it saw, or why it failed) goes to a file of
    // its own under $TMPDIR, read when it fails and removed after.
    std::string path =
        (std::filesystem::temp_directory_path() / "tally-cluster-bench-XXXXXX")
            .string();
    const int fd = mkstemp(path.data());
    if (fd < 0) Die("mkstemp: " + std::string(std::strerror(errno)));
    procs[m].out_path = path;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    std::vector<char*> argv;
    for (std::string& a : argvs[m]) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&procs[m].pid, exe.c_str(), &fa, nullptr,
                                argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    if (rc != 0) Die("cannot run " + exe + ": " + std::strerror(rc));
  }
  double child_cpu = 0;
  for (Proc& p : procs) {
    int status = 0;
    if (wait4(p.pid, &status, 0, &p.usage) < 0) Die("wait4 redis-benchmark");
    child_cpu += CpuSeconds(p.usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::stringstream text;
      text << std::ifstream(p.out_path).rdbuf();
      for (const Proc& q : procs) std::remove(q.out_path.c_str());
      Die("redis-benchmark failed: " + text.str());
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<NodeSample> after = o->cl->Sample();
  SideResult r;
  r.calls = per_master * procs.size();
  r.wall_s = Seconds(t0, t1);
  r.rate = static_cast<double>(r.calls) / r.wall_s;
  r.client_cpu_us_per_call = child_cpu * 1e6 / static_cast<double>(r.calls);
  r.nodes = o->cl->Delta(before, after);
  uint64_t served = 0, failed = 0;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (o->cl->nodes()[i].master) served += r.nodes[i].calls;
    failed += r.nodes[i].failed;
  }
  int64_t grown = 0;
  for (Proc& p : procs) {
    grown += o->cl->GetInt(p.value_key) - p.value_before;
    std::remove(p.out_path.c_str());
  }
  // Every call ran the function without an error, and all but the rare
  // repeated random ids (duplicates: no increment) counted.
  if (served != r.calls || failed != 0 ||
      static_cast<double>(grown) < 0.999 * static_cast<double>(r.calls)) {
    Die("redis-benchmark side: " + std::to_string(served) + " FCALLs served, " +
        std::to_string(failed) + " failed, values grew by " +
        std::to_string(grown) + ", for " + std::to_string(r.calls) + " calls");
  }
  return r;
}

Json SideJson(const Cluster& cl, const SideResult& r) {
  return {{"calls", r.calls},
          {"wall_s", r.wall_s},
          {"calls_per_s", r.rate},
          {"client_cpu_us_per_call", r.client_cpu_us_per_call},
          {"nodes", NodesJson(cl, r.nodes)}};
}

// The masters' (with `master` false: the replicas') CPU over every call the
// masters served: the cluster's mean CPU per call on one node of a kind.
double CpuPerCall(const Cluster& cl, const std::vector<NodeDelta>& d,
                  bool master) {
  double cpu = 0;
  uint64_t calls = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (cl.nodes()[i].master) calls += d[i].calls;
    if (cl.nodes()[i].master == master) cpu += d[i].cpu_s;
  }
  return calls == 0 ? 0 : cpu * 1e6 / static_cast<double>(calls);
}

// The masters' mean usec_per_call (INFO commandstats), weighted by calls.
double ExecPerCall(const Cluster& cl, const std::vector<NodeDelta>& d) {
  double usec = 0;
  uint64_t calls = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!cl.nodes()[i].master) continue;
    usec += d[i].usec_per_call * static_cast<double>(d[i].calls);
    calls += d[i].calls;
  }
  return calls == 0 ? 0 : usec / static_cast<double>(calls);
}

Json RunOverhead(Db* db, Cluster* cl, const Settings& set,
                 const std::string& ns, const std::string& password) {
  Overhead o{db, cl, &set, "overhead", {}, cluster::KeySpace(ns), password,
             {}, 0};
  CounterSpec spec;
  spec.shards = 128;  // ~43 per master: --depth of them on each
  Must(db->CreateCounter(o.counter, spec), "create counter overhead");
  Result<CounterInfo> info = db->DescribeCounter(o.counter);
  Must(info.status(), "describe counter overhead");
  o.info = *info;
  o.on.assign(cl->masters(), {});
  for (uint32_t s = 0; s < o.info.shards; ++s) {
    const std::string tag = o.keys.NamedTag(o.info.id, s);
    std::vector<uint32_t>& mine =
        o.on[cl->MasterOfSlot(ClusterClient::SlotOf(tag))];
    if (mine.size() < static_cast<size_t>(set.depth)) mine.push_back(s);
  }
  for (size_t m = 0; m < o.on.size(); ++m) {
    if (o.on[m].size() < static_cast<size_t>(set.depth)) {
      Die("master " + std::to_string(m) + " holds " +
          std::to_string(o.on[m].size()) + " of the 128 shards, fewer than " +
          "--depth " + std::to_string(set.depth));
    }
  }
  const uint64_t per_batch = cl->masters() * static_cast<uint64_t>(set.depth);
  o.batches = std::max<uint64_t>(
      1, set.ops / (per_batch * static_cast<uint64_t>(set.conns)));

  std::printf(
      "== client overhead: FCALL tally_write, one new once-increment per "
      "call, %zu masters, %d connection(s) per master, %d calls in flight "
      "per connection, %" PRIu64 " calls per side and round\n",
      cl->masters(), set.conns, set.depth,
      o.batches * per_batch * static_cast<uint64_t>(set.conns));
  std::fflush(stdout);
  Json rounds = Json::array();
  std::vector<double> ratios, tally_rates, rb_rates, tally_cpu, rb_cpu;
  std::vector<double> master_cpu_t, master_cpu_rb, exec_t, exec_rb,
      replica_cpu_t, replica_cpu_rb;
  for (int r = 0; r < set.rounds; ++r) {
    SideResult t, b;
    if (!set.redis_benchmark) {
      t = RunTallySide(&o, r);
      std::printf("round %d: tally %s, client CPU per call %.2f us\n  %s\n",
                  r + 1, Rate(t.rate).c_str(), t.client_cpu_us_per_call,
                  MastersLine(*cl, t.nodes).c_str());
      std::fflush(stdout);
      tally_cpu.push_back(t.client_cpu_us_per_call);
      tally_rates.push_back(t.rate);
      continue;
    }
    if (r % 2 == 0) {
      t = RunTallySide(&o, r);
      b = RunRedisBenchmarkSide(&o, r);
    } else {
      b = RunRedisBenchmarkSide(&o, r);
      t = RunTallySide(&o, r);
    }
    const double ratio = t.rate / b.rate;
    ratios.push_back(ratio);
    tally_rates.push_back(t.rate);
    rb_rates.push_back(b.rate);
    tally_cpu.push_back(t.client_cpu_us_per_call);
    rb_cpu.push_back(b.client_cpu_us_per_call);
    master_cpu_t.push_back(CpuPerCall(*cl, t.nodes, true));
    master_cpu_rb.push_back(CpuPerCall(*cl, b.nodes, true));
    replica_cpu_t.push_back(CpuPerCall(*cl, t.nodes, false));
    replica_cpu_rb.push_back(CpuPerCall(*cl, b.nodes, false));
    exec_t.push_back(ExecPerCall(*cl, t.nodes));
    exec_rb.push_back(ExecPerCall(*cl, b.nodes));
    std::printf(
        "round %d (%s first): tally %s, redis-benchmark %s, ratio %.3f; "
        "client CPU per call %.2f us vs %.2f us\n  tally:           %s\n"
        "  redis-benchmark: %s\n",
        r + 1, r % 2 == 0 ? "tally" : "redis-benchmark", Rate(t.rate).c_str(),
        Rate(b.rate).c_str(), ratio, t.client_cpu_us_per_call,
        b.client_cpu_us_per_call, MastersLine(*cl, t.nodes).c_str(),
        MastersLine(*cl, b.nodes).c_str());
    std::fflush(stdout);
    rounds.push_back({{"round", r + 1},
                      {"first", r % 2 == 0 ? "tally" : "redis-benchmark"},
                      {"tally", SideJson(*cl, t)},
                      {"redis_benchmark", SideJson(*cl, b)},
                      {"ratio", ratio}});
  }
  if (!set.redis_benchmark) {
    std::printf("tally alone: %s, client CPU per call %.2f us (medians)\n",
                Rate(Median(tally_rates)).c_str(), Median(tally_cpu));
    return {{"tally_calls_per_s", Median(tally_rates)},
            {"tally_client_cpu_us_per_call", Median(tally_cpu)}};
  }
  const double ratio = Median(ratios);
  std::printf(
      "overhead: tally %s vs redis-benchmark %s (medians); ratio %.3f "
      "(median of the rounds' ratios; %.3f..%.3f): target >= 0.80 %s\n"
      "  per call (medians), tally vs redis-benchmark: client CPU %.2f vs "
      "%.2f us; masters' CPU %.2f vs %.2f us (executing the function %.2f "
      "vs %.2f us); replicas' CPU %.2f vs %.2f us\n",
      Rate(Median(tally_rates)).c_str(), Rate(Median(rb_rates)).c_str(), ratio,
      *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()),
      ratio >= 0.8 ? "met" : "NOT met", Median(tally_cpu), Median(rb_cpu),
      Median(master_cpu_t), Median(master_cpu_rb), Median(exec_t),
      Median(exec_rb), Median(replica_cpu_t), Median(replica_cpu_rb));
  std::fflush(stdout);
  return {{"conns_per_master", set.conns},
          {"depth", set.depth},
          {"shards", o.info.shards},
          {"rounds", rounds},
          {"tally_calls_per_s", Median(tally_rates)},
          {"redis_benchmark_calls_per_s", Median(rb_rates)},
          {"ratio", ratio},
          {"ratio_min", *std::min_element(ratios.begin(), ratios.end())},
          {"ratio_max", *std::max_element(ratios.begin(), ratios.end())},
          {"met", ratio >= 0.8},
          {"tally_client_cpu_us_per_call", Median(tally_cpu)},
          {"redis_benchmark_client_cpu_us_per_call", Median(rb_cpu)},
          {"masters_cpu_us_per_call_tally", Median(master_cpu_t)},
          {"masters_cpu_us_per_call_redis_benchmark", Median(master_cpu_rb)},
          {"masters_usec_per_call_tally", Median(exec_t)},
          {"masters_usec_per_call_redis_benchmark", Median(exec_rb)},
          {"replicas_cpu_us_per_call_tally", Median(replica_cpu_t)},
          {"replicas_cpu_us_per_call_redis_benchmark", Median(replica_cpu_rb)}};
}

// ---- 2. a hot counter, 1 vs 16 shards ----

enum class Work { kOnce, kPlain, kOnceBatch };
constexpr int kBatch = 16;

const char* WorkName(Work w) {
  switch (w) {
    case Work::kOnce:
      return "once";
    case Work::kPlain:
      return "plain";
    case Work::kOnceBatch:
      return "once_batch16";
  }
  return "?";
}

struct HotRun {
  double rate = 0;  // ops per second
  uint64_t ops = 0;
  double client_cpu_us_per_op = 0;
  std::vector<NodeDelta> nodes;
};

HotRun RunHot(Db* db, Cluster* cl, const Settings& set, const std::string& name,
              Work work, uint64_t id_base, uint64_t* counted) {
  const int threads = set.hot_threads;
  const uint64_t per_thread =
      std::max<uint64_t>(kBatch, set.hot_ops / static_cast<uint64_t>(threads)) /
      kBatch * kBatch;
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> not_applied{0};
  std::string failure;
  std::vector<std::thread> pool;
  const std::vector<NodeSample> before = cl->Sample();
  const double cpu0 = SelfCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      uint64_t n = id_base + static_cast<uint64_t>(t) * 1'000'000'000ULL;
      auto fail = [&](const Status& s) {
        if (!failed.exchange(true)) failure = s.ToString();
      };
      uint64_t other = 0;
      if (work == Work::kOnceBatch) {
        Batch batch;
        std::vector<IncrementResult> results;
        for (uint64_t i = 0; i < per_thread; i += kBatch) {
          batch.Clear();
          for (int k = 0; k < kBatch; ++k) batch.AddOnce(name, EventId(n++), 1);
          Status s = db->Apply(batch, &results);
          if (!s.ok()) return fail(s);
          for (const IncrementResult& r : results) {
            other += r.outcome != Outcome::kApplied ? 1 : 0;
          }
        }
      } else {
        for (uint64_t i = 0; i < per_thread; ++i) {
          Result<IncrementResult> r =
              work == Work::kOnce ? db->IncrementOnce(name, EventId(n++), 1)
                                  : db->Increment(name, 1);
          if (!r.ok()) return fail(r.status());
          other += r->outcome != Outcome::kApplied ? 1 : 0;
        }
      }
      not_applied += other;
    });
  }
  for (std::thread& t : pool) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu1 = SelfCpuSeconds();
  const std::vector<NodeSample> after = cl->Sample();
  if (failed) Die(name + " " + WorkName(work) + ": " + failure);
  if (not_applied > 0) {
    Die(name + " " + WorkName(work) + ": " +
        std::to_string(not_applied.load()) + " ops not kApplied");
  }
  HotRun r;
  r.ops = per_thread * static_cast<uint64_t>(threads);
  *counted += r.ops;
  r.rate = static_cast<double>(r.ops) / Seconds(t0, t1);
  r.client_cpu_us_per_op = (cpu1 - cpu0) * 1e6 / static_cast<double>(r.ops);
  r.nodes = cl->Delta(before, after);
  return r;
}

// Per master, how many of counter `c`'s shards' tags it serves: from the
// slot map, each tag's slot checked with CLUSTER KEYSLOT.
std::vector<int> Spread(Cluster* cl, const std::string& ns,
                        const CounterInfo& c) {
  const cluster::KeySpace keys(ns);
  std::vector<int> per_master(cl->masters(), 0);
  for (uint32_t s = 0; s < c.shards; ++s) {
    const std::string live = cluster::KeySpace::Live(keys.NamedTag(c.id, s));
    const int slot = ClusterClient::SlotOf(live);
    if (cl->KeySlot(live) != slot) Die("CLUSTER KEYSLOT disagrees: " + live);
    ++per_master[cl->MasterOfSlot(slot)];
  }
  return per_master;
}

// The master serving the most calls, and its share.
struct Busiest {
  size_t node = 0;
  double share = 0;
};
Busiest BusiestMaster(const Cluster& cl, const std::vector<NodeDelta>& d) {
  Busiest b;
  uint64_t total = 0, most = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!cl.nodes()[i].master) continue;
    total += d[i].calls;
    if (d[i].calls >= most) {
      most = d[i].calls;
      b.node = i;
    }
  }
  b.share = total == 0 ? 0 : static_cast<double>(most) / static_cast<double>(total);
  return b;
}

// A replica's CPU per call of its master, for the busiest master.
double ReplicaCpuPerCall(const Cluster& cl, const std::vector<NodeDelta>& d,
                         size_t master_node) {
  for (size_t i = 0; i < d.size(); ++i) {
    if (!cl.nodes()[i].master &&
        cl.nodes()[i].master_index == cl.nodes()[master_node].master_index) {
      return d[i].cpu_us_per_call;
    }
  }
  return 0;
}

// The masters' per-call costs under tally's pipelines (the overhead part's
// tally side, medians over its rounds; cpu 0 when it did not run).
struct PipelinedCost {
  double cpu = 0;
  double exec = 0;
  double replica = 0;
};

Json RunHotCounter(Db* db, Cluster* cl, const Settings& set,
                   const std::string& ns, const PipelinedCost& pipelined) {
  const std::vector<uint32_t> shard_counts = {1, 16};
  std::map<uint32_t, CounterInfo> infos;
  std::map<uint32_t, std::vector<int>> spreads;
  for (uint32_t shards : shard_counts) {
    const std::string name = "hot-" + std::to_string(shards);
    CounterSpec spec;
    spec.shards = shards;
    Must(db->CreateCounter(name, spec), "create counter " + name);
    Result<CounterInfo> info = db->DescribeCounter(name);
    Must(info.status(), "describe counter " + name);
    infos[shards] = *info;
    spreads[shards] = Spread(cl, ns, *info);
  }
  std::printf("== hot counter: %d threads, %" PRIu64
              " ops per run; shards per master: 1 shard:",
              set.hot_threads, set.hot_ops);
  for (int k : spreads[1]) std::printf(" %d", k);
  std::printf(", 16 shards:");
  for (int k : spreads[16]) std::printf(" %d", k);
  std::printf("\n");
  std::fflush(stdout);

  std::map<uint32_t, uint64_t> counted;
  Json runs = Json::array();
  Json summary = Json::object();
  for (Work work : {Work::kOnce, Work::kPlain, Work::kOnceBatch}) {
    std::map<uint32_t, std::vector<double>> rates, busiest_cpu, busiest_exec,
        replica_cpu, client_cpu, busiest_share;
    std::vector<double> ratios;
    for (int r = 0; r < set.hot_rounds; ++r) {
      std::map<uint32_t, HotRun> pair;
      for (int k = 0; k < 2; ++k) {
        const uint32_t shards = shard_counts[(k + r) % 2];
        const uint64_t base =
            (static_cast<uint64_t>(r) * 3 + static_cast<uint64_t>(work)) *
                100'000'000'000ULL + (shards == 1 ? 0 : 50'000'000'000ULL);
        HotRun h = RunHot(db, cl, set, "hot-" + std::to_string(shards), work,
                          base, &counted[shards]);
        const Busiest b = BusiestMaster(*cl, h.nodes);
        rates[shards].push_back(h.rate);
        busiest_cpu[shards].push_back(h.nodes[b.node].cpu_us_per_call);
        busiest_exec[shards].push_back(h.nodes[b.node].usec_per_call);
        busiest_share[shards].push_back(b.share);
        replica_cpu[shards].push_back(ReplicaCpuPerCall(*cl, h.nodes, b.node));
        client_cpu[shards].push_back(h.client_cpu_us_per_op);
        std::printf("%s, %2u shard(s), round %d: %s (client CPU %.2f us/op)\n"
                    "  %s\n",
                    WorkName(work), shards, r + 1, Rate(h.rate).c_str(),
                    h.client_cpu_us_per_op, MastersLine(*cl, h.nodes).c_str());
        std::fflush(stdout);
        runs.push_back({{"work", WorkName(work)},
                        {"shards", shards},
                        {"round", r + 1},
                        {"ops", h.ops},
                        {"ops_per_s", h.rate},
                        {"client_cpu_us_per_op", h.client_cpu_us_per_op},
                        {"nodes", NodesJson(*cl, h.nodes)}});
        pair[shards] = h;
      }
      ratios.push_back(pair[16].rate / pair[1].rate);
    }
    Json w = Json::object();
    for (uint32_t shards : shard_counts) {
      w[std::to_string(shards)] = {
          {"ops_per_s", Median(rates[shards])},
          {"busiest_master_share", Median(busiest_share[shards])},
          {"busiest_master_usec_per_call", Median(busiest_exec[shards])},
          {"busiest_master_cpu_us_per_call", Median(busiest_cpu[shards])},
          {"its_replica_cpu_us_per_call", Median(replica_cpu[shards])},
          {"client_cpu_us_per_op", Median(client_cpu[shards])}};
    }
    w["ratio_16_vs_1"] = Median(ratios);
    w["ratio_min"] = *std::min_element(ratios.begin(), ratios.end());
    w["ratio_max"] = *std::max_element(ratios.begin(), ratios.end());
    std::printf(
        "%s: 1 shard %s, 16 shards %s (medians), 16/1 %.2f (%.2f..%.2f); "
        "busiest master: %.1f vs %.1f us/call exec, %.1f vs %.1f us/call "
        "CPU, %.0f%% vs %.0f%% of the calls\n",
        WorkName(work), Rate(Median(rates[1])).c_str(),
        Rate(Median(rates[16])).c_str(), Median(ratios),
        w["ratio_min"].get<double>(), w["ratio_max"].get<double>(),
        Median(busiest_exec[1]), Median(busiest_exec[16]),
        Median(busiest_cpu[1]), Median(busiest_cpu[16]),
        100 * Median(busiest_share[1]), 100 * Median(busiest_share[16]));
    std::fflush(stdout);
    summary[WorkName(work)] = w;
  }
  // Every op counted once: each counter's value is what was applied.
  for (uint32_t shards : shard_counts) {
    const std::string name = "hot-" + std::to_string(shards);
    Result<int64_t> v = db->ReadExact(name);
    Must(v.status(), "read " + name);
    if (static_cast<uint64_t>(*v) != counted[shards]) {
      Die(name + " reads " + std::to_string(*v) + ", want " +
          std::to_string(counted[shards]));
    }
  }

  // The model: masters on machines of their own. Inputs: the CPU per call
  // of the master serving the 1-shard counter (all its calls, from
  // --hot-threads clients, one op per call), of its replica, and, when the
  // overhead part ran, the masters' CPU per call under tally's pipelines.
  Json model = Json::object();
  const int most = *std::max_element(spreads[16].begin(), spreads[16].end());
  std::printf("== model: one master per machine (3 machines), each master's "
              "capacity 1e6 / its CPU us per call; 16 shards: x 16 / the "
              "busiest master's %d\n", most);
  struct Input {
    std::string name;
    double cpu, exec, replica;
  };
  std::vector<Input> inputs;
  for (Work work : {Work::kOnce, Work::kPlain}) {
    const Json& w = summary[WorkName(work)]["1"];
    inputs.push_back({WorkName(work),
                      w["busiest_master_cpu_us_per_call"].get<double>(),
                      w["busiest_master_usec_per_call"].get<double>(),
                      w["its_replica_cpu_us_per_call"].get<double>()});
  }
  if (pipelined.cpu > 0) {
    inputs.push_back({"once_pipelined", pipelined.cpu, pipelined.exec,
                      pipelined.replica});
  }
  for (const Input& in : inputs) {
    const double cap1 = 1e6 / in.cpu;
    const double cap16 = cap1 * 16.0 / most;
    std::printf(
        "%s: %.1f us CPU per call on the master (%.1f us executing the "
        "function; its replica %.1f us): 1 shard caps at %s, 16 shards at %s "
        "(%.2fx)\n",
        in.name.c_str(), in.cpu, in.exec, in.replica, Rate(cap1).c_str(),
        Rate(cap16).c_str(), 16.0 / most);
    model[in.name] = {{"master_cpu_us_per_call", in.cpu},
                      {"master_usec_per_call", in.exec},
                      {"replica_cpu_us_per_call", in.replica},
                      {"cap_1_shard_per_s", cap1},
                      {"cap_16_shards_per_s", cap16},
                      {"busiest_master_shards", most},
                      {"speedup", 16.0 / most}};
  }
  std::fflush(stdout);
  return {{"threads", set.hot_threads},
          {"ops_per_run", set.hot_ops},
          {"spread_1", spreads[1]},
          {"spread_16", spreads[16]},
          {"runs", runs},
          {"summary", summary},
          {"model", model}};
}

int Main(int argc, char** argv) {
  const Settings set = ParseArgs(argc, argv);
  std::map<std::string, std::string> env = test::ReadRedisEnv();
  if (env.empty()) Die("TALLY_REDIS_ENV names no cluster env file");
  for (const char* k : {"TALLY_REDIS_TARGET", "TALLY_REDIS_PASSWORD_FILE",
                        "TALLY_REDIS_ADMIN_PASSWORD_FILE", "TALLY_REDIS_PORTS"}) {
    if (env[k].empty()) Die(std::string("the env file has no ") + k);
  }
  std::vector<int> ports;
  std::istringstream in(env["TALLY_REDIS_PORTS"]);
  for (int p; in >> p;) ports.push_back(p);
  const std::string password = ReadFirstLine(env["TALLY_REDIS_PASSWORD_FILE"]);
  Cluster cl(ports, ReadFirstLine(env["TALLY_REDIS_ADMIN_PASSWORD_FILE"]));

  // A namespace of its own per run: the counters start empty.
  const std::string ns =
      "bench-" + std::to_string(Clock::System()->NowMillis());
  setenv("TALLY_REDIS_PASSWORD_FILE", env["TALLY_REDIS_PASSWORD_FILE"].c_str(),
         1);
  std::unique_ptr<Db> db;
  Must(Db::Open(Options(), env["TALLY_REDIS_TARGET"] + "/" + ns, &db),
       "open " + env["TALLY_REDIS_TARGET"] + "/" + ns);

  Json out = {{"namespace", ns}, {"rounds", set.rounds}};
  std::string load0;
  std::getline(std::ifstream("/proc/loadavg"), load0);
  out["loadavg_start"] = load0;
  PipelinedCost pipelined;
  if (set.overhead) {
    out["overhead"] = RunOverhead(db.get(), &cl, set, ns, password);
    if (set.redis_benchmark) {
      pipelined.cpu = out["overhead"]["masters_cpu_us_per_call_tally"];
      pipelined.exec = out["overhead"]["masters_usec_per_call_tally"];
      pipelined.replica = out["overhead"]["replicas_cpu_us_per_call_tally"];
    }
  }
  if (set.hot) out["hot"] = RunHotCounter(db.get(), &cl, set, ns, pipelined);
  std::string load1;
  std::getline(std::ifstream("/proc/loadavg"), load1);
  out["loadavg_end"] = load1;
  std::printf("load average: start %s, end %s\n", load0.c_str(),
              load1.c_str());
  if (!set.json.empty()) {
    std::ofstream f(set.json);
    f << out.dump(1) << "\n";
    if (!f) Die("cannot write " + set.json);
  }
  return 0;
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) { return tally::bench::Main(argc, argv); }
