// ClusterClientImpl: routing by the slot map, per-node pipelines in rounds,
// redirections and retries (the rules are in cluster_client.h).
//
// A Run is a loop of rounds. Each round routes its pending commands by the
// current map (or to the node a redirection named) and groups them per
// node (Route), writes every node's pipeline (Send), then reads every
// node's replies (Collect) and settles each command: done (its reply is
// final) or pending again for the next round (MOVED, ASK, a transient
// error, a lost reply of an idempotent command, a replica read falling
// back to the master). Between rounds the map is refreshed when a reply
// said it moved, and the Run sleeps a backoff when a transient error was
// seen. Every command leaves the loop: redirections are bounded by
// max_redirects, a fallback happens once, and the rest by retry_budget_ms.

#include "cluster/client/cluster_client.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <thread>
#include <utility>

#include "cluster/client/connection.h"
#include "cluster/client/connection_pool.h"
#include "cluster/client/crc16.h"
#include "cluster/client/redirect.h"
#include "cluster/client/slot_map.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace tally::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// The longest WAIT a Run may ask: past it a writer would stall longer than
// a failover takes (docs/cluster.md).
constexpr int kMaxWaitMs = 60'000;

constexpr std::chrono::milliseconds kFirstBackoff{5};
constexpr std::chrono::milliseconds kMaxBackoff{200};
static_assert(kFirstBackoff <= kMaxBackoff);

Reply ErrorReply(std::string text) {
  Reply r;
  r.kind = Reply::Kind::kError;
  r.str = std::move(text);
  return r;
}

// One command's state across the rounds of a Run.
struct Job {
  size_t index = 0;  // into the caller's commands and replies
  const Command* command = nullptr;
  bool pinned = false;       // RunOnMasters: always `target`, no redirection
  bool has_target = false;   // go to `target`, not the map's owner
  Endpoint target;           // pinned node, or the one MOVED/ASK named
  bool asking = false;       // precede with ASKING (ASK redirection)
  bool master_only = false;  // a replica read failed: the master from now on
  int redirects = 0;
  std::string last_error;  // the last transient error, for the final reply
};

// What one round did to one job.
enum class Next {
  kOpen,      // not settled yet (no round ends with one)
  kDone,      // its reply is final
  kRedirect,  // resend at once (MOVED, ASK, replica fallback)
  kRetry,     // resend after the backoff, within the budget
};

// One node's share of a round.
struct Batch {
  Endpoint node;
  bool replica_reads = false;              // some job reads from this replica
  std::unique_ptr<Connection> connection;  // null: could not connect
  std::vector<size_t> jobs;                // indices into Round::jobs, in order
  std::vector<bool> routed_replica;        // parallel to jobs
  std::vector<size_t> end_offsets;         // buffered bytes after each job
  Status lost;  // non-OK: the replies from first_lost on are lost
  size_t first_lost = 0;
  int replicas_acked = 0;  // WAIT's answer
};

// One round of a Run.
struct Round {
  explicit Round(std::vector<Job>* pending)
      : jobs(*pending), next(pending->size(), Next::kOpen) {}
  std::vector<Job>& jobs;
  std::vector<Next> next;  // parallel to jobs
  std::vector<Batch> batches;
  bool refresh = false;                     // read the map before the next
  std::unique_ptr<Endpoint> refresh_first;  // a new owner a MOVED named
};

class ClusterClientImpl final : public ClusterClient {
 public:
  explicit ClusterClientImpl(const ClientOptions& options)
      : options_(options),
        pool_(ConnectionOptionsOf(options),
              options.max_idle_connections_per_node) {}

  Status Init() { return Refresh(nullptr, nullptr); }

  Status Run(const std::vector<Command>& commands, std::vector<Reply>* replies,
             const RunOptions& options) override;
  Status RunOnMasters(const Command& command,
                      std::vector<Reply>* replies) override;
  std::vector<NodeInfo> Nodes() const override;
  Status RefreshSlots() override { return Refresh(nullptr, nullptr); }
  ClientStats Stats() const override;

 private:
  static ConnectionOptions ConnectionOptionsOf(const ClientOptions& o) {
    ConnectionOptions c;
    c.connect_timeout_ms = o.connect_timeout_ms;
    c.command_timeout_ms = o.command_timeout_ms;
    c.user = o.user;
    c.password = o.password;
    c.client_name = o.client_name;
    return c;
  }

