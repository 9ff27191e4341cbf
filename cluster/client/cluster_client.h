// ClusterClient: a Redis Cluster client over Debian's hiredis (0.14, which
// knows no cluster): the hash-slot map, routing, per-node pipelining, and
// the cluster's redirections and transient errors. The Redis backend
// (cluster/) sends every command through it; nothing else in tally talks
// to Redis.
//
// Routing: a command carries the hash slot of its keys (SlotOf). The
// client keeps the map slot -> master (and its replicas) from
// CLUSTER SLOTS, asked of any known node at Connect and again whenever a
// reply says the map moved. Per Run, the commands of one node go out in
// one pipelined write on one connection, whose replies are read back in
// order on that connection (one reply queue per connection: a connection
// is never shared by two Runs at once).
//
// Redirections and retries (docs/cluster.md, "Client"):
//   MOVED slot host:port  the map is refreshed and the command resent to
//                         the new owner (at most max_redirects times);
//   ASK slot host:port    ASKING then the command, once, on the target;
//   TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, READONLY, a refused
//   connection:           resent after a backoff (5 ms doubling to 200 ms)
//                         until retry_budget_ms has passed since the Run
//                         began, then a kError reply: the last error, the
//                         node and the budget. CLUSTERDOWN, MASTERDOWN,
//                         READONLY and connection failures refresh the map
//                         first (a failover may be why).
// The MOVED target goes first in the refresh: it knows it owns the slot,
// while another master may not have heard yet.
// A command whose reply is lost after it was written (a timeout, a
// connection dropped mid-pipeline) may or may not have run. An
// `idempotent` command is then resent like the above, after a refresh of
// the map (the caller made it safe to run twice: a once-increment under
// its event id, a read); any other gets the reply kind kUnknown and is
// never resent. A command never written (the connection could not be
// opened, or the write failed before its bytes) did not run and is resent
// like a TRYAGAIN, whatever its flags. Timeouts of several silent nodes
// add up: each node's replies are read in turn, each read waiting up to
// command_timeout_ms.
//
// Connections: a pool per node. A Run takes one connection per node it
// needs (opening one when none is idle), writes every node's pipeline
// before it reads any reply (the nodes work in parallel), and gives the
// connections back after; one that saw an I/O error or a timeout is closed,
// never given back (replies still owed on it would reach the next Run).
// Commands resent (redirected, retried) go out in a follow-up round: their
// order relative to the first round's commands of the same node is not
// kept; each reply still lands at its command's index.
//
// Ownership: the caller owns the client (Connect hands it over); it owns
// its connections. Thread safety: every method may be called from many
// threads at once; each Run uses connections no other Run holds.

#ifndef TALLY_CLUSTER_CLIENT_CLUSTER_CLIENT_H_
#define TALLY_CLUSTER_CLIENT_CLUSTER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tally/status.h"

namespace tally::cluster {

inline constexpr int kSlots = 16384;

// One reply, copied out of hiredis.
struct Reply {
  enum class Kind {
    kNil,
    kString,
    kInteger,
    kArray,
    kStatus,
    kError,
    kUnknown
  };
  Kind kind = Kind::kNil;
  int64_t integer = 0;          // kInteger
  std::string str;              // kString, kStatus, kError (the error text,
                                // e.g. "NOPERM ..."), kUnknown (why)
  std::vector<Reply> elements;  // kArray
  // Under RunOptions::wait_replicas: how many replicas the WAIT sent after
  // this command (same connection, same round) reported; 0 when no WAIT
  // answered for it (its reply was an error the client made, or the WAIT
  // failed or was refused). -1 when no WAIT was asked.
  int replicas_acked = -1;

