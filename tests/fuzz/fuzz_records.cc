// Fuzzes schema/records.h: the verify-then-decode of the database header,
// counter metadata, event marker, reservation (hold) and claim FlatBuffers,
// on arbitrary bytes as a
// damaged database could hold them. Properties:
//  - a decoder either succeeds or returns Corruption; it never crashes,
//    reads out of bounds (ASAN) or hits undefined behaviour (UBSAN);
//  - the answer does not depend on the buffer's alignment (RocksDB hands
//    out values at any address; records.cc copies misaligned ones);
//  - DecodeMarkerAnswer accepts exactly what DecodeMarker accepts, with the
//    same delta, shard and strict answer;
//  - whatever decodes re-encodes and decodes to the same record;
//  - records built from fuzzer-chosen fields encode and decode unchanged.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "schema/records.h"

namespace tally::schema {
namespace {

bool Same(const HeaderRecord& a, const HeaderRecord& b) {
  return a.format_version == b.format_version &&
         a.next_counter_id == b.next_counter_id &&
         a.created_at_ms == b.created_at_ms && a.db_id == b.db_id;
}

bool Same(const CounterRecord& a, const CounterRecord& b) {
  return a.id == b.id && a.name == b.name && a.shard_count == b.shard_count &&
         a.policy == b.policy && a.schema_version == b.schema_version &&
         a.created_at_ms == b.created_at_ms && a.flags == b.flags &&
         a.has_min == b.has_min && a.min_value == b.min_value &&
         a.has_max == b.has_max && a.max_value == b.max_value &&
         a.sliding == b.sliding;
}

bool Same(const MarkerRecord& a, const MarkerRecord& b) {
  return a.event_id == b.event_id && a.counter_id == b.counter_id &&
         a.shard == b.shard && a.delta == b.delta &&
         a.created_at_ms == b.created_at_ms &&
         a.expires_at_ms == b.expires_at_ms && a.pinned == b.pinned &&
         a.strict == b.strict && a.answer.refused == b.answer.refused &&
         a.answer.asked == b.answer.asked && a.answer.value == b.answer.value &&
         a.answer.window_ends_ms == b.answer.window_ends_ms &&
         a.answer.remaining == b.answer.remaining &&
         a.answer.reset == b.answer.reset;
}

bool Same(const HoldRecord& a, const HoldRecord& b) {
  return a.reservation_id == b.reservation_id &&
         a.counter_id == b.counter_id && a.units == b.units &&
         a.created_at_ms == b.created_at_ms &&
         a.expires_at_ms == b.expires_at_ms && a.state == b.state &&
         a.closed_at_ms == b.closed_at_ms;
}

bool Same(const ClaimRecord& a, const ClaimRecord& b) {
  return a.state == b.state && a.token == b.token && a.holder == b.holder &&
         a.granted_at_ms == b.granted_at_ms &&
         a.lease_until_ms == b.lease_until_ms &&
         a.ended_at_ms == b.ended_at_ms && a.result == b.result;
}

// The input at an address that is not 8-aligned (libFuzzer's own buffer is
// from new[], so aligned). The copy is exactly as long as the input, so
// reading past its end trips ASAN just as in libFuzzer's buffer.
struct Placed {
  explicit Placed(std::string_view bytes)
      : aligned(bytes), storage_(new char[bytes.size() + 1]) {
    std::memcpy(storage_.get() + 1, bytes.data(), bytes.size());
    misaligned = std::string_view(storage_.get() + 1, bytes.size());
  }

  std::string_view aligned;
  std::string_view misaligned;

