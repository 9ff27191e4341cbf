// counterctl's version line (build_info.cc).

#ifndef TALLY_TOOLS_COUNTERCTL_BUILD_INFO_H_
#define TALLY_TOOLS_COUNTERCTL_BUILD_INFO_H_

#include <string>

namespace counterctl {

// "counterctl 0.1.0 (tally 0.1.0, RocksDB 7.8.3, commit 1a2b3c4d5e6f)";
// the commit is "unknown" for a build outside a git checkout and ends in
// "-dirty" for one with uncommitted changes.
std::string VersionText();

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_BUILD_INFO_H_
