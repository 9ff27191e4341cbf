#include "core/top_keys.h"

#include "core/validate.h"
#include "tally/limits.h"

namespace tally::core {

Status ValidateTopKeys(size_t n) {
  if (n >= 1 && n <= kMaxTopKeys) return Status::OK();
  return Status::InvalidArgument("top " + std::to_string(n) +
                                 " keys: give 1.." +
                                 std::to_string(kMaxTopKeys) +
                                 " (kMaxTopKeys)");
}

Status OutOfRangeKeys(const CounterInfo& c, const TopKeysResult& top) {
  const std::string more =
      top.out_of_range_keys > 1
          ? " (and " + std::to_string(top.out_of_range_keys - 1) +
                " more keys)"
          : std::string();
  return Status::OutOfRange(
      "counter " + Quote(c.name) + ": key " +
      Quote(top.first_out_of_range_key) + more +
      " holds a value beyond int64, so the counter's total is unknown; "
      "delete such keys (DeleteKey; ListKeys marks them out_of_range)");
}

Status NoRollupYet(const CounterInfo& c) {
  return Status::NotFound("counter " + Quote(c.name) +
                          " has no roll-up yet; a writable open makes "
                          "one (RollupNow or the roll-up worker)");
}

}  // namespace tally::core