  std::shared_ptr<const SlotMap> CurrentMap() const TALLY_EXCLUDES(map_mu_) {
    MutexLock lock(&map_mu_);
    return map_;
  }
  // Reads CLUSTER SLOTS; with `seen` set, only when the map is still
  // `seen` (many Runs that saw the same MOVED refresh once). `first`, when
  // set, is asked first: the node a MOVED named knows it owns the slot,
  // while another master may not have heard yet (gossip).
  Status Refresh(const SlotMap* seen, const Endpoint* first)
      TALLY_EXCLUDES(refresh_mu_, map_mu_);

  // Runs the jobs in rounds until each has its final reply in `replies`.
  void Execute(std::vector<Job> jobs, std::vector<Reply>* replies,
               const RunOptions& options);
  // A round's three steps.
  void Route(const SlotMap& map, Round* round);
  void Send(const RunOptions& options, Round* round,
            std::vector<Reply>* replies);
  void Collect(const RunOptions& options, Round* round,
               std::vector<Reply>* replies);
  void ReadBatch(const RunOptions& options, Batch* batch, Round* round,
                 std::vector<Reply>* replies);

  // Settles a job from the reply its node gave.
  Next OnReply(Reply&& reply, const Endpoint& node, bool from_replica,
               Job* job, Reply* final_reply, Round* round);
  // Settles a job that never reached its node (`why`): it did not run.
  Next OnNotSent(const Status& why, bool to_replica, Job* job,
                 Reply* final_reply, Round* round);
  // Settles a job whose command may have run but whose reply is lost.
  Next OnLost(const Status& why, bool from_replica, Job* job,
              Reply* final_reply, Round* round);

  static void Count(std::atomic<uint64_t>* counter) {
    counter->fetch_add(1, std::memory_order_relaxed);
  }

  const ClientOptions options_;
  ConnectionPool pool_;

  mutable Mutex map_mu_;
  std::shared_ptr<const SlotMap> map_ TALLY_GUARDED_BY(map_mu_);
  Mutex refresh_mu_;  // one CLUSTER SLOTS read at a time

  std::atomic<uint32_t> replica_turn_{0};  // spreads reads over replicas

  std::atomic<uint64_t> moved_{0}, asked_{0}, retried_{0}, resent_lost_{0},
      unknown_{0}, replica_fallbacks_{0}, refreshes_{0};
};

Status ClusterClientImpl::Refresh(const SlotMap* seen, const Endpoint* first) {
  MutexLock refresh_lock(&refresh_mu_);
  std::shared_ptr<const SlotMap> current = CurrentMap();
  if (seen != nullptr && current.get() != seen) return Status::OK();

  // Known masters first (they hold the authoritative view of their own
  // slots), then replicas, then the seeds (the whole map may be gone).
  std::vector<Endpoint> candidates;
  if (first != nullptr) candidates.push_back(*first);
  if (current != nullptr) {
    for (const NodeInfo& node : current->Nodes()) {
      candidates.push_back(node.endpoint);
    }
  }
  for (const Endpoint& seed : options_.seeds) candidates.push_back(seed);

  std::string failures;
  std::vector<std::string> tried;
  for (const Endpoint& node : candidates) {
    const std::string address = AddressOf(node);
    if (std::find(tried.begin(), tried.end(), address) != tried.end()) {
      continue;
    }
    tried.push_back(address);
    std::unique_ptr<Connection> c;
    Status s = pool_.Checkout(node, &c);
    if (s.IsInvalidArgument()) return s;  // AUTH refused: same everywhere
    Reply reply;
    if (s.ok()) s = c->Call({"CLUSTER", "SLOTS"}, &reply);
    if (c != nullptr) pool_.GiveBack(std::move(c));
    if (s.ok() && reply.kind == Reply::Kind::kError) {
      if (reply.str.find("cluster support disabled") != std::string::npos) {
        return Status::NotSupported(address +
                                    " is not a cluster node: " + reply.str);
      }
      s = Status::IOError(address + ": CLUSTER SLOTS: " + reply.str);
    }
    std::shared_ptr<const SlotMap> map;
    if (s.ok()) s = SlotMap::Parse(reply, node, &map);
    if (s.ok() && map->shards().empty()) {
      s = Status::IOError(address + ": CLUSTER SLOTS lists no master");
    }
    if (s.ok()) {
      Count(&refreshes_);
      MutexLock lock(&map_mu_);
      map_ = std::move(map);
      return Status::OK();
    }
    if (!failures.empty()) failures += "; ";
    failures += s.message();
  }
  if (tried.empty()) return Status::InvalidArgument("no seed node given");
  return Status::IOError("no node answered CLUSTER SLOTS: " + failures);
}

