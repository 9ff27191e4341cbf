#include "cluster/client/connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cluster/client/resp.h"

namespace tally::cluster {
namespace {

timeval TimevalOfMs(int ms) {
  assert(ms > 0);
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

// hiredis builds each reply through these (the reader's object
// functions): straight into the caller's Reply (the reader's privdata, set
// by ReadReply), with no redisReply objects to allocate, copy and free.
Reply* ReplyOf(const redisReadTask* task) {
  if (task->parent == nullptr) return static_cast<Reply*>(task->privdata);
  Reply* parent = static_cast<Reply*>(task->parent->obj);
  assert(task->idx >= 0 &&
         static_cast<size_t>(task->idx) < parent->elements.size());
  return &parent->elements[static_cast<size_t>(task->idx)];
}

void* CreateString(const redisReadTask* task, char* str, size_t len) {
  Reply* r = ReplyOf(task);
  // hiredis 0.14 speaks RESP2 only: a bulk string, a status or an error.
  r->kind = task->type == REDIS_REPLY_ERROR    ? Reply::Kind::kError
            : task->type == REDIS_REPLY_STATUS ? Reply::Kind::kStatus
                                               : Reply::Kind::kString;
  r->str.assign(str, len);
  return r;
}

void* CreateArray(const redisReadTask* task, int elements) {
  Reply* r = ReplyOf(task);
  r->kind = Reply::Kind::kArray;
  r->elements.resize(static_cast<size_t>(std::max(elements, 0)));
  return r;
}

void* CreateInteger(const redisReadTask* task, long long value) {
  Reply* r = ReplyOf(task);
  r->kind = Reply::Kind::kInteger;
  r->integer = value;
  return r;
}

void* CreateNil(const redisReadTask* task) {
  Reply* r = ReplyOf(task);
  r->kind = Reply::Kind::kNil;
  return r;
}

// The replies are the caller's: hiredis has nothing to free.
void FreeNothing(void*) {}

redisReplyObjectFunctions kReplyFunctions = {
    CreateString, CreateArray, CreateInteger, CreateNil, FreeNothing};

// Whether an error reply to AUTH or CLIENT SETNAME is about who the
// client is (a retry cannot help) rather than the node's state.
bool IsCredentialError(const std::string& error) {
  return error.rfind("WRONGPASS", 0) == 0 || error.rfind("NOPERM", 0) == 0 ||
         error.find("AUTH") != std::string::npos;
}

}  // namespace

std::string AddressOf(const Endpoint& endpoint) {
  return endpoint.host + ":" + std::to_string(endpoint.port);
}

Connection::Connection(const Endpoint& endpoint, redisContext* context,
                       int timeout_ms)
    : endpoint_(endpoint),
      address_(AddressOf(endpoint)),
      context_(context),
      command_timeout_ms_(timeout_ms) {
  assert(context_ != nullptr);
}

Connection::~Connection() { redisFree(context_); }

Status Connection::Open(const Endpoint& endpoint,
                        const ConnectionOptions& options,
                        std::unique_ptr<Connection>* connection) {
  assert(connection != nullptr);
  assert(options.connect_timeout_ms > 0 && options.command_timeout_ms > 0);
  const std::string address = AddressOf(endpoint);
  redisContext* context =
      redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port,
                              TimevalOfMs(options.connect_timeout_ms));
  if (context == nullptr) {
    return Status::IOError("connect to " + address + ": out of memory");
  }
  if (context->err != 0) {
    std::string why = context->errstr;
    redisFree(context);
    return Status::IOError("connect to " + address + ": " + why);
  }
  context->reader->fn = &kReplyFunctions;
  if (redisSetTimeout(context, TimevalOfMs(options.command_timeout_ms)) !=
      REDIS_OK) {
    std::string why = context->errstr;
    redisFree(context);
    return Status::IOError("set the timeout of " + address + ": " + why);
  }
  std::unique_ptr<Connection> c(
      new Connection(endpoint, context, options.command_timeout_ms));

