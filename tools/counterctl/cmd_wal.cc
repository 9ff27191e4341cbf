// wal dump [--since SEQ] [--json]: the committed batches still in RocksDB's
// write-ahead log, decoded into counter operations by the library
// (tally::DumpWal, tally/dump.h) and rendered here (wal_render.h), for
// debugging. Read-only: it takes no lock and writes nothing in the
// database.

#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "json_output.h"
#include "tally/dump.h"
#include "tally/options.h"
#include "wal_render.h"

namespace counterctl {
namespace {

// Prints each batch and gap as it comes, as text or one JSON line each.
class Printer : public tally::WalVisitor {
 public:
  explicit Printer(bool json) : json_(json) {}
  tally::Status Batch(const tally::DumpBatch& batch) override {
    if (json_) {
      PrintJson(WalBatchJson(batch));
    } else {
      std::cout << WalBatchText(batch);
    }
    return Written();
  }
  tally::Status Gap(uint64_t from, uint64_t to) override {
    if (json_) {
      PrintJson(WalGapJson(from, to));
    } else {
      std::cout << WalGapText(from, to);
    }
    return Written();
  }

 private:
  static tally::Status Written() {
    if (std::cout) return tally::Status::OK();
    return tally::Status::IOError("cannot write to stdout");
  }
  bool json_;
};

}  // namespace

int RunWal(const GlobalArgs& global, const WalArgs& args) {
  if (tally::Status s = NeedsLocalFiles(global, "wal"); !s.ok()) {
    return Fail(s);
  }
  std::optional<uint64_t> since;
  if (args.has_since) {
    since = ParseCountFlag("--since", args.since, 1, tally::kMaxWalSequence);
    if (!since) return kExitUsage;
  }
  Printer printer(args.json);
  tally::Status s = tally::DumpWal(tally::Options(), global.db_path,
                                   since.value_or(0), &printer);
  std::cout.flush();
  if (!s.ok()) return Fail(s);
  if (!std::cout) return Fail(tally::Status::IOError("cannot write to stdout"));
  return kExitOk;
}

}  // namespace counterctl
