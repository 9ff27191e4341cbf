// GuardedCall: one call of the function tally_guarded (cluster/functions/
// tally.lua), a compare-and-set on the keys of one hash tag. The backend
// reads records, decides with core/'s rules (a claim's step, a
// reservation's), and writes what it decided only where every guarded key
// still holds what it read; otherwise the call writes nothing and the
// backend reads and decides again (another client wrote in between).
//
// Ownership: a value; Build() copies what it holds into a Command.
// Thread safety: none (one call is built by one thread).
#ifndef TALLY_CLUSTER_GUARDED_CALL_H_
#define TALLY_CLUSTER_GUARDED_CALL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "tally/status.h"

namespace tally::cluster {

class GuardedCall {
 public:
  // `tag`: the hash tag every key of the call carries.
  explicit GuardedCall(std::string tag) : tag_(std::move(tag)) {}

  // The call fails (Outcome::kGone) unless `key` exists.
  void RequireLive(const std::string& key);
  // The call fails (kStale) unless `key` holds `read` (nullopt: no key).
  void Guard(const std::string& key, const std::optional<std::string>& read);
  void Set(const std::string& key, const std::string& value, int64_t ttl_ms);
  void Del(const std::string& key);
  void IncrBy(const std::string& key, int64_t delta);
  void ZAdd(const std::string& key, int64_t score, const std::string& name);
  void ZRem(const std::string& key, const std::string& name);

  // The FCALL (may be sent twice: a second run finds its guards changed).
  Command Build() const;

  enum class Outcome { kWritten, kStale, kGone };
  // What the call's reply means: OK with *outcome, or the error (an
  // unknown outcome is an IOError saying the write may have happened;
  // `what` names the record in messages).
  static Status Read(const Reply& r, const std::string& what,
                     Outcome* outcome);

 private:
  size_t KeyIndex(const std::string& key);  // 1-based, as Lua's KEYS

  std::string tag_;
  std::vector<std::string> keys_;
  size_t live_ = 0;
  std::vector<std::string> guards_;  // pairs: index, '=' bytes or '-'
  std::vector<std::string> ops_;     // name and fields, flat
  size_t op_count_ = 0;
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_GUARDED_CALL_H_