Status ClusterClientImpl::Run(const std::vector<Command>& commands,
                              std::vector<Reply>* replies,
                              const RunOptions& options) {
  assert(replies != nullptr);
  for (const Command& command : commands) {
    if (command.args.empty() && command.resp.empty()) {
      return Status::InvalidArgument("a command has no arguments");
    }
    if (command.slot < -1 || command.slot >= kSlots) {
      return Status::InvalidArgument("slot " + std::to_string(command.slot) +
                                     " is outside -1.." +
                                     std::to_string(kSlots - 1));
    }
  }
  if (options.wait_replicas < 0) {
    return Status::InvalidArgument("wait_replicas is negative");
  }
  if (options.wait_replicas > 0 &&
      (options.wait_timeout_ms <= 0 || options.wait_timeout_ms > kMaxWaitMs)) {
    return Status::InvalidArgument("wait_timeout_ms must be in 1.." +
                                   std::to_string(kMaxWaitMs) +
                                   " (0 would make WAIT block forever), not " +
                                   std::to_string(options.wait_timeout_ms));
  }
  replies->assign(commands.size(), Reply());
  std::vector<Job> jobs(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    jobs[i].index = i;
    jobs[i].command = &commands[i];
  }
  Execute(std::move(jobs), replies, options);
  return Status::OK();
}

Status ClusterClientImpl::RunOnMasters(const Command& command,
                                       std::vector<Reply>* replies) {
  assert(replies != nullptr);
  if (command.args.empty() && command.resp.empty()) {
    return Status::InvalidArgument("a command has no arguments");
  }
  const std::shared_ptr<const SlotMap> map = CurrentMap();
  assert(map != nullptr);  // Connect read one
  const std::vector<SlotMap::Shard>& shards = map->shards();
  replies->assign(shards.size(), Reply());
  std::vector<Job> jobs(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    jobs[i].index = i;
    jobs[i].command = &command;
    jobs[i].pinned = true;
    jobs[i].has_target = true;
    jobs[i].target = shards[i].master;
    jobs[i].master_only = true;
  }
  Execute(std::move(jobs), replies, RunOptions());
  return Status::OK();
}

Next ClusterClientImpl::OnReply(Reply&& reply, const Endpoint& node,
                                bool from_replica, Job* job, Reply* final_reply,
                                Round* round) {
  if (reply.kind != Reply::Kind::kError) {
    *final_reply = std::move(reply);
    return Next::kDone;
  }
  const ErrorClass error = ClassifyError(reply.str);
  if (from_replica) {
    // Whatever the replica said (MOVED: it no longer serves the slot;
    // MASTERDOWN; even WRONGTYPE), the master answers for itself.
    Count(&replica_fallbacks_);
    job->master_only = true;
    if (error == ErrorClass::kMoved) round->refresh = true;
    return Next::kRedirect;
  }
  if (job->pinned || error == ErrorClass::kFinal) {
    *final_reply = reply;
    return Next::kDone;
  }
  if (error == ErrorClass::kRetry || error == ErrorClass::kRetryAfterRefresh) {
    job->last_error = reply.str + " (from " + AddressOf(node) + ")";
    // The redirections so far reached a node that asks to wait (TRYAGAIN
    // while a slot migrates: a call whose keys are split between source
    // and target, for as long as the move takes): the time budget bounds
    // the waiting, and max_redirects counts hops without such an answer.
    job->redirects = 0;
    if (error == ErrorClass::kRetryAfterRefresh) round->refresh = true;
    return Next::kRetry;
  }
  assert(error == ErrorClass::kMoved || error == ErrorClass::kAsk);
  Endpoint target;
  if (!ParseRedirect(reply.str, node, &target)) {
    *final_reply = reply;
    return Next::kDone;
  }
  if (++job->redirects > options_.max_redirects) {
    *final_reply = ErrorReply(
        reply.str + " (from " + AddressOf(node) + "; gave up after " +
        std::to_string(options_.max_redirects) + " redirections)");
    return Next::kDone;
  }
  // MOVED: to the new owner now, and the whole map is stale. ASK: this one
  // key is mid-migration; the map stays as it is.
  job->has_target = true;
  job->target = target;
  job->asking = error == ErrorClass::kAsk;
  if (error == ErrorClass::kMoved) {
    Count(&moved_);
    round->refresh = true;
    if (round->refresh_first == nullptr) {
      round->refresh_first = std::make_unique<Endpoint>(target);
    }
  } else {
    Count(&asked_);
  }
  return Next::kRedirect;
}