  bool ok() const { return kind != Kind::kError && kind != Kind::kUnknown; }
};

struct Command {
  std::vector<std::string> args;  // the command and its arguments (binary)
  int slot = -1;                  // SlotOf(a key of it); -1: any master
  // May run on a replica (read_from_replicas). A read sent to a replica
  // that fails in any way, its reply lost included, is resent to the
  // master: a replica changes nothing.
  bool read_only = false;
  bool idempotent = false;  // may be resent when its outcome is unknown
  // Or, with args empty, the command already formatted as RESP
  // (cluster/client/resp.h, RespCommand): sent as it is. Last, so that
  // aggregate initializers of {args, slot, ...} keep their meaning.
  std::string resp = std::string();
};

struct Endpoint {
  std::string host;
  int port = 0;
};

struct ClientOptions {
  std::vector<Endpoint> seeds;  // any nodes of the cluster (one is enough)
  // AUTH user password; with user empty, AUTH password (the default
  // user); both empty: no AUTH. The password is never logged nor put in a
  // Status or a reply.
  std::string user;
  std::string password;
  int connect_timeout_ms = 1000;
  int command_timeout_ms = 2000;
  int retry_budget_ms = 10000;        // how long transient errors are retried
  int max_redirects = 16;             // MOVED/ASK hops per command
  bool read_from_replicas = false;    // read_only commands go to a replica
  std::string client_name = "tally";  // CLIENT SETNAME; empty: not sent
  // Idle connections kept per node; more are opened when Runs need them at
  // once and closed when given back beyond this.
  int max_idle_connections_per_node = 16;
};

struct RunOptions {
  // After each node's commands: WAIT wait_replicas wait_timeout_ms on the
  // same connection; each command's Reply::replicas_acked says what it
  // answered. 0: no WAIT.
  // wait_timeout_ms: 1..60000 (WAIT 0 would block forever); WAIT's answer
  // is read with a timeout of wait_timeout_ms + command_timeout_ms.
  int wait_replicas = 0;
  int wait_timeout_ms = 100;
};

// What the client did since Connect, for tests and metrics. Counts only
// grow.
struct ClientStats {
  uint64_t moved = 0;              // MOVED replies followed
  uint64_t asked = 0;              // ASK replies followed (ASKING sent)
  uint64_t retried = 0;            // commands resent after a transient error
  uint64_t resent_lost = 0;        // idempotent commands resent, reply lost
  uint64_t unknown = 0;            // kUnknown replies given
  uint64_t replica_fallbacks = 0;  // replica reads resent to the master
  uint64_t refreshes = 0;          // slot maps read (CLUSTER SLOTS)
  uint64_t connections_opened = 0;
  // Closed after an I/O error or a timeout, or found closed by the node
  // when taken from the pool.
  uint64_t connections_dropped = 0;
};

struct NodeInfo {
  Endpoint endpoint;
  std::string id;  // CLUSTER SLOTS' node id
  bool master = true;
  std::string master_id;                         // replicas: their master's id
  std::vector<std::pair<int, int>> slot_ranges;  // masters: inclusive ranges
};

class ClusterClient {
 public:
  // Connects to the first seed that answers, AUTHs, reads the slot map.
  // IOError naming each seed and why when none answers; NotSupported when
  // the server is not a cluster (CLUSTER SLOTS refused); InvalidArgument
  // naming the user (never the password) with Redis's text when AUTH is
  // refused, and for options out of bounds (no seed, a timeout <= 0, a
  // negative budget, redirect count or idle count).
  static Status Connect(const ClientOptions& options,
                        std::unique_ptr<ClusterClient>* client);

  // The hash slot of `key`: CRC16 (XMODEM) of the key, or of its hash tag
  // (the bytes between the first '{' and the next '}', when not empty),
  // modulo 16384, as Redis computes it.
  static int SlotOf(std::string_view key);

  virtual ~ClusterClient() = default;

  // Runs `commands` and fills `replies` (one per command, in order). A
  // Redis error reply is a reply of kind kError, not a failed Status; a
  // command that could not be delivered within the retry budget gets a
  // kError reply naming the node and why. Returns a non-OK Status only for
  // a caller error (InvalidArgument: a slot outside -1..16383, a command
  // with no arguments, RunOptions outside their bounds).
  virtual Status Run(const std::vector<Command>& commands,
                     std::vector<Reply>* replies,
                     const RunOptions& options = {}) = 0;

  // Runs `command` on every master (slot ignored), e.g. FUNCTION LIST;
  // one reply per master, in the order of the masters in Nodes() (taken
  // from the map when the call starts). Transient errors are retried on
  // the same node; redirections are not followed.
  virtual Status RunOnMasters(const Command& command,
                              std::vector<Reply>* replies) = 0;

  // The nodes as of the last slot-map refresh: the masters, ordered by
  // their first slot, then the replicas.
  virtual std::vector<NodeInfo> Nodes() const = 0;
  // Reads CLUSTER SLOTS again now, from the first known node (masters,
  // replicas, then seeds) that answers. IOError naming each node tried when
  // none does; the map in use stays as it was.
  virtual Status RefreshSlots() = 0;

  virtual ClientStats Stats() const = 0;

 protected:
  ClusterClient() = default;
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_CLUSTER_CLIENT_H_
