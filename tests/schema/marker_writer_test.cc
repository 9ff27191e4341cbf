// EncodeMarker writes without a FlatBufferBuilder (schema/marker_writer.cc)
// yet must write exactly the builder's bytes, so the stored format never
// depends on which encoder wrote a marker: each case here is compared byte
// for byte with the builder and the generated CreateEventMarker, called as
// EncodeMarker called them before, and decoded back.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "schema/records.h"
#include "tally/limits.h"
#include "tally_generated.h"

namespace tally::schema {
namespace {

using Marker = MarkerRecord;  // what EncodeMarker is given

// A marker with this id and every other field default.
Marker Bare(std::string event_id) {
  Marker m;
  m.event_id = std::move(event_id);
  return m;
}

// The encoder EncodeMarker was: a builder, CreateString, CreateEventMarker
// with every field, Finish with "TLEM".
std::string BuilderBytes(const Marker& m) {
  flatbuffers::FlatBufferBuilder fbb(512);
  auto id = fbb.CreateString(m.event_id.data(), m.event_id.size());
  const StrictAnswer none;
  const StrictAnswer& a = m.strict ? m.answer : none;
  auto root = CreateEventMarker(
      fbb, id, m.counter_id, m.shard, m.delta, m.created_at_ms, m.expires_at_ms,
      m.pinned, m.strict, a.refused, a.asked, a.value, a.window_ends_ms,
      a.remaining, a.reset, a.remaining_kept);
  fbb.Finish(root, "TLEM");
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

std::string Describe(const Marker& m) {
  return "id of " + std::to_string(m.event_id.size()) + " bytes, counter " +
         std::to_string(m.counter_id) + ", shard " + std::to_string(m.shard) +
         ", delta " + std::to_string(m.delta) + ", created " +
         std::to_string(m.created_at_ms) + ", expires " +
         std::to_string(m.expires_at_ms) + ", pinned " +
         std::to_string(m.pinned) + ", strict " + std::to_string(m.strict) +
         " (refused " + std::to_string(m.answer.refused) + ", asked " +
         std::to_string(m.answer.asked) + ", value " +
         std::to_string(m.answer.value) + ", window end " +
         std::to_string(m.answer.window_ends_ms) + ", remaining " +
         std::to_string(m.answer.remaining) + ", reset " +
         std::to_string(m.answer.reset) + ", kept " +
         std::to_string(m.answer.remaining_kept) + ")";
}

// EncodeMarker's bytes equal the builder's, and both decoders give the
// fields back. A non-strict marker decodes with a default answer.
void ExpectSame(const Marker& m) {
  SCOPED_TRACE(Describe(m));
  std::string bytes = "stale bytes that must be replaced";
  EncodeMarker(m.event_id, m.counter_id, m.shard, m.delta, m.created_at_ms,
               &bytes, m.expires_at_ms, m.pinned,
               m.strict ? &m.answer : nullptr);
  ASSERT_EQ(Hex(bytes), Hex(BuilderBytes(m)));

  const StrictAnswer want = m.strict ? m.answer : StrictAnswer{};
  MarkerRecord rec;
  const Status s = DecodeMarker(bytes, &rec);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(rec.event_id, m.event_id);
  EXPECT_EQ(rec.counter_id, m.counter_id);
  EXPECT_EQ(rec.shard, m.shard);
  EXPECT_EQ(rec.delta, m.delta);
  EXPECT_EQ(rec.created_at_ms, m.created_at_ms);
  EXPECT_EQ(rec.expires_at_ms, m.expires_at_ms);
  EXPECT_EQ(rec.pinned, m.pinned);
  EXPECT_EQ(rec.strict, m.strict);
  MarkerAnswer ans;
  ASSERT_TRUE(DecodeMarkerAnswer(bytes, &ans).ok());
  EXPECT_EQ(ans.delta, m.delta);
  EXPECT_EQ(ans.shard, m.shard);
  EXPECT_EQ(ans.strict, m.strict);
  for (const StrictAnswer* got : {&rec.answer, &ans.answer}) {
    EXPECT_EQ(got->refused, want.refused);
    EXPECT_EQ(got->asked, want.asked);
    EXPECT_EQ(got->value, want.value);
    EXPECT_EQ(got->window_ends_ms, want.window_ends_ms);
    EXPECT_EQ(got->remaining, want.remaining);
    EXPECT_EQ(got->reset, want.reset);
    EXPECT_EQ(got->remaining_kept, want.remaining_kept);
  }
  int64_t expires = -1;
  ASSERT_TRUE(DecodeMarkerExpiry(bytes, &expires).ok());
  EXPECT_EQ(expires, m.expires_at_ms);
}

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
const std::vector<int64_t> kInt64s = {0,       1,       -1,
                                      kI64Min, kI64Max, 1700000000000};

Marker Typical() {
  Marker m;
  m.event_id = "ORDER_ACCEPTED:ord-1";
  m.counter_id = 3;
  m.shard = 5;
  m.delta = 1;
  m.created_at_ms = 1700000000000;
  return m;
}

// Each field alone at its default and at the edges, on a marker whose
// other fields are all default, and on a typical one: a stored or omitted
// field moves every later field and the vtable.
TEST(MarkerWriter, EachFieldAtDefaultAndEdges) {
  for (const Marker& base : {Bare("e"), Typical()}) {
    for (uint64_t v :
         {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{1} << 63}) {
      Marker m = base;
      m.counter_id = v;
      ExpectSame(m);
    }
    for (uint32_t v : {0u, 1u, std::numeric_limits<uint32_t>::max()}) {
      Marker m = base;
      m.shard = v;
      ExpectSame(m);
    }
    for (int64_t v : kInt64s) {
      Marker m = base;
      m.delta = v;
      ExpectSame(m);
      m = base;
      m.created_at_ms = v;
      ExpectSame(m);
      m = base;
      m.expires_at_ms = v;
      ExpectSame(m);
    }
    for (bool pinned : {false, true}) {
      Marker m = base;
      m.pinned = pinned;
      ExpectSame(m);
    }
  }
}

// A strict marker with each answer field default or not, and a non-strict
// one whose (ignored) answer is set: strict == nullptr writes no answer.
TEST(MarkerWriter, StrictAnswerFields) {
  for (const Marker& base : {Bare("e"), Typical()}) {
    for (bool strict : {false, true}) {
      // The base marker with one change to its answer.
      auto with = [&](auto change) {
        Marker m = base;
        m.strict = strict;
        change(m.answer);
        ExpectSame(m);
      };
      with([](StrictAnswer&) {});
      for (bool b : {false, true}) {
        with([b](StrictAnswer& a) { a.refused = b; });
        with([b](StrictAnswer& a) { a.reset = b; });
        with([b](StrictAnswer& a) { a.remaining_kept = b; });
      }
      for (int64_t v : kInt64s) {
        with([v](StrictAnswer& a) { a.asked = v; });
        with([v](StrictAnswer& a) { a.value = v; });
        with([v](StrictAnswer& a) { a.window_ends_ms = v; });
        with([v](StrictAnswer& a) { a.remaining = v; });
      }
      Marker m = base;
      m.strict = strict;
      m.answer = StrictAnswer{true, -1, kI64Max, kI64Min, 1, true, true};
      m.pinned = true;
      m.expires_at_ms = -1;
      ExpectSame(m);
    }
  }
}

// Every event id length an engine writes (1..kMaxEventIdBytes: every
// string padding, against both table alignments), the empty id, and
// longer ids (EncodeMarker's heap path).
TEST(MarkerWriter, EveryEventIdLength) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= kMaxEventIdBytes + 9; ++n) lengths.push_back(n);
  for (size_t n : {size_t{1000}, size_t{4093}, size_t{70000}}) {
    lengths.push_back(n);
  }
  for (size_t n : lengths) {
    std::string id(n, 'x');
    for (size_t i = 0; i < n; ++i) id[i] = static_cast<char>('a' + i % 26);
    const Marker plain = Bare(id);
    ExpectSame(plain);
    Marker typical = Typical();
    typical.event_id = id;
    ExpectSame(typical);
    // Only 4-byte and 1-byte fields: the table's widest alignment is 4.
    Marker narrow = Bare(id);
    narrow.shard = 7;
    narrow.pinned = true;
    ExpectSame(narrow);
    Marker full = typical;
    full.strict = true;
    full.expires_at_ms = 1700000600000;
    full.answer = StrictAnswer{false, 3, 9, 1700000060000, 4, false, true};
    ExpectSame(full);
  }
}

// Random combinations (fixed seed): each field default half the time,
// otherwise an edge or a random value; ids of random length and bytes.
TEST(MarkerWriter, RandomCombinations) {
  std::mt19937_64 rng(20261206);
  auto coin = [&] { return (rng() & 1) != 0; };
  auto i64 = [&]() -> int64_t {
    if (coin()) return 0;
    const uint64_t pick = rng() % 4;
    if (pick == 0) return kInt64s[rng() % kInt64s.size()];
    if (pick == 1) return static_cast<int64_t>(rng() % 1000) - 500;
    return static_cast<int64_t>(rng());
  };
  for (int i = 0; i < 5000; ++i) {
    Marker m;
    m.event_id.resize(1 + rng() % kMaxEventIdBytes);
    for (char& c : m.event_id) c = static_cast<char>(rng());
    m.counter_id = static_cast<uint64_t>(i64());
    m.shard = coin() ? 0 : static_cast<uint32_t>(rng());
    m.delta = i64();
    m.created_at_ms = i64();
    m.expires_at_ms = i64();
    m.pinned = coin();
    m.strict = coin();
    m.answer = StrictAnswer{coin(), i64(), i64(), i64(), i64(), coin(), coin()};
    ExpectSame(m);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace tally::schema
