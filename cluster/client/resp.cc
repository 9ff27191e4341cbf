#include "cluster/client/resp.h"

#include <cassert>
#include <charconv>
#include <cstring>

namespace tally::cluster {

size_t RespHeaderBytes(size_t n) {
  size_t digits = 1;
  for (; n >= 10; n /= 10) ++digits;
  return 3 + digits;  // kind, digits, CRLF
}

size_t RespBulkBytes(size_t n) { return RespHeaderBytes(n) + n + 2; }

char* PutRespHeader(char* at, char kind, size_t n) {
  *at++ = kind;
  at = std::to_chars(at, at + 20, n).ptr;
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

char* PutRespBulk(char* at, std::string_view arg) {
  at = PutRespHeader(at, '$', arg.size());
  if (!arg.empty()) std::memcpy(at, arg.data(), arg.size());
  at += arg.size();
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

void RespArgs::Add(std::string_view arg) {
  // Appended, not resized and overwritten: a caller that reserved its
  // buffer (or reuses it) pays no allocation and no fill.
  char header[24];
  const char* end = PutRespHeader(header, '$', arg.size());
  bytes_.append(header, static_cast<size_t>(end - header))
      .append(arg.data(), arg.size())
      .append("\r\n", 2);
  ++count_;
}

void RespArgs::AddNumber(int64_t n) {
  char buf[24];
  const char* end = std::to_chars(buf, buf + sizeof(buf), n).ptr;
  Add(std::string_view(buf, static_cast<size_t>(end - buf)));
}

void RespArgs::AddJoined(std::initializer_list<std::string_view> parts) {
  size_t n = 0;
  for (const std::string_view p : parts) n += p.size();
  char header[24];
  const char* end = PutRespHeader(header, '$', n);
  bytes_.append(header, static_cast<size_t>(end - header));
  for (const std::string_view p : parts) bytes_.append(p.data(), p.size());
  bytes_.append("\r\n", 2);
  ++count_;
}

void RespArgs::Append(const RespArgs& more) {
  bytes_.append(more.bytes_);
  count_ += more.count_;
}

std::string RespCommand(std::initializer_list<const RespArgs*> parts) {
  size_t count = 0;
  size_t bytes = 0;
  for (const RespArgs* p : parts) {
    count += p->count();
    bytes += p->bytes().size();
  }
  std::string out;
  out.resize(RespHeaderBytes(count) + bytes);
  char* at = PutRespHeader(out.data(), '*', count);
  for (const RespArgs* p : parts) {
    if (!p->bytes().empty()) {
      std::memcpy(at, p->bytes().data(), p->bytes().size());
    }
    at += p->bytes().size();
  }
  assert(at == out.data() + out.size());
  return out;
}

}  // namespace tally::cluster