Next ClusterClientImpl::OnNotSent(const Status& why, bool to_replica, Job* job,
                                  Reply* final_reply, Round* round) {
  if (to_replica) {
    Count(&replica_fallbacks_);
    job->master_only = true;
    return Next::kRedirect;
  }
  if (why.IsInvalidArgument()) {  // AUTH refused: no retry changes that
    *final_reply = ErrorReply(why.message());
    return Next::kDone;
  }
  job->last_error = why.message();
  round->refresh = true;  // the node may be gone (a failover)
  return Next::kRetry;
}

Next ClusterClientImpl::OnLost(const Status& why, bool from_replica, Job* job,
                               Reply* final_reply, Round* round) {
  round->refresh = true;  // a failover may be why
  if (from_replica) {
    Count(&replica_fallbacks_);
    job->master_only = true;
    return Next::kRedirect;
  }
  if (job->command->idempotent) {
    Count(&resent_lost_);
    job->last_error = why.message();
    return Next::kRetry;
  }
  Count(&unknown_);
  final_reply->kind = Reply::Kind::kUnknown;
  final_reply->str = "reply lost after the command was sent (" + why.message() +
                     "): it may or may not have run; not resent, as it is "
                     "not idempotent";
  return Next::kDone;
}

void ClusterClientImpl::Route(const SlotMap& map, Round* round) {
  for (size_t j = 0; j < round->jobs.size(); ++j) {
    const Job& job = round->jobs[j];
    Endpoint node;
    bool replica = false;
    if (job.has_target) {
      node = job.target;
    } else if (job.command->slot < 0) {
      const std::vector<SlotMap::Shard>& shards = map.shards();
      node = shards[job.index % shards.size()].master;
    } else {
      const SlotMap::Shard* shard = map.ShardOf(job.command->slot);
      if (shard == nullptr) {
        round->jobs[j].last_error = "slot " +
                                    std::to_string(job.command->slot) +
                                    " is served by no node";
        round->next[j] = Next::kRetry;
        round->refresh = true;
        continue;
      }
      if (options_.read_from_replicas && job.command->read_only &&
          !job.master_only && !shard->replicas.empty()) {
        const uint32_t turn =
            replica_turn_.fetch_add(1, std::memory_order_relaxed);
        node = shard->replicas[turn % shard->replicas.size()];
        replica = true;
      } else {
        node = shard->master;
      }
    }
    // A round has a batch per node it reaches: a handful, searched in turn.
    auto it = std::find_if(round->batches.begin(), round->batches.end(),
                           [&node](const Batch& b) {
                             return b.node.port == node.port &&
                                    b.node.host == node.host;
                           });
    if (it == round->batches.end()) {
      round->batches.emplace_back();
      round->batches.back().node = node;
      it = round->batches.end() - 1;
    }
    Batch& batch = *it;
    batch.jobs.push_back(j);
    batch.routed_replica.push_back(replica);
    batch.replica_reads = batch.replica_reads || replica;
  }
}

