// Opening the local engine with its files on a RocksDB Env of the caller's:
// the seam through which tests inject faults, power cuts and stalls into
// the files. Not part of the public API, which names no RocksDB type
// (docs/design.md, "Public API"); Db::Open(options, path) is
// OpenOnEnv(options, path, nullptr).

#ifndef TALLY_ENGINE_OPEN_ON_ENV_H_
#define TALLY_ENGINE_OPEN_ON_ENV_H_

#include <memory>
#include <string>

#include "tally/db.h"
#include "tally/options.h"
#include "tally/status.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace tally::engine {

// Opens (or creates) the database at `path` as Db::Open does, its files on
// `base_env`'s FileSystem: nullptr is rocksdb::Env::Default(). Not owned:
// it must outlive the Db. tally uses only its FileSystem (threads and time
// come from the default Env) and wraps it so files are created 0600 and
// directories 0700.
Status OpenOnEnv(const Options& options, const std::string& path,
                 rocksdb::Env* base_env, std::unique_ptr<Db>* db);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_OPEN_ON_ENV_H_
