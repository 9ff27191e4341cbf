// Checks on a database path before RocksDB creates or opens anything in it.

#ifndef TALLY_ENGINE_PATH_CHECK_H_
#define TALLY_ENGINE_PATH_CHECK_H_

#include <string>

#include "tally/options.h"
#include "tally/status.h"

namespace tally::engine {

// What CheckPath found at a path.
enum class PathState {
  kNew,         // missing, or an empty directory
  kUnfinished,  // a creation under way or interrupted (kCreatingMarker)
  kDatabase,    // a RocksDB database with tally's column families
};

// OK when `path` may be opened as a tally database under `options`, with
// *state saying what is there:
// - it is, or (through symlinks) leads to, a directory owned by this
//   process's effective user, or it does not exist yet and its parent is
//   (a symlink into someone else's directory, or someone else's database,
//   is refused: files made there would be theirs to read or swap);
// - it is missing, empty or an unfinished creation (create_if_missing
//   decides: NotFound without it), or it holds a RocksDB database with
//   tally's column families.
Status CheckPath(const Options& options, const std::string& path,
                 PathState* state);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_PATH_CHECK_H_
