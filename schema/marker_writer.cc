// EncodeMarker (records.h), the hot path's encoder (one per once-increment),
// without a FlatBufferBuilder. It repeats FlatBuffers 2.0.8's builder steps
// for this one table (CreateString, the generated CreateEventMarker's field
// order, EndTable, Finish with "TLEM") into a stack buffer, so its bytes
// are exactly the builder's for every input and docs/format.md does not
// depend on which wrote them; tests/schema/marker_writer_test.cc compares
// the two byte for byte. It costs about 37% of the builder's instructions
// (docs/design.md, "The marker's encoding").

#include <flatbuffers/flatbuffers.h>

#include <cassert>
#include <cstring>
#include <memory>

#include "schema/file_ids.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "tally_generated.h"

namespace tally::schema {
namespace {

using flatbuffers::soffset_t;
using flatbuffers::uoffset_t;
using flatbuffers::voffset_t;

// The most bytes a marker takes besides its event id's, with room for
// DownwardWriter's fixed-size zeroing below what it has written: the
// string's padding, NUL and length (8), the table (at most 88: 8 int64
// fields with their alignment, shard, the string offset, 5 bools, the
// vtable offset with its alignment), the vtable (34) and Finish's padding,
// identifier and root offset (15).
constexpr size_t kOverheadBytes = 160;

// FlatBufferBuilder 2.0.8's state and steps, cut down to one table built
// once into a caller's buffer: the same padding, minalign tracking and
// offsets, without the growable vector, the scratch area or vtable dedup
// (one table has no other vtable to share). Sizes and offsets count bytes
// from the buffer's end, as the builder's GetSize() does.
class DownwardWriter {
 public:
  DownwardWriter(uint8_t* buf, size_t capacity)
      : end_(buf + capacity), capacity_(capacity) {}

  const char* data() const {
    return reinterpret_cast<const char*>(end_ - size_);
  }
  uint32_t size() const { return size_; }

  // CreateString: padded so the length lands 4-aligned, then NUL, bytes
  // and the uint32 length. Returns the string's offset. The padding and
  // the NUL are zeros: one Pad writes both.
  uoffset_t CreateString(std::string_view s) {
    TrackMinAlign(sizeof(uoffset_t));  // PreAlign's
    Pad(PaddingBytes(size_ + s.size() + 1, sizeof(uoffset_t)) + 1);
    assert(size_ + s.size() <= capacity_);
    size_ += static_cast<uint32_t>(s.size());
    if (!s.empty()) std::memcpy(end_ - size_, s.data(), s.size());
    PushAligned(static_cast<uoffset_t>(s.size()));  // PreAligned for it
    return size_;
  }

  void StartTable() { start_ = size_; }

  // The builder's Align: pads to a multiple of `alignment`.
  void Align(size_t alignment) {
    TrackMinAlign(alignment);
    Pad(PaddingBytes(size_, alignment));
  }

  // AddElement without force_defaults (a field equal to its default, 0 or
  // false here, is not stored), for a field whose size the size is already
  // a multiple of. The builder aligns before each field; the caller aligns
  // once before a run of same-size fields (Align), which writes the same
  // bytes: after the run's first field the size stays aligned.
  template <typename T>
  void AddAligned(voffset_t field, T value) {
    assert(size_ % sizeof(T) == 0 && sizeof(T) <= minalign_);
    if (value == 0) return;
    PushAligned(value);
    TrackField(field, size_);
  }

  // AddOffset to what is already written (ReferTo: relative to where it
  // is stored).
  void AddOffset(voffset_t field, uoffset_t offset) {
    assert(offset != 0 && offset <= size_);
    AddAligned(field,
               size_ - offset + static_cast<uoffset_t>(sizeof(uoffset_t)));
  }