  // AUTH and CLIENT SETNAME in one round trip.
  const bool auth = !options.user.empty() || !options.password.empty();
  if (auth) {
    if (options.user.empty()) {
      c->Append({"AUTH", options.password});
    } else {
      c->Append({"AUTH", options.user, options.password});
    }
  }
  const bool name = !options.client_name.empty();
  if (name) c->Append({"CLIENT", "SETNAME", options.client_name});
  if (c->buffered_bytes() > 0) {
    size_t unsent = 0;
    Status s = c->Flush(&unsent);
    if (!s.ok()) return s;
    const std::string who = options.user.empty()
                                ? "the default user"
                                : "user '" + options.user + "'";
    Reply reply;
    if (auth) {
      s = c->ReadReply(&reply);
      if (!s.ok()) return s;
      // Redis's refusal ("WRONGPASS invalid username-password pair ...")
      // does not repeat the password; this message names the user only.
      // Another error ("ERR max number of clients reached", sent before
      // the node read anything) is the node's state, not the credentials'.
      if (reply.kind == Reply::Kind::kError) {
        const std::string text =
            "AUTH as " + who + " refused by " + address + ": " + reply.str;
        return IsCredentialError(reply.str) ? Status::InvalidArgument(text)
                                            : Status::IOError(text);
      }
    }
    if (name) {
      s = c->ReadReply(&reply);
      if (!s.ok()) return s;
      if (reply.kind == Reply::Kind::kError) {
        const std::string text = "CLIENT SETNAME as " + who + " refused by " +
                                 address + ": " + reply.str;
        return IsCredentialError(reply.str) ? Status::InvalidArgument(text)
                                            : Status::IOError(text);
      }
    }
  }
  *connection = std::move(c);
  return Status::OK();
}

void Connection::Append(const std::vector<std::string>& args) {
  assert(!args.empty());
  assert(!broken_);
  // RESP array of bulk strings (cluster/client/resp.h). Sized first and
  // written in place: one allocation at most, not one append per field.
  size_t bytes = RespHeaderBytes(args.size());
  for (const std::string& arg : args) bytes += RespBulkBytes(arg.size());
  const size_t start = out_.size();
  out_.resize(start + bytes);
  char* at = PutRespHeader(out_.data() + start, '*', args.size());
  for (const std::string& arg : args) at = PutRespBulk(at, arg);
  assert(at == out_.data() + out_.size());
}

void Connection::AppendFormatted(std::string_view resp) {
  assert(!resp.empty());
  assert(!broken_);
  out_.append(resp);
}

Status Connection::IOFailure(const char* what, int err, int timeout_ms) {
  broken_ = true;
  if (err == EAGAIN || err == EWOULDBLOCK) {
    return Status::IOError(address_ + ": " + what + ": timed out after " +
                           std::to_string(timeout_ms) + " ms");
  }
  return Status::IOError(address_ + ": " + what + ": " +
                         (err != 0 ? std::strerror(err) : "unknown error"));
}

Status Connection::Flush(size_t* unsent_bytes) {
  assert(unsent_bytes != nullptr);
  assert(!broken_);
  size_t written = 0;
  while (written < out_.size()) {
    // MSG_NOSIGNAL: EPIPE instead of SIGPIPE when the peer is gone. The
    // socket's SO_SNDTIMEO (redisSetTimeout) bounds each blocked send.
    const ssize_t n = send(context_->fd, out_.data() + written,
                           out_.size() - written, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      *unsent_bytes = out_.size() - written;
      out_.clear();
      return IOFailure("send", err, command_timeout_ms_);
    }
    written += static_cast<size_t>(n);
  }
  out_.clear();
  *unsent_bytes = 0;
  return Status::OK();
}

Status Connection::ReadReply(Reply* reply) {
  return ReadReply(reply, command_timeout_ms_);
}

Status Connection::ReadReply(Reply* reply, int timeout_ms) {
  assert(reply != nullptr);
  assert(timeout_ms > 0);
  assert(out_.empty());  // Flush first: hiredis would write() its own obuf
  if (broken_) return Status::IOError(address_ + ": connection broken");
  const bool other_timeout = timeout_ms != command_timeout_ms_;
  if (other_timeout &&
      redisSetTimeout(context_, TimevalOfMs(timeout_ms)) != REDIS_OK) {
    return IOFailure("set the read timeout", errno, timeout_ms);
  }
  // The reader builds the reply in *reply (kReplyFunctions).
  *reply = Reply();
  context_->reader->privdata = reply;
  void* raw = nullptr;
  errno = 0;
  const int rc = redisGetReply(context_, &raw);
  context_->reader->privdata = nullptr;
  const int err = errno;
  if (rc != REDIS_OK) {
    if (context_->err == REDIS_ERR_IO)
      return IOFailure("read", err, timeout_ms);
    broken_ = true;
    // EOF ("Server closed the connection"), a protocol error, OOM.
    return Status::IOError(address_ + ": read: " + context_->errstr);
  }
  if (other_timeout &&
      redisSetTimeout(context_, TimevalOfMs(command_timeout_ms_)) != REDIS_OK) {
    return IOFailure("restore the read timeout", errno, timeout_ms);
  }
  assert(raw == reply);  // blocking mode: a reply or an error
  (void)raw;
  return Status::OK();
}

Status Connection::Call(const std::vector<std::string>& args, Reply* reply) {
  assert(out_.empty());
  Append(args);
  size_t unsent = 0;
  Status s = Flush(&unsent);
  if (!s.ok()) return s;
  return ReadReply(reply);
}

Status Connection::EnableReadOnly() {
  if (read_only_) return Status::OK();
  Reply reply;
  Status s = Call({"READONLY"}, &reply);
  if (!s.ok()) return s;
  if (reply.kind == Reply::Kind::kError) {
    return Status::IOError(address_ + ": READONLY refused: " + reply.str);
  }
  read_only_ = true;
  return Status::OK();
}

bool Connection::Reusable() {
  if (broken_ || !out_.empty()) return false;
  pollfd p;
  p.fd = context_->fd;
  p.events = POLLIN;
  p.revents = 0;
  // Nothing is owed on an idle connection, so anything readable (EOF, a
  // reset, stray bytes) means it is unusable.
  return poll(&p, 1, 0) == 0;
}

}  // namespace tally::cluster
