// GuardedCall (cluster/guarded_call.h): the arguments of tally_guarded, as
// cluster/functions/tally.lua documents them, and its replies.

#include "cluster/guarded_call.h"

#include <algorithm>
#include <cassert>

#include "core/validate.h"

namespace tally::cluster {
namespace {

bool StartsWith(const std::string& s, std::string_view p) {
  return s.compare(0, p.size(), p) == 0;
}

}  // namespace

size_t GuardedCall::KeyIndex(const std::string& key) {
  assert(key.find(tag_) == 0 && "every key of a guarded call is its tag's");
  auto at = std::find(keys_.begin(), keys_.end(), key);
  if (at != keys_.end()) return static_cast<size_t>(at - keys_.begin()) + 1;
  keys_.push_back(key);
  return keys_.size();
}

void GuardedCall::RequireLive(const std::string& key) { live_ = KeyIndex(key); }

void GuardedCall::Guard(const std::string& key,
                        const std::optional<std::string>& read) {
  guards_.push_back(std::to_string(KeyIndex(key)));
  guards_.push_back(read ? "=" + *read : "-");
}

void GuardedCall::Set(const std::string& key, const std::string& value,
                      int64_t ttl_ms) {
  assert(ttl_ms >= 0);
  ops_.insert(ops_.end(), {"s", std::to_string(KeyIndex(key)), value,
                           std::to_string(ttl_ms)});
  ++op_count_;
}

void GuardedCall::Del(const std::string& key) {
  ops_.insert(ops_.end(), {"d", std::to_string(KeyIndex(key))});
  ++op_count_;
}

void GuardedCall::IncrBy(const std::string& key, int64_t delta) {
  ops_.insert(ops_.end(),
              {"i", std::to_string(KeyIndex(key)), std::to_string(delta)});
  ++op_count_;
}

void GuardedCall::ZAdd(const std::string& key, int64_t score,
                       const std::string& name) {
  ops_.insert(ops_.end(), {"z", std::to_string(KeyIndex(key)),
                           std::to_string(score), name});
  ++op_count_;
}

void GuardedCall::ZRem(const std::string& key, const std::string& name) {
  ops_.insert(ops_.end(), {"r", std::to_string(KeyIndex(key)), name});
  ++op_count_;
}

Command GuardedCall::Build() const {
  assert(!keys_.empty());
  Command c;
  c.args.reserve(6 + keys_.size() + guards_.size() + ops_.size());
  c.args.insert(c.args.end(), {"FCALL", "tally_guarded",
                               std::to_string(keys_.size())});
  c.args.insert(c.args.end(), keys_.begin(), keys_.end());
  c.args.push_back(std::to_string(live_));
  c.args.push_back(std::to_string(guards_.size() / 2));
  c.args.insert(c.args.end(), guards_.begin(), guards_.end());
  c.args.push_back(std::to_string(op_count_));
  c.args.insert(c.args.end(), ops_.begin(), ops_.end());
  c.slot = ClusterClient::SlotOf(tag_);
  // Sent twice, the second run finds what the first wrote in place of
  // what its guards expect, and writes nothing: the caller reads again.
  c.idempotent = !guards_.empty();
  return c;
}

Status GuardedCall::Read(const Reply& r, const std::string& what,
                         Outcome* outcome) {
  if (r.kind == Reply::Kind::kInteger && r.integer == 1) {
    *outcome = Outcome::kWritten;
    return Status::OK();
  }
  if (r.kind == Reply::Kind::kUnknown) {
    return Status::IOError("outcome unknown: the write of " + what +
                           " was sent but its answer was lost (" + r.str +
                           "); it may or may not have been written");
  }
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, "TALLYSTALE")) {
    *outcome = Outcome::kStale;
    return Status::OK();
  }
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, "TALLYGONE")) {
    *outcome = Outcome::kGone;
    return Status::OK();
  }
  if (r.kind == Reply::Kind::kError && StartsWith(r.str, "TALLYOVERFLOW")) {
    return Status::OutOfRange("the write of " + what +
                              " would take a value beyond int64; nothing "
                              "was written");
  }
  return Status::IOError("the write of " + what + " failed: " +
                         (r.kind == Reply::Kind::kError ? r.str
                                                        : "an unexpected reply"));
}

}  // namespace tally::cluster