void ClusterClientImpl::Send(const RunOptions& options, Round* round,
                             std::vector<Reply>* replies) {
  // Connect and buffer every node's pipeline.
  for (Batch& batch : round->batches) {
    Status s = pool_.Checkout(batch.node, &batch.connection);
    if (s.ok() && batch.replica_reads) {
      s = batch.connection->EnableReadOnly();
    }
    if (!s.ok()) {
      for (size_t k = 0; k < batch.jobs.size(); ++k) {
        Job& job = round->jobs[batch.jobs[k]];
        round->next[batch.jobs[k]] = OnNotSent(s, batch.routed_replica[k], &job,
                                               &(*replies)[job.index], round);
      }
      if (batch.connection != nullptr) {
        pool_.GiveBack(std::move(batch.connection));
      }
      continue;
    }
    Connection& c = *batch.connection;
    for (size_t j : batch.jobs) {
      if (round->jobs[j].asking) c.Append({"ASKING"});
      const Command& command = *round->jobs[j].command;
      if (command.args.empty()) {
        c.AppendFormatted(command.resp);
      } else {
        c.Append(command.args);
      }
      batch.end_offsets.push_back(c.buffered_bytes());
    }
    if (options.wait_replicas > 0) {
      c.Append({"WAIT", std::to_string(options.wait_replicas),
                std::to_string(options.wait_timeout_ms)});
    }
  }

  // Write every pipeline before reading any reply: the nodes work on
  // theirs while Collect reads the first.
  for (Batch& batch : round->batches) {
    if (batch.connection == nullptr) continue;
    const size_t total = batch.connection->buffered_bytes();
    size_t unsent = 0;
    Status s = batch.connection->Flush(&unsent);
    if (s.ok()) continue;
    // A job whose last byte was written may have run: lost. One whose
    // last byte never left never reached the node.
    const size_t written = total - unsent;
    batch.first_lost = batch.jobs.size();
    for (size_t k = 0; k < batch.jobs.size(); ++k) {
      Job& job = round->jobs[batch.jobs[k]];
      if (batch.end_offsets[k] <= written) {
        batch.first_lost = std::min(batch.first_lost, k);
      } else {
        round->next[batch.jobs[k]] = OnNotSent(s, batch.routed_replica[k], &job,
                                               &(*replies)[job.index], round);
      }
    }
    batch.lost = std::move(s);
  }
}

void ClusterClientImpl::ReadBatch(const RunOptions& options, Batch* batch,
                                  Round* round, std::vector<Reply>* replies) {
  Connection& c = *batch->connection;
  if (batch->lost.ok()) {
    size_t k = 0;
    for (; k < batch->jobs.size(); ++k) {
      const size_t j = batch->jobs[k];
      Job& job = round->jobs[j];
      Reply asking;
      Reply reply;
      Status s = job.asking ? c.ReadReply(&asking) : Status::OK();
      if (s.ok()) s = c.ReadReply(&reply);
      if (!s.ok()) {
        batch->lost = std::move(s);
        break;
      }
      if (job.asking && asking.kind == Reply::Kind::kError) {
        (*replies)[job.index] =
            ErrorReply("ASKING refused by " + c.address() + ": " + asking.str);
        round->next[j] = Next::kDone;
        continue;
      }
      job.asking = false;
      round->next[j] = OnReply(std::move(reply), batch->node,
                               batch->routed_replica[k],
                               &job, &(*replies)[job.index], round);
    }
    batch->first_lost = k;
    if (batch->lost.ok() && options.wait_replicas > 0) {
      // The node answers WAIT after up to wait_timeout_ms, on purpose.
      Reply reply;
      Status s = c.ReadReply(
          &reply, options.wait_timeout_ms + options_.command_timeout_ms);
      // A WAIT refused or lost acknowledges nothing: 0.
      if (s.ok() && reply.kind == Reply::Kind::kInteger) {
        batch->replicas_acked = static_cast<int>(reply.integer);
      }
    }
  }
  for (size_t k = batch->first_lost; k < batch->jobs.size(); ++k) {
    const size_t j = batch->jobs[k];
    if (round->next[j] != Next::kOpen) continue;  // never written: settled
    Job& job = round->jobs[j];
    round->next[j] = OnLost(batch->lost, batch->routed_replica[k], &job,
                            &(*replies)[job.index], round);
  }
  if (options.wait_replicas > 0) {
    for (size_t j : batch->jobs) {
      if (round->next[j] == Next::kDone) {
        (*replies)[round->jobs[j].index].replicas_acked = batch->replicas_acked;
      }
    }
  }
}

void ClusterClientImpl::Collect(const RunOptions& options, Round* round,
                                std::vector<Reply>* replies) {
  for (Batch& batch : round->batches) {
    if (batch.connection == nullptr) continue;
    ReadBatch(options, &batch, round, replies);
    pool_.GiveBack(std::move(batch.connection));  // closed if broken
  }
}

