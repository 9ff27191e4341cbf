#include "engine/bucket_retention.h"

#include "engine/rules.h"
#include "engine/coding.h"

namespace tally::engine {
namespace {

class BucketRetentionFilter final : public rocksdb::CompactionFilter {
 public:
  BucketRetentionFilter(int64_t now_ms,
                        std::shared_ptr<const RetentionRules::Map> rules)
      : now_ms_(now_ms), rules_(std::move(rules)) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key, ValueType type,
                    const rocksdb::Slice& /*existing_value*/,
                    std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    if (type != ValueType::kValue && type != ValueType::kMergeOperand) {
      return Decision::kKeep;
    }
    ShardKeyParts parts;
    if (!DecodeAnyShardKey(key.ToStringView(), &parts) ||
        parts.bucket == kNoBucket) {
      return Decision::kKeep;
    }
    const int64_t start = parts.bucket;
    auto rule = rules_->find(parts.counter_id);
    if (rule == rules_->end()) return Decision::kKeep;
    return BucketExpired(start, rule->second.width_ms,
                         rule->second.retention_ms, now_ms_)
               ? Decision::kRemove
               : Decision::kKeep;
  }

  const char* Name() const override { return "tally.BucketRetentionFilter"; }

 private:
  const int64_t now_ms_;
  const std::shared_ptr<const RetentionRules::Map> rules_;
};

class BucketRetentionFilterFactory final
    : public rocksdb::CompactionFilterFactory {
 public:
  BucketRetentionFilterFactory(std::shared_ptr<const EngineClock> clock,
                               std::shared_ptr<RetentionRules> rules)
      : clock_(std::move(clock)), rules_(std::move(rules)) {}

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& /*context*/) override {
    return std::make_unique<BucketRetentionFilter>(clock_->Durable(),
                                                   rules_->Snapshot());
  }

  const char* Name() const override { return kBucketRetentionFactoryName; }

 private:
  const std::shared_ptr<const EngineClock> clock_;
  const std::shared_ptr<RetentionRules> rules_;
};

}  // namespace

std::shared_ptr<rocksdb::CompactionFilterFactory>
NewBucketRetentionFilterFactory(std::shared_ptr<const EngineClock> clock,
                                std::shared_ptr<RetentionRules> rules) {
  return std::make_shared<BucketRetentionFilterFactory>(std::move(clock),
                                                        std::move(rules));
}

}  // namespace tally::engine
