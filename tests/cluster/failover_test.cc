// A master killed under load (docs/cluster.md, "Durability"): what an
// acknowledged once-increment is worth across a failover, with and without
// the target's replicas=1.
//
//   tally_cluster_failover_test [--mode acked|plain|both] [--runs N]
//       [--writers N] [--batch N] [--pause-replica-ms MS] [--dir DIR]
//       [--script PATH]
//
// Each run starts a cluster of its own (scripts/redis_cluster start DIR:
// killing a master of the shared ctest cluster would cost the other tests
// their writes), creates a counter of 16 shards (so that every master holds
// some) and runs `--writers` threads (4) of once-increments, each event a
// new id: IncrementOnce calls, or with `--batch N` Apply calls of N (a
// higher rate). Once the load runs, the first seed's master is killed
// (SIGKILL, its pid from its pidfile); with `--pause-replica-ms` its
// replica is stopped (SIGSTOP) that long before, and continued right after
// the kill: a replica that lags when its master dies. The writers go on
// through the failover (the client retries the dead master's slots within
// its budget until the replica is promoted), then for a while against the
// promoted master alone, the killed node is started again (it rejoins as
// the promoted one's replica), the writers go on until writes are
// acknowledged again, and stop. Then:
//   - every event's marker is read (ListMarkers): an event whose call was
//     acknowledged and whose marker is gone is lost;
//   - the value equals the deltas of the markers present (nothing counted
//     twice, nothing counted without its marker), so it is at most the
//     acknowledged deltas plus those of the calls that failed;
//   - every event is delivered again: one whose marker is there answers
//     kDuplicate, one whose marker is not (lost, or failed before a master
//     kept it) is applied; then the value is every event's delta once and
//     there is one marker per event.
// Mode acked (?replicas=1&wait_ms=500) asserts that no acknowledged event
// is lost; mode plain (no WAIT) measures the loss and asserts the rest.
// One summary line per run; exit 0 when every check held, 1 on the first
// that did not (FAILED: why, on stderr; the cluster's files are kept), 77
// without redis-server (ctest: skipped), 2 for a usage error.
//
// Defaults: both modes, 5 runs each, IncrementOnce, no pause (the long
// mode of docs/testing.md); ctest runs one of each mode with a paused
// replica. Public API (tally/tally.h) plus process control.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tally/tally.h"
#include "testutil/redis_env.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"

extern char** environ;

