// What `counterctl --version` prints: counterctl's and tally's version,
// the RocksDB tally is built on, and the commit of this build. The only
// file that includes the generated build_commit.h, so a new commit
// recompiles this file alone.
#include "build_info.h"

#include "build_commit.h"
#include "tally/admin.h"
#include "tally/version.h"

namespace counterctl {

std::string VersionText() {
  return std::string("counterctl ") + TALLY_VERSION_STRING + " (tally " +
         TALLY_VERSION_STRING + ", " + tally::StorageEngineVersion() +
         ", commit " + TALLY_BUILD_COMMIT + ")";
}

}  // namespace counterctl
