// PrivateFileSystem: a RocksDB FileSystem wrapper that keeps a database
// private to its owner whatever the process umask: every file it creates is
// chmod'ed to 0600 and every directory it creates to 0700. (RocksDB creates
// files 0644 and directories 0755, minus the umask; a library must not
// change the process-wide umask.)
//
// Ownership: holds a shared reference to the wrapped FileSystem.
// Thread safety: as the wrapped FileSystem (RocksDB calls it from its
// background threads and from every writer).

#ifndef TALLY_ENGINE_PRIVATE_FS_H_
#define TALLY_ENGINE_PRIVATE_FS_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <memory>

namespace tally::engine {

inline constexpr unsigned kPrivateFileMode = 0600;
inline constexpr unsigned kPrivateDirMode = 0700;

// An Env whose file system is `base`'s, wrapped as above. `base` must
// outlive the returned Env.
std::shared_ptr<rocksdb::Env> NewPrivateEnv(rocksdb::Env* base);

// The same over rocksdb::Env::Default(): one per process, never destroyed.
rocksdb::Env* DefaultPrivateEnv();

}  // namespace tally::engine

#endif  // TALLY_ENGINE_PRIVATE_FS_H_
