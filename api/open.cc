// Db::Open: the one place that picks a backend for a target (a directory:
// the local engine, engine/; "redis://": a Redis Cluster, cluster/).

#include <memory>
#include <string>

#include "cluster/redis_db.h"
#include "core/validate.h"
#include "engine/open_on_env.h"
#include "tally/db.h"

namespace tally {

namespace {

// The scheme of a target "scheme://...", lower-cased; empty when the target
// is a path: it holds no "://", or what comes before is no URI scheme (RFC
// 3986: a letter, then letters, digits, '+', '-' or '.'), as in "/data/a://b".
std::string SchemeOf(const std::string& target) {
  const size_t end = target.find("://");
  if (end == std::string::npos || end == 0) return std::string();
  std::string scheme;
  for (size_t i = 0; i < end; ++i) {
    const char c = target[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool other =
        i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
    if (!letter && !other) return std::string();
    scheme.push_back(letter ? static_cast<char>(c | 0x20) : c);
  }
  return scheme;
}

// The target quoted for a message, the password of a "user:password@" part
// replaced by "***": an error log must not hold a credential.
std::string ShownTarget(const std::string& target) {
  const size_t host = target.find("://") + 3;
  const size_t at = target.find('@', host);
  const size_t slash = target.find('/', host);
  const size_t colon = target.find(':', host);
  if (at == std::string::npos || (slash != std::string::npos && slash < at) ||
      colon == std::string::npos || colon > at) {
    return core::Quote(target);
  }
  return core::Quote(target.substr(0, colon + 1) + "***" +
                       target.substr(at));
}

}  // namespace

Status Db::Open(const Options& options, const std::string& target,
                std::unique_ptr<Db>* db) {
  db->reset();
  // The target chooses the backend: "redis://" a Redis Cluster
  // ("rediss://", TLS, is refused by name), any other "scheme://" nothing,
  // anything else a directory of the local engine.
  if (const std::string scheme = SchemeOf(target); !scheme.empty()) {
    if (scheme == "redis" || scheme == "rediss") {
      Status s = cluster::OpenCluster(options, target, db);
      if (!s.ok()) return s.WithContext("target " + ShownTarget(target));
      return s;
    }
    return Status::InvalidArgument(
        "target " + ShownTarget(target) + " names the unknown scheme " +
        core::Quote(scheme) +
        ": a target is a directory path (the local engine) or redis://HOST:"
        "PORT (a Redis Cluster)");
  }
  return engine::OpenOnEnv(options, target, nullptr, db);
}

}  // namespace tally
