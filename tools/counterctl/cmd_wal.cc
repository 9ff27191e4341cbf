// wal dump [--since SEQ] [--json]: the committed batches still in RocksDB's
// write-ahead log, decoded into counter operations (wal_decode.h), for
// debugging. Read-only: it takes no lock and writes nothing in the database.
//
// How it opens the database: first the public read-only open (OpenDb), which
// checks the path like every read subcommand and gives the catalog, to name
// counters; then a RocksDB secondary instance (DB::OpenAsSecondary, no LOCK,
// a private temporary directory for its own files) with the engine's column
// family options, whose DB::GetUpdatesSince reads the WAL files in place.
// Checked on RocksDB 7.8.3: GetUpdatesSince works on a secondary (and on an
// OpenForReadOnly) instance, both while a writer holds the database and after
// it closed; the feed ends at the last sequence the instance saw when it
// opened. A secondary is used because a read-only instance must not be
// opened on a database another process writes (docs/design.md, readers in
// other processes).
//
// RocksDB's iterator silently starts at the oldest batch it still has when
// SEQ is older than every WAL file; this command checks the first batch
// against SEQ and refuses instead of dumping a feed with a hole at the start.
//
// The iterator reads up to the instance's last sequence number and asserts
// (Debian's librocksdb keeps assertions: SIGABRT) that no record it reads
// lies beyond it. A live writer can break that by flushing and deleting
// every WAL file the instance replayed, so that the first record left is
// newer. StableWal checks for that before iterating and catches up instead.

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/transaction_log.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "engine/rocksdb_options.h"
#include "json_output.h"
#include "tally/options.h"
#include "wal_decode.h"

namespace counterctl {
namespace {

// RocksDB's largest sequence number (kMaxSequenceNumber, not in its public
// headers): sequence numbers take 56 bits.
constexpr uint64_t kMaxWalSequence = (uint64_t{1} << 56) - 1;

// A RocksDB secondary instance on the database and the directory it keeps
// its own files in; closes the instance and removes the directory when it
// goes out of scope.
class WalReader {
 public:
  WalReader() = default;
  WalReader(const WalReader&) = delete;
  WalReader& operator=(const WalReader&) = delete;
  ~WalReader() {
    if (db_ != nullptr) {
      for (rocksdb::ColumnFamilyHandle* h : handles_) {
        // Nothing to report from a destructor; the process is ending.
        db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      }
      db_->Close().PermitUncheckedError();
      db_.reset();
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);  // best effort
    }
  }

