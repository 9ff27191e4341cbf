#include "engine/marker_expiry.h"

#include "schema/records.h"

namespace tally::engine {
namespace {

class MarkerExpiryFilter final : public rocksdb::CompactionFilter {
 public:
  explicit MarkerExpiryFilter(int64_t now_ms) : now_ms_(now_ms) {}

  bool Filter(int /*level*/, const rocksdb::Slice& /*key*/,
              const rocksdb::Slice& value, std::string* /*new_value*/,
              bool* /*value_changed*/) const override {
    int64_t expires_at;
    if (!schema::DecodeMarkerExpiry(value.ToStringView(), &expires_at).ok()) {
      return false;
    }
    return MarkerExpired(expires_at, now_ms_);
  }

  const char* Name() const override { return "tally.MarkerExpiryFilter"; }

 private:
  const int64_t now_ms_;
};

class MarkerExpiryFilterFactory final
    : public rocksdb::CompactionFilterFactory {
 public:
  explicit MarkerExpiryFilterFactory(std::shared_ptr<const EngineClock> clock)
      : clock_(std::move(clock)) {}

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& /*context*/) override {
    return std::make_unique<MarkerExpiryFilter>(clock_->Durable());
  }

  const char* Name() const override { return kMarkerExpiryFactoryName; }

 private:
  const std::shared_ptr<const EngineClock> clock_;
};

}  // namespace

std::shared_ptr<rocksdb::CompactionFilterFactory> NewMarkerExpiryFilterFactory(
    std::shared_ptr<const EngineClock> clock) {
  return std::make_shared<MarkerExpiryFilterFactory>(std::move(clock));
}

}  // namespace tally::engine
