// A hiredis connection to the redis-server that bench/run_suite.sh starts
// on 127.0.0.1 (port in $REDIS_PORT), shared by the Redis peers of bench/
// (redis_peer_bench and tally_likes_bench): connect and FLUSHALL, commands,
// pipelining (Append, then Next per reply) and the few figures the peers
// read back (GET as an integer, DBSIZE, INFO memory).
//
// Thread safety: one Redis per thread.

#ifndef TALLY_BENCH_REDIS_CLIENT_H_
#define TALLY_BENCH_REDIS_CLIENT_H_

#include <hiredis/hiredis.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace tally::bench {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};

class Redis {
 public:
  // Connects and empties the server; returns an error text or "".
  std::string Connect() {
    const char* port = std::getenv("REDIS_PORT");
    if (port == nullptr) return "REDIS_PORT is not set";
    c_.reset(redisConnect("127.0.0.1", std::atoi(port)));
    if (c_ == nullptr) return "redisConnect failed";
    if (c_->err != 0) return c_->errstr;
    Reply r = Command("FLUSHALL");
    return r != nullptr && r->type == REDIS_REPLY_STATUS ? "" : Error();
  }

  std::string Error() const {
    return c_ != nullptr && c_->err != 0 ? c_->errstr : "unexpected reply";
  }

  template <typename... Args>
  Reply Command(const char* format, Args... args) {
    return Reply(
        static_cast<redisReply*>(redisCommand(c_.get(), format, args...)));
  }

  template <typename... Args>
  bool Append(const char* format, Args... args) {
    return redisAppendCommand(c_.get(), format, args...) == REDIS_OK;
  }

  // One command of argc arguments (argv[i] of lens[i] bytes), pipelined.
  bool AppendArgv(int argc, const char** argv, const size_t* lens) {
    return redisAppendCommandArgv(c_.get(), argc, argv, lens) == REDIS_OK;
  }

  Reply Next() {
    void* r = nullptr;
    if (redisGetReply(c_.get(), &r) != REDIS_OK) return nullptr;
    return Reply(static_cast<redisReply*>(r));
  }

  // GET as an integer (a missing key is 0); -1 on error.
  int64_t GetInt(const char* key) {
    Reply r = Command("GET %s", key);
    if (r == nullptr) return -1;
    if (r->type == REDIS_REPLY_NIL) return 0;
    return r->type == REDIS_REPLY_STRING ? std::atoll(r->str) : -1;
  }

  int64_t DbSize() {
    Reply r = Command("DBSIZE");
    return r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  }

  // INFO memory's used_memory, in bytes; -1 on error.
  int64_t UsedMemory() { return MemoryField("used_memory"); }

  // One field of INFO memory (used_memory, used_memory_rss ...) as an
  // integer; -1 on error.
  int64_t MemoryField(const std::string& field) {
    Reply r = Command("INFO memory");
    if (r == nullptr || r->type != REDIS_REPLY_STRING) return -1;
    const std::string info(r->str, r->len);
    const std::string tag = "\r\n" + field + ":";
    const size_t at = info.find(tag);
    return at == std::string::npos ? -1
                                   : std::atoll(info.c_str() + at + tag.size());
  }

 private:
  std::unique_ptr<redisContext, ContextFree> c_;
};

}  // namespace tally::bench

#endif  // TALLY_BENCH_REDIS_CLIENT_H_
