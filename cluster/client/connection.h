// Connection: one TCP connection to one Redis node, over a hiredis
// redisContext in blocking mode. It sends pipelines and reads their replies
// in order; it knows nothing of slots or redirections (ClusterClient does).
//
// Use: Append commands (they are only buffered), Flush (one write of the
// whole pipeline), then ReadReply once per command, in order. A connection
// whose Flush or ReadReply failed is broken(): hiredis' state is undefined
// after an I/O error, and replies still owed on it would be read by the
// next user as its own, so the owner discards it.
//
// Writes go through send(MSG_NOSIGNAL), never hiredis' write(): a peer that
// reset the connection must not raise SIGPIPE in the embedding process.
//
// Ownership: owns its redisContext. Thread safety: none; one thread uses a
// connection at a time (ClusterClient's pool hands each to one Run).

#ifndef TALLY_CLUSTER_CLIENT_CONNECTION_H_
#define TALLY_CLUSTER_CLIENT_CONNECTION_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "tally/status.h"

struct redisContext;

namespace tally::cluster {

struct ConnectionOptions {
  int connect_timeout_ms = 1000;  // TCP connect
  int command_timeout_ms = 2000;  // each blocking read or write
  std::string user;               // AUTH user password; empty: AUTH password
  std::string password;     // empty with user empty: no AUTH; never logged
  std::string client_name;  // CLIENT SETNAME; empty: not set
};

// "host:port", the name of a node in messages and in the pool.
std::string AddressOf(const Endpoint& endpoint);

class Connection {
 public:
  // Connects, AUTHs and names the connection. IOError when the node cannot
  // be reached, answers nothing within the timeouts, or refuses for a
  // reason of its own (too many clients); InvalidArgument naming the user
  // (never the password), with Redis's text, when the credentials are
  // refused (WRONGPASS, NOPERM).
  static Status Open(const Endpoint& endpoint, const ConnectionOptions& options,
                     std::unique_ptr<Connection>* connection);

  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  const std::string& address() const { return address_; }

  // Buffers one command (binary-safe arguments). Nothing is sent yet.
  // Precondition: !args.empty().
  void Append(const std::vector<std::string>& args);
  // Buffers one command already formatted (Command::resp, RespCommand).
  void AppendFormatted(std::string_view resp);
  // Bytes appended and not yet written.
  size_t buffered_bytes() const { return out_.size(); }

  // Writes every buffered byte. On failure (the connection is then broken),
  // *unsent_bytes is how many bytes at the end of the buffer were never
  // written: a command wholly within them never reached the node. OK sets
  // it to 0.
  Status Flush(size_t* unsent_bytes);

  // Reads the next reply (blocking up to command_timeout_ms per read).
  // IOError when the connection failed or timed out: the connection is then
  // broken and every reply still owed on it is lost.
  Status ReadReply(Reply* reply);
  // The same with `timeout_ms` per read instead, for a reply the server
  // delays on purpose (WAIT's). Precondition: timeout_ms > 0.
  Status ReadReply(Reply* reply, int timeout_ms);

  // Append, Flush and ReadReply of one command, for setup and one-off
  // commands. Precondition: nothing is buffered or owed.
  Status Call(const std::vector<std::string>& args, Reply* reply);

  // Sends READONLY once (replica reads); later calls do nothing. A refusal
  // is an IOError (the node cannot serve reads then).
  Status EnableReadOnly();

  // Whether an I/O error or a timeout was seen (never use it again).
  bool broken() const { return broken_; }

  // Whether the connection can take a new pipeline: not broken, nothing
  // buffered, and the socket has nothing to read (a pooled connection
  // whose peer closed or reset it becomes readable: used, its pipeline
  // would be written into a dead socket and its replies taken for lost).
  bool Reusable();

 private:
  Connection(const Endpoint& endpoint, redisContext* context, int timeout_ms);
  Status IOFailure(const char* what, int err, int timeout_ms);

  const Endpoint endpoint_;
  const std::string address_;
  redisContext* const context_;  // owned
  const int command_timeout_ms_;
  std::string out_;  // formatted commands not yet written
  bool broken_ = false;
  bool read_only_ = false;
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_CONNECTION_H_
