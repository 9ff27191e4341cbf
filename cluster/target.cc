#include "cluster/target.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cluster/keys.h"
#include "core/validate.h"

namespace tally::cluster {
namespace {

Status Bad(std::string_view what) {
  return Status::InvalidArgument("Redis target: " + std::string(what));
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() ||
      v < lo || v > hi) {
    return false;
  }
  *out = v;
  return true;
}

Status ParseSeeds(std::string_view hosts, std::vector<Endpoint>* seeds) {
  size_t start = 0;
  while (start <= hosts.size()) {
    size_t end = hosts.find(',', start);
    if (end == std::string_view::npos) end = hosts.size();
    const std::string_view one = hosts.substr(start, end - start);
    const size_t colon = one.rfind(':');
    Endpoint e;
    if (colon == std::string_view::npos || colon == 0 ||
        !ParseInt(one.substr(colon + 1), 1, 65535, &e.port)) {
      return Bad("node " + core::Quote(one) + " is not HOST:PORT (port " +
                 "1..65535)");
    }
    e.host = std::string(one.substr(0, colon));
    seeds->push_back(std::move(e));
    if (seeds->size() > kMaxSeeds) {
      return Bad("more than " + std::to_string(kMaxSeeds) + " nodes");
    }
    start = end + 1;
  }
  return Status::OK();
}

Status ParseQuery(std::string_view query, Target* out) {
  size_t start = 0;
  while (!query.empty() && start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view kv = query.substr(start, end - start);
    const size_t eq = kv.find('=');
    const std::string_view k = kv.substr(0, eq);
    const std::string_view v =
        eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
    if (k == "replicas") {
      if (!ParseInt(v, 0, kMaxWaitReplicas, &out->wait_replicas)) {
        return Bad("replicas=" + core::Quote(v) + " is not 0.." +
                   std::to_string(kMaxWaitReplicas));
      }
    } else if (k == "wait_ms") {
      if (!ParseInt(v, 1, kMaxWaitMs, &out->wait_ms)) {
        return Bad("wait_ms=" + core::Quote(v) + " is not 1.." +
                   std::to_string(kMaxWaitMs));
      }
    } else if (k == "read_from") {
      if (v != "master" && v != "replicas") {
        return Bad("read_from=" + core::Quote(v) +
                   " is not master or replicas");
      }
      out->read_from_replicas = v == "replicas";
    } else {
      return Bad("unknown parameter " + core::Quote(k) +
                 " (known: replicas, wait_ms, read_from)");
    }
    start = end + 1;
  }
  return Status::OK();
}

}  // namespace

Status ParseTarget(std::string_view target, Target* out) {
  *out = Target();
  const size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return Bad("no scheme");
  std::string scheme(target.substr(0, scheme_end));
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(ch));
  if (scheme != "redis") {
    return Status::NotSupported("Redis target: scheme " +
                                core::Quote(scheme) +
                                " (TLS) is not supported: use redis://");
  }
  std::string_view rest = target.substr(scheme_end + 3);
  const size_t q = rest.find('?');
  std::string_view query;
  if (q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view ns = rest.substr(slash + 1);
    if (!ValidNamespace(ns)) {
      return Bad("namespace " + core::Quote(ns) + " is not 1.." +
                 std::to_string(kMaxNamespaceBytes) +
                 " bytes of letters, digits, '_', '.' and '-'");
    }
    out->ns = std::string(ns);
    rest = rest.substr(0, slash);
  }
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    const std::string_view user = rest.substr(0, at);
    if (user.find(':') != std::string_view::npos) {
      return Bad("a password does not go in the target (it would show in "
                 "process lists and logs): put it in the file named by "
                 "TALLY_REDIS_PASSWORD_FILE");
    }
    if (user.empty()) return Bad("empty user before '@'");
    out->user = std::string(user);
    rest = rest.substr(at + 1);
  }
  Status s = ParseSeeds(rest, &out->seeds);
  if (s.ok()) s = ParseQuery(query, out);
  return s;
}

Status ReadPassword(std::string* password) {
  password->clear();
  if (const char* file = std::getenv("TALLY_REDIS_PASSWORD_FILE");
      file != nullptr && *file != '\0') {
    std::ifstream in(file);
    if (!in.good()) {
      return Status::IOError("cannot read TALLY_REDIS_PASSWORD_FILE " +
                             core::Quote(file));
    }
    std::getline(in, *password);
    return Status::OK();
  }
  if (const char* pass = std::getenv("TALLY_REDIS_PASSWORD")) {
    *password = pass;
  }
  return Status::OK();
}

}  // namespace tally::cluster