  tally::Status Open(const std::string& path) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base ? base : "/tmp") +
                        "/counterctl-wal-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      return tally::Status::IOError("cannot create a directory under " + templ +
                                    " to read the WAL from");
    }
    dir_ = buf.data();

    // The engine's options for the families this build knows, so the
    // instance opens the database the way tally does (merge operator,
    // prefix extractors); default options for any other family it finds.
    tally::engine::RocksOptions ro =
        tally::engine::MakeRocksOptions(tally::Options());
    env_ = ro.env;
    ro.db.create_if_missing = false;
    ro.db.create_missing_column_families = false;
    ro.db.max_open_files = -1;  // required by secondary instances
    std::vector<std::string> have;
    rocksdb::Status rs = rocksdb::DB::ListColumnFamilies(ro.db, path, &have);
    if (!rs.ok()) return Rocks(rs, "list the column families of " + path);
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& name : have) {
      auto known =
          std::find_if(ro.families.begin(), ro.families.end(),
                       [&name](const rocksdb::ColumnFamilyDescriptor& d) {
                         return d.name == name;
                       });
      families.push_back(known != ro.families.end()
                             ? *known
                             : rocksdb::ColumnFamilyDescriptor(
                                   name, rocksdb::ColumnFamilyOptions()));
    }
    rocksdb::DB* raw = nullptr;
    rs = rocksdb::DB::OpenAsSecondary(ro.db, path, dir_, families, &handles_,
                                      &raw);
    db_.reset(raw);
    if (!rs.ok()) return Rocks(rs, "open " + path + " to read its WAL");
    return tally::Status::OK();
  }

  rocksdb::DB* db() const { return db_.get(); }

  // Sets *last to the instance's last sequence number and *has_records to
  // whether the WAL files on disk hold a record at or below it, once the
  // oldest record they hold is no newer than *last (see the file comment):
  // catches up with a writer that deleted the WAL this instance replayed.
  // Leaves a short window (between this check and GetUpdatesSince listing
  // the files again) in which a writer deleting its whole WAL could still
  // make RocksDB assert.
  tally::Status StableWal(uint64_t* last, bool* has_records) {
    constexpr int kAttempts = 5;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      *last = db_->GetLatestSequenceNumber();
      rocksdb::VectorLogPtr files;
      rocksdb::Status rs = db_->GetSortedWalFiles(files);
      if (!rs.ok()) return Rocks(rs, "list the WAL files");
      // Sorted oldest first; an empty file (a fresh WAL) starts at 0.
      uint64_t oldest = 0;
      for (const std::unique_ptr<rocksdb::LogFile>& f : files) {
        if (f != nullptr && f->StartSequence() != 0) {
          oldest = f->StartSequence();
          break;
        }
      }
      *has_records = oldest != 0 && oldest <= *last;
      if (oldest == 0 || oldest <= *last) return tally::Status::OK();
      rs = db_->TryCatchUpWithPrimary();
      if (!rs.ok()) return Rocks(rs, "catch up with the writer");
    }
    return tally::Status::Busy(
        "the writer replaced its WAL files while they were read; run again, "
        "or dump a copy (counterctl checkpoint DIR)");
  }

  // Column family id -> name, as this instance numbers them (the ids are
  // the ones the WAL records carry).
  std::map<uint32_t, std::string> Families() const {
    std::map<uint32_t, std::string> out;
    for (rocksdb::ColumnFamilyHandle* h : handles_) {
      out[h->GetID()] = h->GetName();
    }
    return out;
  }

  static tally::Status Rocks(const rocksdb::Status& rs,
                             const std::string& what) {
    const std::string msg = "cannot " + what + ": " + rs.ToString();
    if (rs.IsCorruption()) return tally::Status::Corruption(msg);
    if (rs.IsNotFound()) return tally::Status::NotFound(msg);
    return tally::Status::IOError(msg);
  }

 private:
  std::shared_ptr<rocksdb::Env> env_;  // outlives db_ (declared first)
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::string dir_;
};

// The first batch the WAL holds at or after `since`, or none (*found false).
tally::Status FirstBatch(rocksdb::DB* db, uint64_t since, bool* found,
                         uint64_t* seq, uint32_t* count) {
  *found = false;
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  rocksdb::Status rs = db->GetUpdatesSince(since, &it);
  if (!rs.ok()) return WalReader::Rocks(rs, "read the WAL");
  if (!it->Valid()) {
    return it->status().ok() ? tally::Status::OK()
                             : WalReader::Rocks(it->status(), "read the WAL");
  }
  rocksdb::BatchResult b = it->GetBatch();
  *found = true;
  *seq = b.sequence;
  *count = b.writeBatchPtr != nullptr ? b.writeBatchPtr->Count() : 0;
  return tally::Status::OK();
}

// Prints one batch, or a gap, as text or one JSON line.
void PrintBatch(const WalBatch& batch, bool json) {
  if (json) {
    PrintJson(WalBatchJson(batch));
  } else {
    std::cout << WalBatchText(batch);
  }
}

void PrintGap(const WalGap& gap, bool json) {
  if (json) {
    PrintJson(WalGapJson(gap));
  } else {
    std::cout << WalGapText(gap);
  }
}

}  // namespace

