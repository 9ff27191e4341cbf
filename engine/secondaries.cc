// Read-only databases: a RocksDB secondary instance that tails the writer,
// kept at one point across column families (docs/design.md, "readers in
// other processes").
//
// RocksDB 7.8.3's secondary catch-up moves each family on its own, and two
// of its paths leave families at different points:
//  - a catch-up that installs a flush the instance had already replayed
//    from the log keeps the memtable holding those entries beside the new
//    table file until a later log record for the family seals it: merge
//    operands are then counted twice (shards ahead of markers), and a
//    plain value overwritten since (the time mark, a catalog record, a
//    roll-up) reads stale, since a read looks in the memtable first;
//  - a log the writer deletes after the instance read the MANIFEST but
//    before it opened the log is skipped (its data then appears only in a
//    table file the instance has not seen yet), for each family by its own
//    flush state. The log may also be one created after the open began
//    and deleted before it ended, which no listing shows (LogsKept in
//    engine/writer_files.h rules it out).
// Both need the writer to change its version (a MANIFEST record) or delete
// a log while the instance reads, and both can be told afterwards from what
// the instance and the writer's directory show:
//  - fault 1 needs entries of a family in the instance's memtables before
//    the catch-up and a table file of that family that the catch-up
//    installed (a flush, or a compaction taking one in). When
//    no such file came, or the family's memtables were empty, nothing can
//    be held twice. (In the 7.8.3 source: TryCatchUpWithPrimary drops only
//    sealed memtables, imm()->RemoveOldMemTables(cfd->GetLogNumber()), never
//    the active one, which RecoverLogFiles seals only on the family's next
//    record in a newer log.)
//  - fault 2 needs a log deleted during the catch-up whose flush the
//    instance did not read; the writer records that flush in the MANIFEST
//    before it deletes the log, so with the MANIFEST unchanged across the
//    catch-up no such log existed.
// So a Refresh catches up incrementally, but never the instance reads use:
// it catches up the spare (the instance the previous Refresh replaced),
// checks both conditions, and swaps it in with the catalog held exclusively
// (every read holds a Catalog::Reader); when either check fails it opens a
// fresh instance instead, accepted when no log disappeared during its open.
// Reads therefore only ever see an instance at one point.
//
// A read-only open leaves out the families Options::reads does not name:
// fewer WAL records to insert into memtables and fewer table files to open.

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/db_impl.h"
#include "engine/format.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// Fresh opens tried before a Refresh or a read-only open gives up (each
// one lost only to a log deleted during it, i.e. a flush that completed).
constexpr int kReaderAttempts = 8;

}  // namespace

uint32_t DbImpl::ReadBitOf(Family f) {
  switch (f) {
    case kShards:
    case kHolds:  // what is available is part of a strict counter's value
      return kReadValues;
    case kEvents:
    case kClaims:  // a claim's completion is the marker of a side effect
      return kReadMarkers;
    case kRollups:
      return kReadRollups;
    case kOutbox:
      return kReadOutbox;
    case kDefault:
    case kMeta:
      break;
  }
  return 0;  // always opened: the catalog and the time mark live in meta
}

Status DbImpl::CheckReads(uint32_t need, const char* call) const {
  if ((options_.reads & need) == need) return Status::OK();
  std::string names;
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kReadValues, "kReadValues (counter values)"},
      {kReadMarkers, "kReadMarkers (idempotency markers)"},
      {kReadRollups, "kReadRollups (cached totals)"},
      {kReadOutbox, "kReadOutbox (the outbox)"},
  };
  for (const auto& [bit, name] : kNames) {
    if ((need & bit) != 0 && (options_.reads & bit) == 0) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
  }
  return Status::NotSupported(
      std::string(call) + " on database " + path_ +
      " needs what it was opened without: Options::reads " +
      std::to_string(options_.reads) + " lacks " + names +
      "; open it with those bits in Options::reads");
}

void DbImpl::CloseSecondary(Secondary* s) {
  if (s->db != nullptr) {
    for (rocksdb::ColumnFamilyHandle* h : s->handles) {
      if (h == nullptr) continue;  // a family this instance left out
      s->db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    }
    s->db->Close().PermitUncheckedError();  // a reader has nothing to lose
    s->db.reset();
  }
  s->handles.clear();
  if (!s->dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(s->dir, ec);  // best effort
    s->dir.clear();
  }
}

