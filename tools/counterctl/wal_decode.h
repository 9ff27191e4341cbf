// Decoding of RocksDB write batches, as `counterctl wal dump` reads them from
// the write-ahead log, into tally's counter operations (docs/format.md gives
// every key and value decoded here).
//
// This file and cmd_wal.cc are counterctl's only look below the public API:
// the WAL is RocksDB's, not tally's, so they include engine/coding.h,
// engine/format.h and schema/records.h for the key and record layouts
// (tools/CMakeLists.txt grants exactly these two files the project root as
// an include directory). Nothing here writes.
//
// Decoding never fails: an entry that is not what tally writes (an unknown
// family or key, a value of the wrong size, a FlatBuffer that does not
// verify) becomes a "raw" operation carrying its bytes in hex and the reason.
//
// Thread safety: plain functions over values; no shared state.

#ifndef TALLY_TOOLS_COUNTERCTL_WAL_DECODE_H_
#define TALLY_TOOLS_COUNTERCTL_WAL_DECODE_H_

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "json_output.h"

namespace counterctl {

// What the decoder needs to name things.
struct WalNames {
  // Column family id -> family name ("meta", "shards", ...), from the handles
  // of the instance that read the WAL. An id missing here decodes as raw.
  std::map<uint32_t, std::string> families;
  // Counter id -> name, from the catalog as it is now: a counter deleted
  // since the batch was written prints as id=N.
  std::map<uint64_t, std::string> counters;
};

// One decoded entry of a batch: its text line (without the leading two
// spaces) and its JSON object; both carry the same facts.
struct WalOp {
  std::string text;
  Json json;
};

// One committed batch: its first sequence number, the number of sequence
// numbers it takes (RocksDB's WriteBatch::Count(): every put, merge, delete
// and range delete), and its entries in order.
struct WalBatch {
  uint64_t seq = 0;
  uint32_t count = 0;
  std::vector<WalOp> ops;
};

// Decodes `batch`, written at sequence `seq`. Never fails: if RocksDB cannot
// iterate the batch (malformed), the entries decoded so far are followed by
// one raw entry holding the whole batch in hex and RocksDB's error.
WalBatch DecodeWalBatch(uint64_t seq, const rocksdb::WriteBatch& batch,
                        const WalNames& names);

// "batch seq=S ops=N" followed by one "  <op>" line per entry, each line
// ending in '\n'.
std::string WalBatchText(const WalBatch& batch);

// {"seq":S,"count":N,"ops":[...]}: one line of `wal dump --json`.
Json WalBatchJson(const WalBatch& batch);

// A run of sequence numbers the WAL does not hold between two batches it
// does. Not expected from tally, which writes every batch to the WAL and
// deletes WAL files oldest first; reported rather than skipped silently.
struct WalGap {
  uint64_t from = 0;  // first missing sequence
  uint64_t to = 0;    // last missing sequence
};

// The gap between a batch (prev_seq, prev_count) and the next one, which
// starts at `next_seq`; false when they are contiguous (or overlap).
bool FindWalGap(uint64_t prev_seq, uint32_t prev_count, uint64_t next_seq,
                WalGap* gap);

// "gap from=A to=B" and {"gap_from":A,"gap_to":B}.
std::string WalGapText(const WalGap& gap);
Json WalGapJson(const WalGap& gap);

// Lower-case hex of `bytes`, no separators.
std::string Hex(std::string_view bytes);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_WAL_DECODE_H_