int RunWal(const GlobalArgs& global, const WalArgs& args) {
  std::optional<uint64_t> since;
  if (args.has_since) {
    since = ParseCountFlag("--since", args.since, 1, kMaxWalSequence);
    if (!since) return kExitUsage;
  }

  // The catalog as it is now, through the public API: this also refuses a
  // --db that holds no tally database, as every read subcommand does.
  WalNames names;
  {
    std::unique_ptr<tally::Db> db;
    tally::Status s = OpenDb(global, OpenMode::kRead, &db);
    if (!s.ok()) return Fail(s);
    tally::Result<std::vector<tally::CounterInfo>> counters =
        db->ListCounters();
    if (!counters.ok()) return Fail(counters.status());
    for (const tally::CounterInfo& c : *counters) names.counters[c.id] = c.name;
  }

  WalReader reader;
  tally::Status s = reader.Open(global.db_path);
  if (!s.ok()) return Fail(s);
  names.families = reader.Families();
  rocksdb::DB* db = reader.db();
  uint64_t last = 0;
  bool has_records = false;
  s = reader.StableWal(&last, &has_records);
  if (!s.ok()) return Fail(s);

  if (since) {
    if (*since > last) {
      return Fail(tally::Status::InvalidArgument(
          "--since " + std::to_string(*since) +
          " is beyond the last sequence number written, " +
          std::to_string(last)));
    }
    // RocksDB starts at the oldest batch it has when SEQ is older: refuse
    // rather than print a feed that silently misses its start.
    bool found = false;
    uint64_t first_seq = 0;
    uint32_t first_count = 0;
    if (has_records) {
      s = FirstBatch(db, *since, &found, &first_seq, &first_count);
      if (!s.ok()) return Fail(s);
    }
    if (!found || first_seq > *since) {
      // Name the oldest batch the WAL still holds, if any.
      if (has_records) {
        s = FirstBatch(db, 0, &found, &first_seq, &first_count);
        if (!s.ok()) return Fail(s);
      }
      const std::string oldest =
          found ? "the oldest sequence it holds is " + std::to_string(first_seq)
                : "it holds no batches; everything up to sequence " +
                      std::to_string(last) + " is in table files";
      return Fail(tally::Status::NotFound(
          "the WAL no longer holds sequence " + std::to_string(*since) + ": " +
          oldest +
          " (WAL files are deleted once their writes are flushed; see "
          "docs/counterctl.md, wal dump)"));
    }
  }

  // Nothing at or below the last sequence: an empty feed (also when a
  // writer has since appended to a fresh WAL this instance never replayed).
  if (!has_records) return kExitOk;
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  rocksdb::Status rs = db->GetUpdatesSince(since.value_or(0), &it);
  if (!rs.ok()) return Fail(WalReader::Rocks(rs, "read the WAL"));
  bool have_prev = false;
  uint64_t prev_seq = 0;
  uint32_t prev_count = 0;
  for (; it->Valid(); it->Next()) {
    rocksdb::BatchResult b = it->GetBatch();
    if (b.writeBatchPtr == nullptr) {
      return Fail(
          tally::Status::Corruption("the WAL returned no batch at sequence " +
                                    std::to_string(b.sequence)));
    }
    WalGap gap;
    if (have_prev && FindWalGap(prev_seq, prev_count, b.sequence, &gap)) {
      PrintGap(gap, args.json);
    }
    WalBatch batch = DecodeWalBatch(b.sequence, *b.writeBatchPtr, names);
    PrintBatch(batch, args.json);
    have_prev = true;
    prev_seq = batch.seq;
    prev_count = batch.count;
  }
  std::cout.flush();
  if (!it->status().ok()) {
    const std::string where = have_prev
                                  ? "after sequence " + std::to_string(prev_seq)
                                  : "at the start";
    return Fail(WalReader::Rocks(
        it->status(), "read the WAL " + where +
                          " (a writer may have flushed and deleted a WAL "
                          "file meanwhile; run again)"));
  }
  if (!std::cout) {
    return Fail(tally::Status::IOError("cannot write to stdout"));
  }
  return kExitOk;
}

}  // namespace counterctl