  // EndTable: the vtable offset, then the vtable (its size, the table's
  // size, each field's position from the table's start, 0 when not
  // stored), up to the last field stored: the builder's max_voffset_.
  uoffset_t EndTable() {
    const uoffset_t table = Push<soffset_t>(0);
    assert(table - start_ < 0x10000);
    const auto table_size = static_cast<voffset_t>(table - start_);
    // Slot 1 holds the table size: no field stored is a vtable of 4 bytes.
    const size_t last =
        stored_ == 0 ? 1 : 31 - static_cast<size_t>(__builtin_clz(stored_));
    const size_t vtable_size = (last + 1) * sizeof(voffset_t);
    // fill_big(vtable_size): the slots of fields not stored stay 0.
    ZeroBelow<kSlots * sizeof(voffset_t)>();
    size_ += static_cast<uint32_t>(vtable_size);
    uint8_t* vtable = end_ - size_;
    Write(vtable, static_cast<voffset_t>(vtable_size));
    Write(vtable + sizeof(voffset_t), table_size);
    for (uint32_t left = stored_; left != 0; left &= left - 1) {
      const auto i = static_cast<size_t>(__builtin_ctz(left));
      Write(vtable + i * sizeof(voffset_t),
            static_cast<voffset_t>(table_size - rel_[i]));
    }
    Write(end_ - table,
          static_cast<soffset_t>(size_) - static_cast<soffset_t>(table));
    return table;
  }

  // Finish with a file identifier, no size prefix: the whole buffer padded
  // to the widest alignment used, the identifier, the root offset (its
  // ReferTo and PushElement would align to 4: the PreAlign already did).
  void Finish(uoffset_t root, const char* identifier) {
    PreAlign(sizeof(uoffset_t) + flatbuffers::kFileIdentifierLength, minalign_);
    assert(size_ + flatbuffers::kFileIdentifierLength <= capacity_);
    size_ += flatbuffers::kFileIdentifierLength;
    std::memcpy(end_ - size_, identifier, flatbuffers::kFileIdentifierLength);
    PushAligned(size_ - root + static_cast<uoffset_t>(sizeof(uoffset_t)));
  }

 private:
  // EventMarker's vtable slots: 0 and 1 the vtable's and the table's
  // size, then one per field (voffset / 2), the last remaining_kept's.
  static constexpr size_t kSlots = EventMarker::VT_REMAINING_KEPT / 2 + 1;
  static_assert(kSlots <= 32, "one bit of stored_ per slot");

  template <typename T>
  static void Write(uint8_t* at, T value) {
    value = flatbuffers::EndianScalar(value);
    std::memcpy(at, &value, sizeof(T));
  }

  // Zeroes the kBytes bytes just below what is written (the size is not
  // changed): a fixed size, so the compiler emits plain stores.
  template <size_t kBytes>
  void ZeroBelow() {
    assert(size_ + kBytes <= capacity_);
    std::memset(end_ - size_ - kBytes, 0, kBytes);
  }

  // vector_downward::fill for alignment padding (n < 8 bytes): one 8-byte
  // store of zeros below what is written, cheaper than a memset of n.
  // What it zeroes past the padding is beyond the size: every later step
  // writes each byte it grows the size over.
  void Pad(size_t n) {
    assert(n < 8);
    ZeroBelow<8>();
    size_ += static_cast<uint32_t>(n);
  }

  void TrackMinAlign(size_t alignment) {
    if (alignment > minalign_) minalign_ = alignment;
  }

  // The padding that makes `size` a multiple of alignment (PaddingBytes).
  static size_t PaddingBytes(size_t size, size_t alignment) {
    return (~size + 1) & (alignment - 1);
  }

  // Pads so that after `len` more bytes the size is aligned.
  void PreAlign(size_t len, size_t alignment) {
    if (len == 0) return;
    TrackMinAlign(alignment);
    Pad(PaddingBytes(size_ + len, alignment));
  }

  // PushElement: an aligned scalar; returns the size after it.
  template <typename T>
  uoffset_t Push(T value) {
    Align(sizeof(T));
    return PushAligned(value);
  }

  // PushElement where the size is already aligned for T (asserted): the
  // builder's Align would add nothing.
  template <typename T>
  uoffset_t PushAligned(T value) {
    assert(size_ % sizeof(T) == 0 && size_ + sizeof(T) <= capacity_);
    size_ += sizeof(T);
    Write(end_ - size_, value);
    return size_;
  }

