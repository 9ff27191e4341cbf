#include "cluster/client/resp.h"

#include <algorithm>
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

char* RespArgs::Extend(size_t n) {
  if (size_ + n > buffer_.size()) {
    buffer_.resize(std::max(2 * buffer_.size(), size_ + n + 64));
  }
  char* at = buffer_.data() + size_;
  size_ += n;
  return at;
}

void RespArgs::Add(std::string_view arg) {
  char* at = Extend(RespBulkBytes(arg.size()));
  PutRespBulk(at, arg);
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
  char* at = PutRespHeader(Extend(RespBulkBytes(n)), '$', n);
  for (const std::string_view p : parts) {
    if (!p.empty()) std::memcpy(at, p.data(), p.size());
    at += p.size();
  }
  *at++ = '\r';
  *at++ = '\n';
  assert(at == buffer_.data() + size_);
  ++count_;
}

void RespArgs::Append(const RespArgs& more) {
  const std::string_view b = more.bytes();
  if (!b.empty()) std::memcpy(Extend(b.size()), b.data(), b.size());
  count_ += more.count_;
}

std::string RespCommand(std::initializer_list<const RespArgs*> parts) {
  size_t count = 0;
  size_t bytes = 0;
  for (const RespArgs* p : parts) {
    count += p->count();
    bytes += p->bytes().size();
  }
  char header[24];
  const char* end = PutRespHeader(header, '*', count);
  std::string out;
  out.reserve(static_cast<size_t>(end - header) + bytes);
  out.append(header, static_cast<size_t>(end - header));
  for (const RespArgs* p : parts) out.append(p->bytes());
  return out;
}

}  // namespace tally::cluster
