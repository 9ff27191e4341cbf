#include "cluster/client/redirect.h"

#include <charconv>
#include <string_view>

namespace tally::cluster {
namespace {

// Whether the error text's first word is `word`.
bool HasCode(const std::string& error, std::string_view word) {
  return error.size() >= word.size() &&
         std::string_view(error).substr(0, word.size()) == word &&
         (error.size() == word.size() || error[word.size()] == ' ');
}

}  // namespace

ErrorClass ClassifyError(const std::string& error) {
  if (HasCode(error, "MOVED")) return ErrorClass::kMoved;
  if (HasCode(error, "ASK")) return ErrorClass::kAsk;
  if (HasCode(error, "TRYAGAIN") || HasCode(error, "LOADING")) {
    return ErrorClass::kRetry;
  }
  if (HasCode(error, "CLUSTERDOWN") || HasCode(error, "MASTERDOWN") ||
      HasCode(error, "READONLY")) {
    return ErrorClass::kRetryAfterRefresh;
  }
  return ErrorClass::kFinal;
}

bool ParseRedirect(const std::string& error, const Endpoint& from,
                   Endpoint* target) {
  const size_t first = error.find(' ');
  if (first == std::string::npos) return false;
  const size_t second = error.find(' ', first + 1);
  if (second == std::string::npos || second == first + 1) return false;
  const std::string_view address = std::string_view(error).substr(second + 1);
  const size_t colon = address.rfind(':');  // IPv6 hosts hold colons too
  if (colon == std::string_view::npos) return false;
  int port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || port <= 0 || port > 65535) {
    return false;
  }
  target->host = colon == 0 ? from.host : std::string(address.substr(0, colon));
  target->port = port;
  return true;
}

}  // namespace tally::cluster