Status DbImpl::OpenSecondaryOnce(Secondary* out) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base != nullptr && *base ? base : "/tmp") +
                      "/tally-reader-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return Status::IOError(
        "cannot create a directory for the read-only "
        "instance under " +
        templ);
  }
  out->dir = buf.data();
  const RocksOptions& ro = reader_options_;
  // A database no writer of this version has opened yet lacks the families
  // added since (ColumnFamily::may_be_missing: rollups, outbox, holds,
  // claims): read it
  // without them (ReadCached and ReadOutbox then answer NotFound /
  // nothing). Families Options::reads does not name are left out too: the
  // instance then neither opens their table files nor inserts their WAL
  // records into memtables (RocksDB 7.8.3 skips a record of a family the
  // instance lacks: DBImplSecondary::RecoverLogFiles finds no
  // ColumnFamilyData for it and WriteBatchInternal::InsertInto ignores
  // missing families).
  std::vector<std::string> have;
  const bool listed = rocksdb::DB::ListColumnFamilies(ro.db, path_, &have).ok();
  std::vector<rocksdb::ColumnFamilyDescriptor> open;
  std::vector<size_t> family_of;  // the Family of each entry of `open`
  for (size_t i = 0; i < ro.families.size(); ++i) {
    const Family f = static_cast<Family>(i);
    if ((ReadBitOf(f) & options_.reads) != ReadBitOf(f)) continue;
    if (listed && f != kDefault && ColumnFamilies()[i - 1].may_be_missing &&
        std::find(have.begin(), have.end(), ro.families[i].name) ==
            have.end()) {
      continue;
    }
    open.push_back(ro.families[i]);
    family_of.push_back(i);
  }
  // Opening replays the logs; no catch-up after it (one could install a
  // flush the open has already replayed: see the top of this file).
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> got;
  rocksdb::Status rs =
      rocksdb::DB::OpenAsSecondary(ro.db, path_, out->dir, open, &got, &raw);
  out->db.reset(raw);
  out->handles.assign(ro.families.size(), nullptr);
  for (size_t k = 0; k < got.size() && k < family_of.size(); ++k) {
    out->handles[family_of[k]] = got[k];
  }
  return FromRocks(rs, "open " + path_ + " read-only");
}

Status DbImpl::OpenSecondary(Secondary* out) {
  for (int attempt = 0; attempt < kReaderAttempts; ++attempt) {
    WriterFiles before;
    Status s = ListWriterFiles(reader_options_.db.env, path_, &before);
    if (s.ok()) s = OpenSecondaryOnce(out);
    WriterFiles after;
    if (s.ok()) s = ListWriterFiles(reader_options_.db.env, path_, &after);
    if (!s.ok()) {
      CloseSecondary(out);
      return s;
    }
    if (LogsKept(before, after)) {
      out->seen = std::move(after);
      return Status::OK();
    }
    CloseSecondary(out);  // a log may have gone while it was read
  }
  return Status::Busy(
      "database " + path_ + ": the writer flushed and deleted or replaced "
      "write-ahead logs during each of " + std::to_string(kReaderAttempts) +
      " attempts to open it read-only at one consistent point (it flushes "
      "very often); retry");
}

// A secondary instance: no LOCK, tails the writer's MANIFEST and WAL. It
// keeps its own info log in a private temporary directory.
Status DbImpl::OpenReader(RocksOptions ro) {
  ro.db.create_if_missing = false;
  ro.db.create_missing_column_families = false;
  ro.db.max_open_files = -1;  // required by secondary instances
  reader_options_ = std::move(ro);
  Secondary s;
  Status st = OpenSecondary(&s);
  if (!st.ok()) return st;
  secondary_dir_ = std::move(s.dir);
  db_ = std::move(s.db);
  handles_ = std::move(s.handles);
  reader_seen_ = std::move(s.seen);
  return Status::OK();
}

void DbImpl::SwapSecondary(Secondary* fresh, Catalog::Binding* b) {
  std::swap(secondary_dir_, fresh->dir);
  std::swap(db_, fresh->db);
  std::swap(handles_, fresh->handles);
  std::swap(reader_seen_, fresh->seen);
  BindFamilies();
  *b = Catalog::Binding{db_.get(), HandlesOf(handles_)};
}

