// What a database directory holds, read straight from the file system (no
// RocksDB): the write-ahead log bytes a later open would replay, and how
// many files of a kind there are. For tests and benchmarks that check or
// report what a writer left behind.

#ifndef TALLY_TESTS_TESTUTIL_DIR_FILES_H_
#define TALLY_TESTS_TESTUTIL_DIR_FILES_H_

#include <cstdint>
#include <filesystem>
#include <string>

namespace tally::test {

// Files in `path` whose name ends in `extension` (".log", ".sst"): their
// count and total size. An unreadable directory counts as empty.
struct DirFiles {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

inline DirFiles FilesWithExtension(const std::string& path,
                                   const char* extension) {
  DirFiles out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.path().extension() != extension) continue;
    ++out.count;
    out.bytes += e.file_size(ec);
  }
  return out;
}

// The bytes of write-ahead log (*.log) in `path`.
inline uint64_t WalBytes(const std::string& path) {
  return FilesWithExtension(path, ".log").bytes;
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_DIR_FILES_H_