namespace tally {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kShards = 16;
constexpr int kWaitMs = 500;  // mode acked: WAIT 1 500
// How long a wait for the cluster (a promotion, a rejoin) or for the
// writers' progress may take before the run fails.
constexpr auto kDeadline = std::chrono::seconds(40);
// How often the cluster's state is asked while waiting for it.
constexpr auto kPoll = std::chrono::milliseconds(20);
// The load before the kill and after the rejoin: at least this long, and
// at least this many acknowledged events (fewer under the sanitizers,
// which run 5-10x slower).
constexpr auto kLoadPhase = std::chrono::milliseconds(1000);
constexpr uint64_t kPhaseAcked = test::kSanitized ? 100 : 1000;
// How long the writers write to the promoted master alone before the
// killed node is started again.
constexpr auto kOrphanPhase = std::chrono::milliseconds(300);
// A call this slow waited for the failover.
constexpr auto kSlowCall = std::chrono::milliseconds(1000);

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// ---- process control ----

// Runs argv (argv[0] a path) with stdout into *out (when not null) and
// stderr inherited; its exit status, or -1 when it could not be started or
// was killed by a signal.
int RunCommand(const std::vector<std::string>& argv, std::string* out) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int err =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    std::fprintf(stderr, "failover: cannot run %s: %s\n", args[0],
                 std::strerror(err));
    return -1;
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 ||
         (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out != nullptr) *out = std::move(text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What scripts/redis_cluster roles says of one node.
struct Role {
  enum class Kind { kDown, kMaster, kReplica } kind = Role::Kind::kDown;
  bool cluster_ok = false;  // its cluster_state
  int master_port = 0;      // a replica's master
  bool link_up = false;     // a replica's link to it
};

// A cluster of its own, in DIR, through scripts/redis_cluster.
class Cluster {
 public:
  Cluster(std::string script, std::string dir)
      : script_(std::move(script)), dir_(std::move(dir)) {}
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() {
    if (started_) Stop(false);
  }

  // 0 when it runs; 77 when redis-server is missing; else 1 (the script
  // said why on stderr). A cluster an interrupted run left in DIR is
  // stopped first.
  int Start() {
    if (RunCommand({script_, "stop", dir_, "--clean"}, nullptr) != 0) return 1;
    std::string out;
    const int rc = RunCommand({script_, "start", dir_}, &out);
    if (rc != 0) return rc == 77 ? 77 : 1;
    started_ = true;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    env_ = test::ReadRedisEnvFile(out);
    std::istringstream ports(env_["TALLY_REDIS_PORTS"]);
    for (int p; ports >> p;) ports_.push_back(p);
    if (env_.count("TALLY_REDIS_TARGET") == 0 || ports_.size() != 6) {
      std::fprintf(stderr, "failover: %s holds no target or not 6 ports\n",
                   out.c_str());
      return 1;
    }
    return 0;
  }

  // Stops the nodes; `clean` removes DIR's files too (else its logs stay).
  // A node left stopped by SIGSTOP (a run that failed during the pause) is
  // continued first, so that it shuts down when asked.
  bool Stop(bool clean) {
    for (const int port : paused_) Signal(port, SIGCONT);
    started_ = false;
    std::vector<std::string> argv = {script_, "stop", dir_};
    if (clean) argv.push_back("--clean");
    return RunCommand(argv, nullptr) == 0;
  }

  const std::string& target() { return env_["TALLY_REDIS_TARGET"]; }
  const std::string& password_file() {
    return env_["TALLY_REDIS_PASSWORD_FILE"];
  }
  const std::vector<int>& ports() const { return ports_; }
  const std::string& dir() const { return dir_; }

  // The roles of `ports` (every node when empty); false when the script
  // failed or answered something else.
  bool Roles(const std::vector<int>& ports, std::map<int, Role>* roles) {
    std::vector<std::string> argv = {script_, "roles", dir_};
    for (const int p : ports) argv.push_back(std::to_string(p));
    std::string out;
    if (RunCommand(argv, &out) != 0) return false;
    roles->clear();
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream in(line);
      int port = 0;
      std::string kind, state, link;
      Role r;
      if (!(in >> port >> kind)) return false;
      if (kind == "master" || kind == "replica") {
        if (!(in >> state)) return false;
        r.cluster_ok = state == "ok";
        r.kind = kind == "master" ? Role::Kind::kMaster : Role::Kind::kReplica;
      }
      if (kind == "replica" && !(in >> r.master_port >> link)) return false;
      r.link_up = link == "up";
      (*roles)[port] = r;
    }
    return true;
  }

  // Sends `sig` to the node of `port`, by the pid in its pidfile when that
  // process is the node's redis-server (as the script checks it).
  bool Signal(int port, int sig) {
    std::ifstream pidfile(dir_ + "/node-" + std::to_string(port) +
                          "/redis.pid");
    pid_t pid = 0;
    if (!(pidfile >> pid) || pid <= 0) return false;
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string title((std::istreambuf_iterator<char>(cmdline)),
                      std::istreambuf_iterator<char>());
    std::replace(title.begin(), title.end(), '\0', ' ');
    if (title.find("redis-server") == std::string::npos ||
        title.find("127.0.0.1:" + std::to_string(port) + " ") ==
            std::string::npos) {
      return false;
    }
    if (::kill(pid, sig) != 0) return false;
    if (sig == SIGSTOP) paused_.push_back(port);
    if (sig == SIGCONT) {
      paused_.erase(std::remove(paused_.begin(), paused_.end(), port),
                    paused_.end());
    }
    return true;
  }

  bool StartNode(int port) {
    return RunCommand({script_, "start-node", dir_, std::to_string(port)},
                      nullptr) == 0;
  }

 private:
  std::string script_;
  std::string dir_;
  bool started_ = false;
  std::map<std::string, std::string> env_;
  std::vector<int> ports_;
  std::vector<int> paused_;  // nodes sent SIGSTOP and not yet SIGCONT
};

// ---- the writers ----

// How one event's call was answered.
enum class Answer : uint8_t {
  kApplied,    // acknowledged: counted now
  kDuplicate,  // acknowledged: counted before (a resend of a lost reply)
  kUnacked,    // IOError: on its master, too few replicas confirmed
  kUnknown,    // IOError: outcome unknown (a lost reply, a spent budget)
  kOther,      // anything else: a failure of the test
};

bool Acked(Answer a) {
  return a == Answer::kApplied || a == Answer::kDuplicate;
}

struct Event {
  uint32_t writer = 0;
  uint32_t seq = 0;
  int64_t delta = 0;
  Answer answer = Answer::kOther;
  std::string Id() const {
    return "w" + std::to_string(writer) + "-" + std::to_string(seq);
  }
};

// The writers' shared progress, read by the run while they write.
struct Progress {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> acked{0};      // events acknowledged
  std::atomic<uint64_t> completed{0};  // calls answered, whatever the answer
  std::atomic<uint64_t> unacked{0};    // calls not acknowledged (replicas=)
  std::atomic<uint64_t> slow{0};       // calls of kSlowCall or more
  std::atomic<int64_t> max_call_us{0};
  std::atomic<int> other_errors{0};
};

// How one call was answered, for each of its events.
Answer AnswerOf(const Status& s, Outcome outcome) {
  if (s.ok() && outcome == Outcome::kApplied) return Answer::kApplied;
  if (s.ok() && outcome == Outcome::kDuplicate) return Answer::kDuplicate;
  if (s.ok() || !s.IsIOError()) return Answer::kOther;
  if (s.message().find("not acknowledged") != std::string::npos) {
    return Answer::kUnacked;
  }
  return Answer::kUnknown;
}

// One writer: calls of `batch` new events each (IncrementOnce for 1, else
// an Apply of `batch` once-increments: pipelined, a higher rate) until
// told to stop. A failed batch's events all count as failed, as its
// caller would have to take them (some of its tags may have committed).
void Write(Db* db, uint32_t writer, int batch, Progress* progress,
           std::vector<Event>* events, std::string* first_other) {
  uint32_t seq = 0;
  std::vector<Event> call;
  std::vector<IncrementResult> results;
  while (!progress->stop.load(std::memory_order_relaxed)) {
    call.clear();
    for (int i = 0; i < batch; ++i, ++seq) {
      Event e;
      e.writer = writer;
      e.seq = seq;
      e.delta = 1 + seq % 3;
      call.push_back(std::move(e));
    }
    const Clock::time_point start = Clock::now();
    Status s;
    results.assign(call.size(), IncrementResult());
    if (batch == 1) {
      Result<IncrementResult> r =
          db->IncrementOnce("c", call[0].Id(), call[0].delta);
      s = r.status();
      if (r.ok()) results[0] = r.value();
    } else {
      Batch b;
      for (const Event& e : call) b.AddOnce("c", e.Id(), e.delta);
      s = db->Apply(b, &results);
    }
    const Clock::duration took = Clock::now() - start;
    for (size_t i = 0; i < call.size(); ++i) {
      call[i].answer = AnswerOf(s, results[i].outcome);
    }
    const Answer answer = call[0].answer;
    if (answer == Answer::kOther && progress->other_errors.fetch_add(1) == 0) {
      *first_other =
          s.ok() ? "outcome " +
                       std::to_string(static_cast<int>(results[0].outcome))
                 : s.ToString();
    }
    if (answer == Answer::kUnacked) progress->unacked.fetch_add(1);
    if (Acked(answer)) progress->acked.fetch_add(call.size());
    progress->completed.fetch_add(1);
    if (took >= kSlowCall) progress->slow.fetch_add(1);
    const int64_t us =
        std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    int64_t seen = progress->max_call_us.load();
    while (us > seen &&
           !progress->max_call_us.compare_exchange_weak(seen, us)) {
    }
    events->insert(events->end(), call.begin(), call.end());
  }
}

// The writer threads; stopped and joined when it goes out of scope.
class Writers {
 public:
  Writers(Db* db, int n, int batch) : events_(n), first_other_(n) {
    for (int w = 0; w < n; ++w) {
      threads_.emplace_back(Write, db, static_cast<uint32_t>(w), batch,
                            &progress_, &events_[w], &first_other_[w]);
    }
  }
  ~Writers() { Join(); }
  void Join() {
    progress_.stop = true;
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  Progress& progress() { return progress_; }
  // After Join.
  const std::vector<std::vector<Event>>& events() const { return events_; }
  std::string FirstOther() const {
    for (const std::string& s : first_other_) {
      if (!s.empty()) return s;
    }
    return "";
  }

 private:
  Progress progress_;
  std::vector<std::vector<Event>> events_;  // per writer
  std::vector<std::string> first_other_;    // per writer
  std::vector<std::thread> threads_;
};

// ---- one run ----

struct Figures {
  uint64_t sent = 0, applied = 0, duplicate = 0, unacked = 0, unknown = 0;
  uint64_t lost = 0;  // acknowledged, marker gone
  int64_t lost_delta = 0;
  uint64_t held_unacked = 0;  // failed events whose marker is there
  double failover_s = 0;      // kill to the replica serving as master
  double rejoin_s = 0;        // start-node to all six nodes healthy
  uint64_t slow = 0;
  double max_call_s = 0;
  double start_s = 0, verify_s = 0, total_s = 0;  // cluster start, checks, run
};

// Polls `done` every kPoll until it holds or kDeadline passes.
template <typename F>
bool WaitFor(F done) {
  const Clock::time_point deadline = Clock::now() + kDeadline;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
  return true;
}

#define CHECK_OR_FAIL(cond, ...)                    \
  do {                                              \
    if (!(cond)) {                                  \
      std::fprintf(stderr, "FAILED: " __VA_ARGS__); \
      std::fprintf(stderr, "\n");                   \
      return false;                                 \
    }                                               \
  } while (0)

// Every node up, cluster_state ok on each, 3 masters, 3 replicas with
// their links up, and `port` a replica of `master`.
bool Healthy(const std::map<int, Role>& roles, int port, int master) {
  int masters = 0, replicas = 0;
  for (const auto& [p, r] : roles) {
    if (r.kind == Role::Kind::kDown || !r.cluster_ok) return false;
    if (r.kind == Role::Kind::kMaster) ++masters;
    if (r.kind == Role::Kind::kReplica && r.link_up) ++replicas;
  }
  auto it = roles.find(port);
  return masters == 3 && replicas == 3 && it != roles.end() &&
         it->second.kind == Role::Kind::kReplica &&
         it->second.master_port == master;
}

// Reads every marker of "c": event id -> delta.
bool ReadMarkers(Db* db, std::unordered_map<std::string, int64_t>* out) {
  ListMarkersOptions o;
  o.limit = kMaxListMarkers;
  while (true) {
    Result<std::vector<MarkerInfo>> page = db->ListMarkers("c", o);
    CHECK_OR_FAIL(page.ok(), "ListMarkers: %s",
                  page.status().ToString().c_str());
    for (const MarkerInfo& m : page.value()) (*out)[m.event_id] = m.delta;
    if (page.value().size() < o.limit) return true;
    o.start_after = page.value().back().event_id;
  }
}

// After the writers stopped: the figures, and every check of the header.
bool Verify(Db* db, bool acked_mode, const std::vector<Event>& events,
            Figures* f) {
  std::unordered_map<std::string, int64_t> markers;
  if (!ReadMarkers(db, &markers)) return false;
  Result<uint64_t> count = db->CountMarkers("c");
  CHECK_OR_FAIL(count.ok(), "CountMarkers: %s",
                count.status().ToString().c_str());
  CHECK_OR_FAIL(count.value() == markers.size(),
                "CountMarkers %llu, ListMarkers %zu",
                static_cast<unsigned long long>(count.value()), markers.size());
  Result<int64_t> value = db->ReadExact("c");
  CHECK_OR_FAIL(value.ok(), "ReadExact: %s", value.status().ToString().c_str());

  int64_t marked = 0, acked_delta = 0, failed_delta = 0, all_delta = 0;
  for (const auto& [id, delta] : markers) marked += delta;
  std::vector<std::string> lost_ids;
  size_t found = 0;
  for (const Event& e : events) {
    ++f->sent;
    all_delta += e.delta;
    (Acked(e.answer) ? acked_delta : failed_delta) += e.delta;
    f->applied += e.answer == Answer::kApplied;
    f->duplicate += e.answer == Answer::kDuplicate;
    f->unacked += e.answer == Answer::kUnacked;
    f->unknown += e.answer == Answer::kUnknown;
    auto it = markers.find(e.Id());
    if (it != markers.end()) {
      ++found;
      CHECK_OR_FAIL(it->second == e.delta,
                    "event %s: marker delta %lld, sent %lld", e.Id().c_str(),
                    static_cast<long long>(it->second),
                    static_cast<long long>(e.delta));
      if (!Acked(e.answer)) ++f->held_unacked;
    } else if (Acked(e.answer)) {
      ++f->lost;
      f->lost_delta += e.delta;
      if (lost_ids.size() < 10) lost_ids.push_back(e.Id());
    }
  }
  // Every marker is an event a writer sent.
  CHECK_OR_FAIL(found == markers.size(), "%zu markers of events no writer sent",
                markers.size() - found);
  // Nothing counted twice or without its marker: the value is its markers'
  // deltas, so at most the acknowledged deltas and the failed calls'.
  CHECK_OR_FAIL(value.value() == marked, "value %lld, its markers' deltas %lld",
                static_cast<long long>(value.value()),
                static_cast<long long>(marked));
  CHECK_OR_FAIL(value.value() <= acked_delta + failed_delta,
                "value %lld beyond acknowledged %lld + failed %lld",
                static_cast<long long>(value.value()),
                static_cast<long long>(acked_delta),
                static_cast<long long>(failed_delta));
  if (acked_mode && f->lost > 0) {
    std::string ids;
    for (const std::string& id : lost_ids) ids += " " + id;
    CHECK_OR_FAIL(false,
                  "replicas=1: %llu acknowledged events lost (delta %lld), "
                  "e.g.%s",
                  static_cast<unsigned long long>(f->lost),
                  static_cast<long long>(f->lost_delta), ids.c_str());
  }

  // Every event again: a counted one answers kDuplicate, the others (lost,
  // or failed before their master held them) are applied now.
  constexpr size_t kBatch = 1000;
  for (size_t at = 0; at < events.size(); at += kBatch) {
    Batch b;
    const size_t end = std::min(events.size(), at + kBatch);
    for (size_t i = at; i < end; ++i) {
      b.AddOnce("c", events[i].Id(), events[i].delta);
    }
    std::vector<IncrementResult> results;
    Status s = db->Apply(b, &results);
    CHECK_OR_FAIL(s.ok(), "redelivery: %s", s.ToString().c_str());
    for (size_t i = at; i < end; ++i) {
      const bool counted = markers.count(events[i].Id()) != 0;
      const Outcome want = counted ? Outcome::kDuplicate : Outcome::kApplied;
      CHECK_OR_FAIL(results[i - at].outcome == want,
                    "redelivery of %s (%s, marker %s): outcome %d",
                    events[i].Id().c_str(),
                    Acked(events[i].answer) ? "acknowledged" : "failed",
                    counted ? "present" : "absent",
                    static_cast<int>(results[i - at].outcome));
    }
  }
  value = db->ReadExact("c");
  CHECK_OR_FAIL(value.ok() && value.value() == all_delta,
                "after redelivery: value %s, every event's delta %lld",
                value.ok() ? std::to_string(value.value()).c_str()
                           : value.status().ToString().c_str(),
                static_cast<long long>(all_delta));
  count = db->CountMarkers("c");
  CHECK_OR_FAIL(count.ok() && count.value() == events.size(),
                "after redelivery: %s markers, %zu events",
                count.ok() ? std::to_string(count.value()).c_str()
                           : count.status().ToString().c_str(),
                events.size());
  return true;
}

struct RunConfig {
  std::string script;
  std::string dir;
  bool acked_mode = true;
  int writers = 4;
  int batch = 1;             // events per call: 1 IncrementOnce, else an Apply
  int pause_replica_ms = 0;  // the victim's replica stopped before the kill
};

// One run; 0 passed, 1 failed, 77 no redis-server.
int RunOnce(const RunConfig& config, Figures* f) {
  const Clock::time_point run_start = Clock::now();
  Cluster cluster(config.script, config.dir);
  const int started = cluster.Start();
  if (started != 0) return started;
  f->start_s = Seconds(Clock::now() - run_start);
  // Db::Open reads the password from this file; no writer runs yet.
  setenv("TALLY_REDIS_PASSWORD_FILE", cluster.password_file().c_str(), 1);
  const std::string target = cluster.target() + "/failover";
  auto run = [&]() -> bool {
    std::unique_ptr<Db> db;
    const std::string wtarget =
        target + (config.acked_mode
                      ? "?replicas=1&wait_ms=" + std::to_string(kWaitMs)
                      : "");
    Status s = Db::Open(Options(), wtarget, &db);
    CHECK_OR_FAIL(s.ok(), "open %s: %s", wtarget.c_str(), s.ToString().c_str());
    s = db->CreateCounter("c", CounterSpec{kShards});
    CHECK_OR_FAIL(s.ok(), "CreateCounter: %s", s.ToString().c_str());

    // The victim: the first seed, a master since `start` (redis-cli
    // --cluster create makes the first three nodes masters), and its
    // replica.
    std::map<int, Role> roles;
    CHECK_OR_FAIL(cluster.Roles({}, &roles), "roles");
    const int victim = cluster.ports()[0];
    int replica = 0;
    for (const auto& [port, r] : roles) {
      if (r.kind == Role::Kind::kReplica && r.master_port == victim) {
        replica = port;
      }
    }
    CHECK_OR_FAIL(roles[victim].kind == Role::Kind::kMaster && replica != 0,
                  "node %d is not a master with a replica", victim);

    Writers writers(db.get(), config.writers, config.batch);
    Progress& p = writers.progress();
    const Clock::time_point load_start = Clock::now();
    CHECK_OR_FAIL(WaitFor([&] {
                    return Clock::now() - load_start >= kLoadPhase &&
                           p.acked.load() >= kPhaseAcked;
                  }),
                  "the writers got %llu events acknowledged before the kill",
                  static_cast<unsigned long long>(p.acked.load()));

    if (config.pause_replica_ms > 0) {
      // A replica that lags when its master dies (a stall of its host, of
      // its disk, of the network): stopped while the writers go on, then
      // the master is killed and the replica continues.
      CHECK_OR_FAIL(cluster.Signal(replica, SIGSTOP), "SIGSTOP of %d", replica);
      // How long the load runs against the stopped replica (no
      // condition to wait for: the writers write meanwhile).
      std::this_thread::sleep_for(
          std::chrono::milliseconds(config.pause_replica_ms));
    }
    CHECK_OR_FAIL(cluster.Signal(victim, SIGKILL), "kill -9 of node %d",
                  victim);
    const Clock::time_point killed = Clock::now();
    if (config.pause_replica_ms > 0) {
      CHECK_OR_FAIL(cluster.Signal(replica, SIGCONT), "SIGCONT of %d", replica);
    }
    CHECK_OR_FAIL(WaitFor([&] {
                    std::map<int, Role> r;
                    return cluster.Roles({replica}, &r) &&
                           r[replica].kind == Role::Kind::kMaster &&
                           r[replica].cluster_ok;
                  }),
                  "replica %d was not promoted", replica);
    f->failover_s = Seconds(Clock::now() - killed);

    // The promoted master has no replica until the killed node returns:
    // with replicas=1 its writes answer IOError (WAIT 1 gets 0), without
    // they are acknowledged by it alone. The writers go on for a while
    // (kOrphanPhase, and with replicas=1 until such an IOError came).
    const uint64_t completed_then = p.completed.load();
    const uint64_t unacked_then = p.unacked.load();
    const Clock::time_point promoted = Clock::now();
    CHECK_OR_FAIL(
        WaitFor([&] {
          return Clock::now() - promoted >= kOrphanPhase &&
                 p.completed.load() > completed_then &&
                 (!config.acked_mode || p.unacked.load() > unacked_then);
        }),
        "no write answered by the promoted master alone (%llu "
        "calls, %llu not acknowledged)",
        static_cast<unsigned long long>(p.completed.load() - completed_then),
        static_cast<unsigned long long>(p.unacked.load() - unacked_then));

    const Clock::time_point restart = Clock::now();
    CHECK_OR_FAIL(cluster.StartNode(victim), "start-node %d", victim);
    CHECK_OR_FAIL(WaitFor([&] {
                    std::map<int, Role> r;
                    return cluster.Roles({}, &r) && Healthy(r, victim, replica);
                  }),
                  "node %d did not rejoin as the replica of %d", victim,
                  replica);
    f->rejoin_s = Seconds(Clock::now() - restart);

    // Writes are acknowledged again (with replicas=1: the returned node
    // confirms them).
    const uint64_t at_rejoin = p.acked.load();
    const Clock::time_point rejoined = Clock::now();
    CHECK_OR_FAIL(WaitFor([&] {
                    return Clock::now() - rejoined >= kLoadPhase &&
                           p.acked.load() >= at_rejoin + kPhaseAcked;
                  }),
                  "%llu events acknowledged after the rejoin",
                  static_cast<unsigned long long>(p.acked.load() - at_rejoin));
    writers.Join();
    CHECK_OR_FAIL(p.other_errors.load() == 0,
                  "%d calls answered neither OK nor IOError, first: %s",
                  p.other_errors.load(), writers.FirstOther().c_str());
    f->slow = p.slow.load();
    f->max_call_s = static_cast<double>(p.max_call_us.load()) / 1e6;
    // The killed master held shards of the counter: calls waited for the
    // failover or failed.
    uint64_t failed_events = 0;
    for (const std::vector<Event>& w : writers.events()) {
      for (const Event& e : w) failed_events += !Acked(e.answer);
    }
    CHECK_OR_FAIL(f->slow + failed_events > 0,
                  "no call waited or failed: the kill missed the load");

    std::vector<Event> events;
    for (const std::vector<Event>& w : writers.events()) {
      events.insert(events.end(), w.begin(), w.end());
    }
    // A new client, reading from the masters.
    std::unique_ptr<Db> reader;
    s = Db::Open(Options(), target, &reader);
    CHECK_OR_FAIL(s.ok(), "open %s: %s", target.c_str(), s.ToString().c_str());
    const Clock::time_point verify_start = Clock::now();
    const bool verified = Verify(reader.get(), config.acked_mode, events, f);
    f->verify_s = Seconds(Clock::now() - verify_start);
    return verified;
  };
  const bool ok = run();
  if (!ok) {
    cluster.Stop(false);
    std::fprintf(stderr, "failover: the cluster's files and logs are in %s\n",
                 cluster.dir().c_str());
    return 1;
  }
  cluster.Stop(true);
  f->total_s = Seconds(Clock::now() - run_start);
  return 0;
}

void PrintRun(const char* mode, int run, int runs, const Figures& f) {
  std::printf(
      "failover %s run %d/%d: acked %llu (applied %llu, duplicate %llu), "
      "errors %llu (not acknowledged %llu, unknown %llu; held by the cluster "
      "%llu), lost %llu (delta %lld), failover %.2f s, rejoin %.2f s, "
      "calls >= 1 s %llu, longest %.2f s; cluster start %.1f s, checks "
      "%.1f s, run %.1f s\n",
      mode, run, runs, static_cast<unsigned long long>(f.applied + f.duplicate),
      static_cast<unsigned long long>(f.applied),
      static_cast<unsigned long long>(f.duplicate),
      static_cast<unsigned long long>(f.unacked + f.unknown),
      static_cast<unsigned long long>(f.unacked),
      static_cast<unsigned long long>(f.unknown),
      static_cast<unsigned long long>(f.held_unacked),
      static_cast<unsigned long long>(f.lost),
      static_cast<long long>(f.lost_delta), f.failover_s, f.rejoin_s,
      static_cast<unsigned long long>(f.slow), f.max_call_s, f.start_s,
      f.verify_s, f.total_s);
  std::fflush(stdout);
}

int Usage() {
  std::fprintf(stderr,
               "usage: tally_cluster_failover_test [--mode acked|plain|both] "
               "[--runs N] [--writers N] [--batch N] [--dir DIR] "
               "[--script PATH]\n");
  return 2;
}

int Main(int argc, char** argv) {
  std::string mode = "both";
  int runs = 5;
  RunConfig config;
  config.script = TALLY_REDIS_CLUSTER_SCRIPT;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    const std::string value = argv[++i];
    if (arg == "--mode") {
      mode = value;
    } else if (arg == "--runs") {
      runs = std::atoi(value.c_str());
    } else if (arg == "--writers") {
      config.writers = std::atoi(value.c_str());
    } else if (arg == "--batch") {
      config.batch = std::atoi(value.c_str());
    } else if (arg == "--pause-replica-ms") {
      config.pause_replica_ms = std::atoi(value.c_str());
    } else if (arg == "--dir") {
      config.dir = value;
    } else if (arg == "--script") {
      config.script = value;
    } else {
      return Usage();
    }
  }
  if ((mode != "acked" && mode != "plain" && mode != "both") || runs < 1 ||
      config.writers < 1 || config.writers > 64 || config.batch < 1 ||
      config.batch > 1000) {
    return Usage();
  }
  std::unique_ptr<test::TempDir> temporary;
  if (config.dir.empty()) {
    temporary = std::make_unique<test::TempDir>("tally-failover");
    if (!temporary->ok()) return 1;
    config.dir = temporary->Sub("cluster");
  }
  std::vector<bool> modes;
  if (mode != "plain") modes.push_back(true);
  if (mode != "acked") modes.push_back(false);
  for (const bool acked : modes) {
    config.acked_mode = acked;
    const char* name = acked ? "replicas=1" : "plain";
    Figures total;
    for (int run = 1; run <= runs; ++run) {
      Figures f;
      const int rc = RunOnce(config, &f);
      if (rc == 77) {
        std::printf("failover: skipped, redis-server is not installed\n");
        return 77;
      }
      if (rc != 0) {
        if (temporary != nullptr) temporary->Keep();
        std::printf("failover %s run %d/%d: FAILED\n", name, run, runs);
        return 1;
      }
      PrintRun(name, run, runs, f);
      total.applied += f.applied;
      total.duplicate += f.duplicate;
      total.lost += f.lost;
    }
    std::printf(
        "failover %s: %d runs, acked %llu, lost %llu\n", name, runs,
        static_cast<unsigned long long>(total.applied + total.duplicate),
        static_cast<unsigned long long>(total.lost));
  }
  return 0;
}

}  // namespace
}  // namespace tally

int main(int argc, char** argv) { return tally::Main(argc, argv); }