namespace {

// The table files of `db` by family name.
std::vector<rocksdb::LiveFileMetaData> TableFiles(rocksdb::DB* db) {
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  return files;
}

// True when `after` holds a table file of `family` that `before` did not
// (a flush or compaction the catch-up installed).
bool FilesAdded(const std::vector<rocksdb::LiveFileMetaData>& before,
                const std::vector<rocksdb::LiveFileMetaData>& after,
                const std::string& family) {
  for (const rocksdb::LiveFileMetaData& a : after) {
    if (a.column_family_name != family) continue;
    bool known = false;
    for (const rocksdb::LiveFileMetaData& b : before) {
      if (b.file_number == a.file_number) {
        known = true;
        break;
      }
    }
    if (!known) return true;
  }
  return false;
}

// Entries in the instance's memtables of family `h` (active and sealed).
uint64_t MemtableEntries(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* h) {
  uint64_t active = 0;
  uint64_t sealed = 0;
  if (!db->GetIntProperty(h, "rocksdb.num-entries-active-mem-table", &active) ||
      !db->GetIntProperty(h, "rocksdb.num-entries-imm-mem-tables", &sealed)) {
    return UINT64_MAX;  // unknown: judged as holding entries
  }
  return active + sealed;
}

}  // namespace

Status DbImpl::CatchUp(Secondary* x, bool* at_point) {
  *at_point = false;
  rocksdb::Env* env = reader_options_.db.env;
  WriterFiles before;
  Status s = ListWriterFiles(env, path_, &before);
  if (!s.ok()) return s;
  // The families holding replayed entries now: a flush of those entries
  // installed by this catch-up would count merge operands twice, and an
  // older plain value left in the memtable would hide the newer one in the
  // table file (fault 1). Every family: meta's time mark and catalog
  // records, roll-ups and outbox cursors are overwritten in place.
  std::vector<const ColumnFamily*> exposed;
  for (const ColumnFamily& f : ColumnFamilies()) {
    rocksdb::ColumnFamilyHandle* h = x->handles[f.index];
    if (h == nullptr) continue;
    if (MemtableEntries(x->db.get(), h) != 0) exposed.push_back(&f);
  }
  const std::vector<rocksdb::LiveFileMetaData> files_before =
      exposed.empty() ? std::vector<rocksdb::LiveFileMetaData>()
                      : TableFiles(x->db.get());
  s = FromRocks(x->db->TryCatchUpWithPrimary(),
                "catch up with the writer of " + path_);
  WriterFiles after;
  if (s.ok()) s = ListWriterFiles(env, path_, &after);
  if (!s.ok()) return s;
  // Fault 2: a log deleted during the catch-up goes with a MANIFEST record
  // written before it; with the MANIFEST unchanged, none was.
  if (!SameManifest(before, after)) return Status::OK();
  if (!exposed.empty()) {
    const std::vector<rocksdb::LiveFileMetaData> files_after =
        TableFiles(x->db.get());
    for (const ColumnFamily* f : exposed) {
      if (FilesAdded(files_before, files_after, f->name)) {
        return Status::OK();  // fault 1 possible: not at one point
      }
    }
  }
  x->seen = std::move(after);
  *at_point = true;
  return Status::OK();
}

Status DbImpl::Refresh() {
  if (!options_.read_only) return Status::OK();
  MutexLock serial(&refresh_mu_);
  // The spare (the instance the previous Refresh replaced, which no read
  // uses) catches up; it is swapped in only when it is at one point, else a
  // fresh instance is. Reads never see an instance between two points.
  bool at_point = false;
  if (spare_.db != nullptr) {
    Status s = CatchUp(&spare_, &at_point);
    if (!s.ok()) at_point = false;  // a fresh instance instead
  }
  if (!at_point) {
    CloseSecondary(&spare_);
    Status s = OpenSecondary(&spare_);
    if (!s.ok()) return s;  // the instance in use stays, at its point
    ++refresh_reopens_;
  } else {
    ++refresh_catch_ups_;
  }
  Status s = catalog_->MoveTo(
      [&](Catalog::Binding* b) {
        SwapSecondary(&spare_, b);
        return Status::OK();
      },
      path_);
  if (!s.ok()) return s;
  return LoadTimeMark();
}

}  // namespace tally::engine
