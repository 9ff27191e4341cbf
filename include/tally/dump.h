// Reading a database's write-ahead log back as tally records, for debugging
// (as LevelDB's DumpFile): every committed batch still in RocksDB's WAL,
// each entry decoded by its column family's decoder into named fields
// (docs/format.md gives every key and value). Nothing here writes; the
// database may be held by a writer meanwhile.
//
// Decoding never fails: an entry that is not what tally writes (an unknown
// family or key, a value of the wrong size, a FlatBuffer that does not
// verify) becomes a "raw" op carrying its bytes and the reason.
//
// Thread safety: plain functions; a visitor is called from the calling
// thread only.

#ifndef TALLY_DUMP_H_
#define TALLY_DUMP_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tally/export.h"
#include "tally/options.h"
#include "tally/status.h"

namespace tally {

// One decoded fact of an entry. `key` names it (also the JSON key unless
// `json_key` is set); which of text / i / u holds the value depends on kind.
struct DumpField {
  enum class Kind {
    kWord,     // text: a bare word, e.g. "put" in "header put"
    kText,     // text: a name or id, shown as is
    kQuoted,   // text: free text (a reason), shown quoted
    kInt,      // i
    kUint,     // u
    kDelta,    // i: an increment's delta, shown signed
    kTime,     // i: ms since the Unix epoch
    kBytes,    // text: raw bytes, shown in hex
    kCounter,  // u: a counter id; text: its name now, if `named`
  };
  Kind kind = Kind::kText;
  std::string key;
  std::string json_key;  // empty: key
  std::string text;
  int64_t i = 0;
  uint64_t u = 0;
  bool named = false;  // kCounter: the catalog knows the id
};

// One entry of a batch: its op ("merge", "marker", "outbox-entry", "raw",
// ... docs/counterctl.md lists them), the family it was written to (empty
// for entries of no family, such as log data), and its fields in order.
struct DumpOp {
  std::string op;
  std::string family;
  std::vector<DumpField> fields;
};

// One committed batch: its first sequence number, the number of sequence
// numbers it takes (RocksDB's WriteBatch::Count(): every put, merge, delete
// and range delete), and its entries in order.
struct DumpBatch {
  uint64_t seq = 0;
  uint32_t count = 0;
  std::vector<DumpOp> ops;
};

// RocksDB's largest sequence number: sequence numbers take 56 bits.
inline constexpr uint64_t kMaxWalSequence = (uint64_t{1} << 56) - 1;

// Receives the dump in order. A non-OK Status from either call ends the
// dump with that Status.
class TALLY_EXPORT WalVisitor {
 public:
  virtual ~WalVisitor() = default;
  virtual Status Batch(const DumpBatch& batch) = 0;
  // Sequence numbers [from, to] the WAL does not hold between two batches
  // it does. Not expected from tally (it writes every batch to the WAL and
  // RocksDB deletes WAL files oldest first); reported, never skipped.
  virtual Status Gap(uint64_t from, uint64_t to) = 0;
};

// Hands every batch of the WAL of the database at `path`, from the batch
// holding sequence `since` (0: the oldest the WAL holds), to `visitor`.
// Counters are named from the catalog as it is now (a counter deleted
// since prints by id). `options` as for Db::Open (its env, clock); the
// database is opened read-only whatever options.read_only says.
// InvalidArgument when `since` is beyond the last sequence written;
// NotFound when the WAL no longer holds `since` (its message names the
// oldest sequence it does hold); Busy when a writer replaced its WAL files
// while they were read; NotSupported for a target naming a server
// ("redis://..."), which has no WAL files here.
TALLY_EXPORT Status DumpWal(const Options& options, const std::string& path,
                            uint64_t since, WalVisitor* visitor);

// Decodes one write batch (RocksDB's WriteBatch::Data() bytes) written at
// sequence `seq`: families named by column family id, counters by id.
// Never fails: a batch RocksDB cannot iterate ends with one raw op holding
// its bytes and RocksDB's error.
TALLY_EXPORT DumpBatch
DecodeWalBatch(uint64_t seq, std::string_view batch_bytes,
               const std::map<uint32_t, std::string>& families,
               const std::map<uint64_t, std::string>& counters);

}  // namespace tally

#endif  // TALLY_DUMP_H_
