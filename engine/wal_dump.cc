// tally::DumpWal: the committed batches still in a database's write-ahead
// log, each decoded by DecodeWalBatch (engine/wal_decode.cc).
//
// How it reads: first the ordinary read-only open (Db::Open), which checks
// the path and gives the catalog, to name counters; then a RocksDB
// secondary instance (DB::OpenAsSecondary, no LOCK, a private temporary
// directory for its own files) with the engine's column family options,
// whose DB::GetUpdatesSince reads the WAL files in place. Checked on
// RocksDB 7.8.3: GetUpdatesSince works on a secondary instance, both while
// a writer holds the database and after it closed; the feed ends at the
// last sequence the instance saw when it opened. A secondary is used
// because a read-only instance must not be opened on a database another
// process writes (docs/design.md, readers in other processes).
//
// RocksDB's iterator silently starts at the oldest batch it still has when
// `since` is older than every WAL file; the first batch is checked against
// `since`, refusing instead of dumping a feed with a hole at the start.
//
// The iterator reads up to the instance's last sequence number and asserts
// (Debian's librocksdb keeps assertions: SIGABRT) that no record it reads
// lies beyond it. A live writer can break that by flushing and deleting
// every WAL file the instance replayed, so that the first record left is
// newer. StableWal checks for that before iterating and catches up instead.

#include "engine/wal_dump.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/transaction_log.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/rocksdb_options.h"
#include "tally/db.h"
#include "tally/dump.h"
#include "util/rocks_status.h"

namespace tally {
namespace engine {

bool FindWalGap(uint64_t prev_seq, uint32_t prev_count, uint64_t next_seq,
                uint64_t* from, uint64_t* to) {
  const uint64_t expected = prev_seq + prev_count;
  if (next_seq <= expected) return false;
  *from = expected;
  *to = next_seq - 1;
  return true;
}

}  // namespace engine

namespace {

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
        // Nothing to report from a destructor.
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

  Status Open(const Options& options, const std::string& path) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base ? base : "/tmp") +
                        "/tally-wal-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      return Status::IOError("cannot create a directory under " + templ +
                             " to read the WAL from");
    }
    dir_ = buf.data();

    // The engine's options for the families of the table, so the instance
    // opens the database the way tally does (merge operator, prefix
    // extractors); default options for any other family it finds.
    engine::RocksOptions ro = engine::MakeRocksOptions(options);
    env_ = ro.env;
    ro.db.create_if_missing = false;
    ro.db.create_missing_column_families = false;
    ro.db.max_open_files = -1;  // required by secondary instances
    std::vector<std::string> have;
    rocksdb::Status rs = rocksdb::DB::ListColumnFamilies(ro.db, path, &have);
    if (!rs.ok()) return FromRocks(rs, "list the column families of " + path);
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
    return FromRocks(rs, "open " + path + " to read its WAL");
  }

  rocksdb::DB* db() const { return db_.get(); }

  // Sets *last to the instance's last sequence number and *has_records to
  // whether the WAL files on disk hold a record at or below it, once the
  // oldest record they hold is no newer than *last (see the file comment):
  // catches up with a writer that deleted the WAL this instance replayed.
  // Leaves a short window (between this check and GetUpdatesSince listing
  // the files again) in which a writer deleting its whole WAL could still
  // make RocksDB assert.
  Status StableWal(uint64_t* last, bool* has_records) {
    constexpr int kAttempts = 5;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      *last = db_->GetLatestSequenceNumber();
      rocksdb::VectorLogPtr files;
      rocksdb::Status rs = db_->GetSortedWalFiles(files);
      if (!rs.ok()) return FromRocks(rs, "list the WAL files");
      // Sorted oldest first; an empty file (a fresh WAL) starts at 0.
      uint64_t oldest = 0;
      for (const std::unique_ptr<rocksdb::LogFile>& f : files) {
        if (f != nullptr && f->StartSequence() != 0) {
          oldest = f->StartSequence();
          break;
        }
      }
      *has_records = oldest != 0 && oldest <= *last;
      if (oldest == 0 || oldest <= *last) return Status::OK();
      rs = db_->TryCatchUpWithPrimary();
      if (!rs.ok()) return FromRocks(rs, "catch up with the writer");
    }
    return Status::Busy(
        "the writer replaced its WAL files while they were read; run again, "
        "or dump a copy (a checkpoint)");
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

 private:
  std::shared_ptr<rocksdb::Env> env_;  // outlives db_ (declared first)
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::string dir_;
};

// The first batch the WAL holds at or after `since`, or none (*found false).
Status FirstBatch(rocksdb::DB* db, uint64_t since, bool* found, uint64_t* seq) {
  *found = false;
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  rocksdb::Status rs = db->GetUpdatesSince(since, &it);
  if (!rs.ok()) return FromRocks(rs, "read the WAL");
  if (!it->Valid()) return FromRocks(it->status(), "read the WAL");
  *found = true;
  *seq = it->GetBatch().sequence;
  return Status::OK();
}

