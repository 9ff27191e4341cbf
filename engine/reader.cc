// Read-only databases: a RocksDB secondary instance that tails the writer,
// kept at one point across column families (docs/design.md, "readers in
// other processes").
//
// RocksDB 7.8.3's secondary catch-up moves each family on its own, and two
// of its paths leave families at different points:
//  - a catch-up that installs a flush the instance had already replayed
//    from the log keeps the memtable holding those entries beside the new
//    table file until a later log record for the family seals it: merge
//    operands are then counted twice (shards ahead of markers) while plain
//    values are not;
//  - a log the writer deletes after the instance read the MANIFEST but
//    before it opened the log is skipped (its data then appears only in a
//    table file the instance has not seen yet), for each family by its own
//    flush state.
// Both need the writer to change its version (a MANIFEST record) or delete
// a log while the instance reads. So: a catch-up is used only when the
// MANIFEST has not changed since the instance read it exactly, and is
// checked afterwards; otherwise a fresh instance is opened, accepted when no
// log disappeared during its open, and swapped in with the catalog held
// exclusively, so no read (they all hold a Catalog::Reader) sees it half
// way.

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

void DbImpl::CloseSecondary(Secondary* s) {
  if (s->db != nullptr) {
    for (rocksdb::ColumnFamilyHandle* h : s->handles) {
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
  RocksOptions ro = reader_options_;
  // A database no writer of this version has opened yet lacks the families
  // added since (ColumnFamily::may_be_missing: rollups, outbox, the last
  // entries of the table): read it without them (ReadCached and ReadOutbox
  // then answer NotFound / nothing).
  std::vector<std::string> have;
  if (rocksdb::DB::ListColumnFamilies(ro.db, path_, &have).ok()) {
    for (const ColumnFamily& f : ColumnFamilies()) {
      if (f.may_be_missing &&
          std::find(have.begin(), have.end(), f.name) == have.end()) {
        ro.families.resize(f.index);
        break;
      }
    }
  }
  // Opening replays the logs; no catch-up after it (one could install a
  // flush the open has already replayed: see the top of this file).
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = rocksdb::DB::OpenAsSecondary(
      ro.db, path_, out->dir, ro.families, &out->handles, &raw);
  out->db.reset(raw);
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
      out->exact = SameManifest(before, out->seen);
      return Status::OK();
    }
    CloseSecondary(out);  // a log went while it was read: maybe a mixed point
  }
  return Status::Busy(
      "database " + path_ + ": the writer deleted write-ahead logs during " +
      "each of " + std::to_string(kReaderAttempts) +
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
  reader_exact_ = s.exact;
  return Status::OK();
}

void DbImpl::SwapSecondary(Secondary* fresh, Catalog::Binding* b) {
  std::swap(secondary_dir_, fresh->dir);
  std::swap(db_, fresh->db);
  std::swap(handles_, fresh->handles);
  std::swap(reader_seen_, fresh->seen);
  std::swap(reader_exact_, fresh->exact);
  BindFamilies();
  *b = Catalog::Binding{db_.get(), HandlesOf(handles_)};
}

Status DbImpl::Refresh() {
  if (!options_.read_only) return Status::OK();
  MutexLock serial(&refresh_mu_);
  rocksdb::Env* env = reader_options_.db.env;
  WriterFiles now;
  Status s = ListWriterFiles(env, path_, &now);
  if (!s.ok()) return s;
  if (reader_exact_ && SameManifest(reader_seen_, now)) {
    // No version change since the instance read the MANIFEST: a catch-up
    // only replays log records, every family alike.
    bool raced = false;
    s = catalog_->MoveTo(
        [&](Catalog::Binding*) {
          Status c = FromRocks(db_->TryCatchUpWithPrimary(),
                                    "catch up with the writer of " + path_);
          WriterFiles after;
          if (c.ok()) c = ListWriterFiles(env, path_, &after);
          if (!c.ok()) return c;
          raced = !SameManifest(now, after);
          if (!raced) reader_seen_ = std::move(after);
          return Status::OK();
        },
        path_);
    if (!s.ok()) return s;
    if (!raced) {
      reader_at_point_ = true;
      return LoadTimeMark();
    }
    // The writer changed its version during the catch-up: this instance
    // may now mix points. Replace it.
    reader_at_point_ = false;
    reader_exact_ = false;
  }
  Secondary fresh;
  s = OpenSecondary(&fresh);
  if (!s.ok()) return s;  // the old instance stays, at its point (if any)
  s = catalog_->MoveTo(
      [&](Catalog::Binding* b) {
        SwapSecondary(&fresh, b);
        return Status::OK();
      },
      path_);
  CloseSecondary(&fresh);  // the old instance, no longer read
  if (!s.ok()) return s;
  reader_at_point_ = true;
  return LoadTimeMark();
}

}  // namespace tally::engine