  // The builder's FieldLoc list, kept by vtable slot: where each stored
  // field ends (the size after its push) less the table's start (it fits
  // a voffset: a table is < 64 KiB), and a bit per stored slot.
  void TrackField(voffset_t field, uoffset_t at) {
    const size_t slot = field / sizeof(voffset_t);
    assert(slot >= 2 && slot < kSlots && (stored_ >> slot & 1) == 0);
    rel_[slot] = static_cast<voffset_t>(at - start_);
    stored_ |= uint32_t{1} << slot;
  }

  uint8_t* const end_;
  const size_t capacity_;
  uint32_t size_ = 0;
  size_t minalign_ = 1;
  uoffset_t start_ = 0;
  uint32_t stored_ = 0;
  voffset_t rel_[kSlots];  // read only where stored_ has the slot's bit
};

}  // namespace

void EncodeMarker(std::string_view event_id, uint64_t counter_id,
                  uint32_t shard, int64_t delta, int64_t created_at_ms,
                  std::string* out, int64_t expires_at_ms, bool pinned,
                  const StrictAnswer* strict) {
  // An engine's event id is at most kMaxEventIdBytes (validated), so the
  // record fits on the stack; a longer one (a fuzzer's, a test's) takes a
  // heap buffer, with the same bytes.
  constexpr size_t kStack = kMaxEventIdBytes + kOverheadBytes;
  alignas(8) uint8_t stack[kStack];
  std::unique_ptr<uint8_t[]> heap;
  uint8_t* buf = stack;
  size_t capacity = kStack;
  if (event_id.size() > kMaxEventIdBytes) {
    capacity = event_id.size() + kOverheadBytes;
    heap = std::make_unique<uint8_t[]>(capacity);
    buf = heap.get();
  }
  DownwardWriter w(buf, capacity);
  const uoffset_t id = w.CreateString(event_id);
  // The generated CreateEventMarker's order (widest fields first, each size
  // in reverse declaration order): a different order is different bytes.
  // A non-strict marker's answer fields are all default: never stored.
  using M = EventMarker;
  w.StartTable();
  int64_t wide =
      expires_at_ms | created_at_ms | delta | static_cast<int64_t>(counter_id);
  if (strict != nullptr) {
    wide |= strict->remaining | strict->window_ends_ms | strict->value |
            strict->asked;
  }
  if (wide != 0) {  // some 8-byte field is stored: its Align(8)
    w.Align(sizeof(int64_t));
    if (strict != nullptr) {
      w.AddAligned<int64_t>(M::VT_REMAINING, strict->remaining);
      w.AddAligned<int64_t>(M::VT_WINDOW_ENDS_MS, strict->window_ends_ms);
      w.AddAligned<int64_t>(M::VT_VALUE, strict->value);
      w.AddAligned<int64_t>(M::VT_ASKED, strict->asked);
    }
    w.AddAligned<int64_t>(M::VT_EXPIRES_AT_MS, expires_at_ms);
    w.AddAligned<int64_t>(M::VT_CREATED_AT_MS, created_at_ms);
    w.AddAligned<int64_t>(M::VT_DELTA, delta);
    w.AddAligned<uint64_t>(M::VT_COUNTER_ID, counter_id);
  }
  // The string left the size 4-aligned, and 8-byte fields keep it so.
  w.AddAligned<uint32_t>(M::VT_SHARD, shard);
  w.AddOffset(M::VT_EVENT_ID, id);
  if (strict != nullptr) {
    w.AddAligned<uint8_t>(M::VT_REMAINING_KEPT, strict->remaining_kept);
    w.AddAligned<uint8_t>(M::VT_RESET, strict->reset);
    w.AddAligned<uint8_t>(M::VT_REFUSED, strict->refused);
    w.AddAligned<uint8_t>(M::VT_STRICT, 1);
  }
  w.AddAligned<uint8_t>(M::VT_PINNED, pinned);
  w.Finish(w.EndTable(), kMarkerId);
  // clear + append: std::string's append is cheaper than its assign (no
  // check for a source inside the string).
  out->clear();
  out->append(w.data(), w.size());
}

}  // namespace tally::schema