 private:
  std::unique_ptr<char[]> storage_;
};

void CheckHeader(const Placed& in) {
  HeaderRecord a, b;
  const Status sa = DecodeHeader(in.aligned, &a);
  const Status sb = DecodeHeader(in.misaligned, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (!sa.ok()) {
    FUZZ_CHECK(sa.IsCorruption() && sb.IsCorruption());
    return;
  }
  FUZZ_CHECK(Same(a, b));
  std::string again;
  EncodeHeader(a, &again);
  HeaderRecord c;
  FUZZ_CHECK(DecodeHeader(again, &c).ok());
  FUZZ_CHECK(Same(a, c));
}

void CheckCounter(const Placed& in) {
  CounterRecord a, b;
  const Status sa = DecodeCounter(in.aligned, &a);
  const Status sb = DecodeCounter(in.misaligned, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (!sa.ok()) {
    FUZZ_CHECK(sa.IsCorruption() && sb.IsCorruption());
    return;
  }
  FUZZ_CHECK(Same(a, b));
  std::string again;
  EncodeCounter(a, &again);
  CounterRecord c;
  FUZZ_CHECK(DecodeCounter(again, &c).ok());
  FUZZ_CHECK(Same(a, c));
}

void CheckMarker(const Placed& in) {
  MarkerRecord a, b;
  const Status sa = DecodeMarker(in.aligned, &a);
  const Status sb = DecodeMarker(in.misaligned, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  MarkerAnswer ans_a, ans_b;
  const Status da = DecodeMarkerAnswer(in.aligned, &ans_a);
  const Status db = DecodeMarkerAnswer(in.misaligned, &ans_b);
  FUZZ_CHECK(da.ok() == sa.ok() && db.ok() == sa.ok());
  if (!sa.ok()) {
    FUZZ_CHECK(sa.IsCorruption() && sb.IsCorruption());
    FUZZ_CHECK(da.IsCorruption() && db.IsCorruption());
    return;
  }
  FUZZ_CHECK(Same(a, b));
  for (const MarkerAnswer* ans : {&ans_a, &ans_b}) {
    FUZZ_CHECK(ans->delta == a.delta && ans->shard == a.shard &&
               ans->strict == a.strict &&
               ans->answer.refused == a.answer.refused &&
               ans->answer.asked == a.answer.asked &&
               ans->answer.value == a.answer.value &&
               ans->answer.window_ends_ms == a.answer.window_ends_ms &&
               ans->answer.remaining == a.answer.remaining &&
               ans->answer.reset == a.answer.reset);
  }
  std::string again;
  EncodeMarker(a.event_id, a.counter_id, a.shard, a.delta, a.created_at_ms,
               &again, a.expires_at_ms, a.pinned,
               a.strict ? &a.answer : nullptr);
  MarkerRecord c;
  FUZZ_CHECK(DecodeMarker(again, &c).ok());
  FUZZ_CHECK(Same(a, c));
}

void CheckHold(const Placed& in) {
  HoldRecord a, b;
  const Status sa = DecodeHold(in.aligned, &a);
  const Status sb = DecodeHold(in.misaligned, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (!sa.ok()) {
    FUZZ_CHECK(sa.IsCorruption() && sb.IsCorruption());
    return;
  }
  FUZZ_CHECK(Same(a, b));
  FUZZ_CHECK(a.units > 0 && a.state <= 4);
  std::string again;
  EncodeHold(a, &again);
  HoldRecord c;
  FUZZ_CHECK(DecodeHold(again, &c).ok());
  FUZZ_CHECK(Same(a, c));
}

void CheckClaim(const Placed& in) {
  ClaimRecord a, b;
  const Status sa = DecodeClaim(in.aligned, &a);
  const Status sb = DecodeClaim(in.misaligned, &b);
  FUZZ_CHECK(sa.ok() == sb.ok());
  if (!sa.ok()) {
    FUZZ_CHECK(sa.IsCorruption() && sb.IsCorruption());
    return;
  }
  FUZZ_CHECK(Same(a, b));
  // What DecodeClaim promises (records.h).
  FUZZ_CHECK(a.state == 0 || a.state == 2 || a.state == 3);
  FUZZ_CHECK(a.token >= 1 && !a.holder.empty());
  FUZZ_CHECK(a.lease_until_ms > a.granted_at_ms);
  FUZZ_CHECK((a.state == 0) == (a.ended_at_ms == 0));
  FUZZ_CHECK(a.state == 3 || a.result.empty());
  std::string again;
  EncodeClaim(a, &again);
  ClaimRecord c;
  FUZZ_CHECK(DecodeClaim(again, &c).ok());
  FUZZ_CHECK(Same(a, c));
}

// Encoders: any field values, including names and ids with NULs and bytes
// that are not UTF-8, come back unchanged.
void CheckEncoders(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  HeaderRecord h;
  h.format_version = fdp.ConsumeIntegral<uint32_t>();
  h.next_counter_id = fdp.ConsumeIntegral<uint64_t>();
  h.created_at_ms = fdp.ConsumeIntegral<int64_t>();
  h.db_id = fdp.ConsumeRandomLengthString(64);
  CounterRecord m;
  m.id = fdp.ConsumeIntegral<uint64_t>();
  m.name = fdp.ConsumeRandomLengthString(300);
  m.shard_count = fdp.ConsumeIntegral<uint32_t>();
  m.policy = fdp.ConsumeIntegral<uint8_t>();
  m.schema_version = fdp.ConsumeIntegral<uint32_t>();
  m.created_at_ms = fdp.ConsumeIntegral<int64_t>();
  m.flags = fdp.ConsumeIntegral<uint32_t>();
  m.has_min = fdp.ConsumeBool();
  m.min_value = fdp.ConsumeIntegral<int64_t>();
  m.has_max = fdp.ConsumeBool();
  m.max_value = fdp.ConsumeIntegral<int64_t>();
  m.sliding = fdp.ConsumeBool();
  MarkerRecord e;
  e.counter_id = fdp.ConsumeIntegral<uint64_t>();
  e.shard = fdp.ConsumeIntegral<uint32_t>();
  e.delta = fdp.ConsumeIntegral<int64_t>();
  e.created_at_ms = fdp.ConsumeIntegral<int64_t>();
  e.strict = fdp.ConsumeBool();
  if (e.strict) {
    e.answer.refused = fdp.ConsumeBool();
    e.answer.asked = fdp.ConsumeIntegral<int64_t>();
    e.answer.value = fdp.ConsumeIntegral<int64_t>();
    e.answer.window_ends_ms = fdp.ConsumeIntegral<int64_t>();
    e.answer.remaining = fdp.ConsumeIntegral<int64_t>();
    e.answer.reset = fdp.ConsumeBool();
  }
  HoldRecord o;
  o.counter_id = fdp.ConsumeIntegral<uint64_t>();
  o.units = fdp.ConsumeIntegralInRange<int64_t>(1, INT64_MAX);
  o.created_at_ms = fdp.ConsumeIntegral<int64_t>();
  o.expires_at_ms = fdp.ConsumeIntegral<int64_t>();
  o.state = fdp.ConsumeIntegralInRange<uint8_t>(0, 4);
  o.closed_at_ms = fdp.ConsumeIntegral<int64_t>();
  o.reservation_id = fdp.ConsumeRandomLengthString(300);
  // A claim as DecodeClaim accepts it: any fields within its rules.
  ClaimRecord k;
  const uint8_t states[] = {0, 2, 3};
  k.state = states[fdp.ConsumeIntegralInRange<int>(0, 2)];
  k.token = fdp.ConsumeIntegralInRange<uint64_t>(1, UINT64_MAX);
  k.granted_at_ms = fdp.ConsumeIntegralInRange<int64_t>(INT64_MIN, INT64_MAX - 1);
  k.lease_until_ms =
      fdp.ConsumeIntegralInRange<int64_t>(k.granted_at_ms + 1, INT64_MAX);
  k.ended_at_ms = k.state == 0 ? 0 : fdp.ConsumeIntegral<int64_t>();
  if (k.state != 0 && k.ended_at_ms == 0) k.ended_at_ms = 1;
  k.holder = fdp.ConsumeRandomLengthString(200);
  if (k.holder.empty()) k.holder = "h";
  if (k.state == 3) k.result = fdp.ConsumeRandomLengthString(300);
  e.event_id = fdp.ConsumeRemainingBytesAsString();

  std::string bytes;
  EncodeHeader(h, &bytes);
  HeaderRecord h2;
  FUZZ_CHECK(DecodeHeader(Placed(bytes).misaligned, &h2).ok());
  FUZZ_CHECK(Same(h, h2));
  EncodeCounter(m, &bytes);
  CounterRecord m2;
  FUZZ_CHECK(DecodeCounter(Placed(bytes).misaligned, &m2).ok());
  FUZZ_CHECK(Same(m, m2));
  EncodeMarker(e.event_id, e.counter_id, e.shard, e.delta, e.created_at_ms,
               &bytes, 0, false, e.strict ? &e.answer : nullptr);
  MarkerRecord e2;
  FUZZ_CHECK(DecodeMarker(Placed(bytes).misaligned, &e2).ok());
  FUZZ_CHECK(Same(e, e2));
  // One kind's bytes are never accepted as another's (file identifiers).
  HeaderRecord wrong;
  FUZZ_CHECK(DecodeHeader(bytes, &wrong).IsCorruption());
  HoldRecord not_hold;
  FUZZ_CHECK(DecodeHold(bytes, &not_hold).IsCorruption());
  EncodeHold(o, &bytes);
  HoldRecord o2;
  FUZZ_CHECK(DecodeHold(Placed(bytes).misaligned, &o2).ok());
  FUZZ_CHECK(Same(o, o2));
  MarkerRecord not_marker;
  FUZZ_CHECK(DecodeMarker(bytes, &not_marker).IsCorruption());
  ClaimRecord not_claim;
  FUZZ_CHECK(DecodeClaim(bytes, &not_claim).IsCorruption());
  EncodeClaim(k, &bytes);
  ClaimRecord k2;
  FUZZ_CHECK(DecodeClaim(Placed(bytes).misaligned, &k2).ok());
  FUZZ_CHECK(Same(k, k2));
  FUZZ_CHECK(DecodeHold(bytes, &not_hold).IsCorruption());
}

}  // namespace
}  // namespace tally::schema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tally::schema;
  const Placed in(std::string_view(reinterpret_cast<const char*>(data), size));
  CheckHeader(in);
  CheckCounter(in);
  CheckMarker(in);
  CheckHold(in);
  CheckClaim(in);
  CheckEncoders(data, size);
  return 0;
}