void ClusterClientImpl::Execute(std::vector<Job> pending,
                                std::vector<Reply>* replies,
                                const RunOptions& options) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::milliseconds(options_.retry_budget_ms);
  std::chrono::milliseconds backoff = kFirstBackoff;

  while (!pending.empty()) {
    const std::shared_ptr<const SlotMap> map = CurrentMap();
    assert(map != nullptr);
    Round round(&pending);
    Route(*map, &round);
    Send(options, &round, replies);
    Collect(options, &round, replies);

    // The jobs of the next round: redirected ones at once, retried ones
    // after a backoff while the budget lasts.
    std::vector<Job> again;
    std::vector<bool> retried;  // parallel to `again`: kRetry this round
    for (size_t j = 0; j < pending.size(); ++j) {
      assert(round.next[j] != Next::kOpen);
      if (round.next[j] == Next::kDone) continue;
      Job& job = pending[j];
      const bool retry = round.next[j] == Next::kRetry;
      assert(!retry || !job.last_error.empty());
      if (retry && !job.pinned) {
        job.has_target = false;  // back to the map: a redirection may be
        job.asking = false;      // stale by the time it goes again
      }
      again.push_back(std::move(job));
      retried.push_back(retry);
    }
    if (round.refresh && !again.empty()) {
      // On failure the old map still routes; the next MOVED tries again.
      Refresh(map.get(), round.refresh_first.get()).IgnoreError();
    }
    pending = std::move(again);
    if (std::find(retried.begin(), retried.end(), true) == retried.end()) {
      continue;  // redirections only (or nothing left)
    }

    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      const long long spent_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - start)
              .count();
      const std::string spent = " (retried for " + std::to_string(spent_ms) +
                                " ms; retry_budget_ms is " +
                                std::to_string(options_.retry_budget_ms) + ")";
      std::vector<Job> still;
      for (size_t j = 0; j < pending.size(); ++j) {
        if (!retried[j]) {  // redirected this round: it gets its one go
          still.push_back(std::move(pending[j]));
          continue;
        }
        (*replies)[pending[j].index] =
            ErrorReply(pending[j].last_error + spent);
      }
      pending = std::move(still);
      continue;
    }
    for (bool r : retried) {
      if (r) Count(&retried_);
    }
    std::this_thread::sleep_for(
        std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
  if (options.wait_replicas > 0) {
    // A command that got no WAIT answer (the client made its reply, or the
    // WAIT was lost) counts no replica.
    for (Reply& reply : *replies) {
      if (reply.replicas_acked < 0) reply.replicas_acked = 0;
    }
  }
}

std::vector<NodeInfo> ClusterClientImpl::Nodes() const {
  const std::shared_ptr<const SlotMap> map = CurrentMap();
  return map == nullptr ? std::vector<NodeInfo>() : map->Nodes();
}

ClientStats ClusterClientImpl::Stats() const {
  ClientStats s;
  s.moved = moved_.load(std::memory_order_relaxed);
  s.asked = asked_.load(std::memory_order_relaxed);
  s.retried = retried_.load(std::memory_order_relaxed);
  s.resent_lost = resent_lost_.load(std::memory_order_relaxed);
  s.unknown = unknown_.load(std::memory_order_relaxed);
  s.replica_fallbacks = replica_fallbacks_.load(std::memory_order_relaxed);
  s.refreshes = refreshes_.load(std::memory_order_relaxed);
  s.connections_opened = pool_.opened();
  s.connections_dropped = pool_.dropped();
  return s;
}

}  // namespace

Status ClusterClient::Connect(const ClientOptions& options,
                              std::unique_ptr<ClusterClient>* client) {
  assert(client != nullptr);
  if (options.seeds.empty()) {
    return Status::InvalidArgument("no seed node given");
  }
  if (options.connect_timeout_ms <= 0 || options.command_timeout_ms <= 0) {
    return Status::InvalidArgument(
        "connect_timeout_ms and command_timeout_ms must be positive");
  }
  if (options.retry_budget_ms < 0 || options.max_redirects < 0 ||
      options.max_idle_connections_per_node < 0) {
    return Status::InvalidArgument(
        "retry_budget_ms, max_redirects and max_idle_connections_per_node "
        "must not be negative");
  }
  auto impl = std::make_unique<ClusterClientImpl>(options);
  Status s = impl->Init();
  if (!s.ok()) return s;
  *client = std::move(impl);
  return Status::OK();
}

int ClusterClient::SlotOf(std::string_view key) { return KeyHashSlot(key); }

}  // namespace tally::cluster
