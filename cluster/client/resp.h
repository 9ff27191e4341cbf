// RESP formatting of commands: an array of bulk strings with explicit
// lengths (binary safe), as redisAppendCommandArgv formats it. Connection
// formats a Command's args this way as it buffers them; a caller that makes
// many arguments per command (the backend's writes) formats them as it
// makes them (RespArgs), without a std::string per argument, and hands the
// finished bytes over (Command::resp, RespCommand).
//
// Thread safety: RespArgs is a value (one thread at a time); the
// functions are pure.

#ifndef TALLY_CLUSTER_CLIENT_RESP_H_
#define TALLY_CLUSTER_CLIENT_RESP_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tally::cluster {

// The bytes of one bulk string of `n` bytes: "$n\r\n", the bytes, "\r\n".
size_t RespBulkBytes(size_t n);
// Writes "*n\r\n" (an array of n) or "$n\r\n" (a bulk string's header) at
// `at`; returns the end. Room: RespHeaderBytes(n).
char* PutRespHeader(char* at, char kind, size_t n);
size_t RespHeaderBytes(size_t n);
// Writes bulk string `arg` at `at` (RespBulkBytes(arg.size()) bytes);
// returns the end.
char* PutRespBulk(char* at, std::string_view arg);

// Arguments of a command, formatted as bulk strings in order. Each is
// written straight into the buffer, which grows by doubling and keeps its
// capacity across Clear(): a reused RespArgs formats without allocating.
class RespArgs {
 public:
  void Add(std::string_view arg);
  // The decimal `n` as one argument.
  void AddNumber(int64_t n);
  // The concatenation of `parts` as one argument.
  void AddJoined(std::initializer_list<std::string_view> parts);
  // Every argument of `more`, after these.
  void Append(const RespArgs& more);
  // No arguments; the buffer's capacity is kept for reuse.
  void Clear() {
    size_ = 0;
    count_ = 0;
  }
  void Reserve(size_t bytes) {
    if (buffer_.size() < bytes) buffer_.resize(bytes);
  }
  size_t count() const { return count_; }
  std::string_view bytes() const { return {buffer_.data(), size_}; }

 private:
  // Room for `n` more bytes, counted as written: where they go.
  char* Extend(size_t n);

  std::string buffer_;  // bytes [0, size_) are the arguments
  size_t size_ = 0;
  size_t count_ = 0;
};

// The whole command: the array header of all `parts`' arguments, then
// their bytes in order (one allocation).
std::string RespCommand(std::initializer_list<const RespArgs*> parts);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_RESP_H_
