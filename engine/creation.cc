#include "engine/creation.h"

#include <fcntl.h>
#include <rocksdb/file_system.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/format.h"
#include "engine/path_check.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

namespace fs = std::filesystem;

// What the marker says to someone who finds it.
constexpr char kMarkerText[] =
    "tally is creating the database in this directory. If no tally process "
    "is doing so any more, the creation was interrupted: the next open "
    "with create_if_missing (counterctl create, import) discards this "
    "directory's contents and creates the database afresh.\n";

std::string MarkerPath(const std::string& dir) {
  return dir + "/" + kCreatingMarker;
}

Status Errno(const std::string& what, int err) {
  return Status::IOError(what + ": " + std::strerror(err));
}

Status FsyncDir(rocksdb::FileSystem* files, const std::string& dir) {
  std::unique_ptr<rocksdb::FSDirectory> d;
  rocksdb::IOStatus s =
      files->NewDirectory(dir, rocksdb::IOOptions(), &d, nullptr);
  if (s.ok()) s = d->Fsync(rocksdb::IOOptions(), nullptr);
  if (s.ok()) s = d->Close(rocksdb::IOOptions(), nullptr);
  return FromRocks(s, "fsync directory " + dir);
}

// Writes the marker and makes it durable, file and directory entry.
Status WriteMarker(rocksdb::FileSystem* files, const std::string& dir) {
  const std::string path = MarkerPath(dir);
  std::unique_ptr<rocksdb::FSWritableFile> f;
  const rocksdb::IOOptions io;
  rocksdb::IOStatus s =
      files->NewWritableFile(path, rocksdb::FileOptions(), &f, nullptr);
  if (s.ok()) s = f->Append(kMarkerText, io, nullptr);
  if (s.ok()) s = f->Sync(io, nullptr);
  if (s.ok()) s = f->Close(io, nullptr);
  if (!s.ok()) return FromRocks(s, "write " + path);
  return FsyncDir(files, dir);
}

// Removes everything in `dir` but the marker: what an interrupted creation
// left (never acknowledged to anyone).
Status DiscardUnfinished(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename() == kCreatingMarker) continue;
    fs::remove_all(e.path(), ec);
    if (ec) {
      return Status::IOError("cannot discard " + e.path().string() +
                             " of the unfinished creation in " + dir + ": " +
                             ec.message());
    }
  }
  if (ec) {
    return Status::IOError("cannot list the unfinished creation in " + dir +
                           ": " + ec.message());
  }
  return Status::OK();
}

}  // namespace

Status Creation::Begin(const Options& options, const std::string& path,
                       rocksdb::Env* env, std::unique_ptr<Creation>* creation) {
  creation->reset();
  rocksdb::FileSystem* files = env->GetFileSystem().get();
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  // Through the private file system: a directory made here is 0700.
  Status s = FromRocks(
      files->CreateDirIfMissing(path, rocksdb::IOOptions(), nullptr),
      "create database directory " + path);
  if (!s.ok()) return s;
  if (!existed) {
    fs::path parent = fs::path(path).parent_path();
    s = FsyncDir(files, parent.empty() ? "." : parent.string());
    if (!s.ok()) return s;
  }

  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open database directory " + path, errno);
  std::unique_ptr<Creation> held(new Creation(path, env, fd));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::Busy("database " + path +
                          " is being created by another process (or "
                          "thread); open it once that is done");
    }
    return Errno("lock database directory " + path, errno);
  }

  // Under the lock, what is there now decides.
  PathState state;
  s = CheckPath(options, path, &state);
  if (!s.ok()) return s;
  switch (state) {
    case PathState::kDatabase:
      return Status::OK();  // another creator finished meanwhile
    case PathState::kUnfinished:
      s = DiscardUnfinished(path);
      if (s.ok()) s = FsyncDir(files, path);
      break;
    case PathState::kNew:
      s = WriteMarker(files, path);
      break;
  }
  if (!s.ok()) return s;
  *creation = std::move(held);
  return Status::OK();
}

Status Creation::Finish() {
  rocksdb::FileSystem* files = env_->GetFileSystem().get();
  const std::string marker = MarkerPath(path_);
  Status s =
      FromRocks(files->DeleteFile(marker, rocksdb::IOOptions(), nullptr),
                     "remove " + marker);
  return s.ok() ? FsyncDir(files, path_) : s;
}

Creation::~Creation() { ::close(lock_fd_); }

}  // namespace tally::engine