// NotFound unless the WAL holds the batch with sequence `since`.
Status CheckSince(rocksdb::DB* db, uint64_t since, uint64_t last,
                  bool has_records) {
  if (since > last) {
    return Status::InvalidArgument(
        "since " + std::to_string(since) +
        " is beyond the last sequence number written, " + std::to_string(last));
  }
  bool found = false;
  uint64_t first = 0;
  if (has_records) {
    Status s = FirstBatch(db, since, &found, &first);
    if (!s.ok()) return s;
  }
  if (found && first <= since) return Status::OK();
  // Name the oldest batch the WAL still holds, if any.
  if (has_records) {
    Status s = FirstBatch(db, 0, &found, &first);
    if (!s.ok()) return s;
  }
  const std::string oldest =
      found ? "the oldest sequence it holds is " + std::to_string(first)
            : "it holds no batches; everything up to sequence " +
                  std::to_string(last) + " is in table files";
  return Status::NotFound("the WAL no longer holds sequence " +
                          std::to_string(since) + ": " + oldest +
                          " (WAL files are deleted once their writes are "
                          "flushed)");
}

// A target naming a server ("redis://...") has no WAL files here.
Status CheckLocal(const std::string& path) {
  const size_t scheme = path.find("://");
  if (scheme == std::string::npos) return Status::OK();
  return Status::NotSupported(
      "DumpWal reads a local database's WAL files, and " +
      path.substr(0, scheme + 3) + "... names a server: it has none to read");
}

}  // namespace

Status DumpWal(const Options& options, const std::string& path, uint64_t since,
               WalVisitor* visitor) {
  if (since > kMaxWalSequence) {
    return Status::InvalidArgument("since " + std::to_string(since) +
                                   " is outside 0.." +
                                   std::to_string(kMaxWalSequence));
  }
  if (Status local = CheckLocal(path); !local.ok()) return local;
  // The catalog as it is now, through the ordinary read-only open: this
  // also refuses a path that holds no tally database.
  std::map<uint64_t, std::string> counters;
  {
    Options read = options;
    read.read_only = true;
    read.create_if_missing = false;
    read.rollup_interval_ms = 0;
    std::unique_ptr<Db> db;
    Status s = Db::Open(read, path, &db);
    if (!s.ok()) return s;
    Result<std::vector<CounterInfo>> list = db->ListCounters();
    if (!list.ok()) return list.status();
    for (const CounterInfo& c : *list) counters[c.id] = c.name;
  }

  WalReader reader;
  Status s = reader.Open(options, path);
  if (!s.ok()) return s;
  const std::map<uint32_t, std::string> families = reader.Families();
  rocksdb::DB* db = reader.db();
  uint64_t last = 0;
  bool has_records = false;
  s = reader.StableWal(&last, &has_records);
  if (!s.ok()) return s;
  if (since != 0) {
    s = CheckSince(db, since, last, has_records);
    if (!s.ok()) return s;
  }
  // Nothing at or below the last sequence: an empty feed (also when a
  // writer has since appended to a fresh WAL this instance never replayed).
  if (!has_records) return Status::OK();
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  s = FromRocks(db->GetUpdatesSince(since, &it), "read the WAL");
  if (!s.ok()) return s;
  bool have_prev = false;
  uint64_t prev_seq = 0;
  uint32_t prev_count = 0;
  for (; it->Valid(); it->Next()) {
    rocksdb::BatchResult b = it->GetBatch();
    if (b.writeBatchPtr == nullptr) {
      return Status::Corruption("the WAL returned no batch at sequence " +
                                std::to_string(b.sequence));
    }
    uint64_t from = 0, to = 0;
    if (have_prev &&
        engine::FindWalGap(prev_seq, prev_count, b.sequence, &from, &to)) {
      s = visitor->Gap(from, to);
      if (!s.ok()) return s;
    }
    const rocksdb::Slice data = b.writeBatchPtr->Data();
    DumpBatch batch =
        DecodeWalBatch(b.sequence, std::string_view(data.data(), data.size()),
                       families, counters);
    s = visitor->Batch(batch);
    if (!s.ok()) return s;
    have_prev = true;
    prev_seq = batch.seq;
    prev_count = batch.count;
  }
  if (it->status().ok()) return Status::OK();
  const std::string where =
      have_prev ? "after sequence " + std::to_string(prev_seq) : "at the start";
  return FromRocks(it->status(),
                   "read the WAL " + where +
                       " (a writer may have flushed and deleted a WAL file "
                       "meanwhile; run again)");
}

}  // namespace tally
