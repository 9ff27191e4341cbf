#include "engine/writer_files.h"

#include <algorithm>

#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// "000123.log" -> 123; false for anything else.
bool LogNumber(const std::string& name, uint64_t* number) {
  constexpr char kSuffix[] = ".log";
  constexpr size_t kSuffixLen = sizeof kSuffix - 1;
  if (name.size() <= kSuffixLen ||
      name.compare(name.size() - kSuffixLen, kSuffixLen, kSuffix) != 0) {
    return false;
  }
  uint64_t n = 0;
  for (size_t i = 0; i < name.size() - kSuffixLen; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *number = n;
  return true;
}

}  // namespace

Status ListWriterFiles(rocksdb::Env* env, const std::string& path,
                       WriterFiles* out) {
  *out = WriterFiles();
  std::string current;
  rocksdb::Status rs =
      rocksdb::ReadFileToString(env, path + "/CURRENT", &current);
  if (!rs.ok()) return FromRocks(rs, "read " + path + "/CURRENT");
  while (!current.empty() &&
         (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  out->manifest = current;
  // A MANIFEST replaced between the two reads shows as a missing file:
  // size 0 (never the size of a real MANIFEST) so no comparison matches.
  if (!env->GetFileSize(path + "/" + current, &out->manifest_bytes).ok()) {
    out->manifest_bytes = 0;
  }
  std::vector<std::string> names;
  rs = env->GetChildren(path, &names);
  if (!rs.ok()) return FromRocks(rs, "list " + path);
  for (const std::string& name : names) {
    uint64_t n;
    if (LogNumber(name, &n)) out->logs.push_back(n);
  }
  std::sort(out->logs.begin(), out->logs.end());
  return Status::OK();
}

bool SameManifest(const WriterFiles& a, const WriterFiles& b) {
  return a.manifest_bytes != 0 && a.manifest == b.manifest &&
         a.manifest_bytes == b.manifest_bytes;
}

bool LogsKept(const WriterFiles& before, const WriterFiles& after) {
  if (!std::includes(after.logs.begin(), after.logs.end(), before.logs.begin(),
                     before.logs.end())) {
    return false;  // a log seen before is gone
  }
  if (SameManifest(before, after)) return true;  // no flush: no log obsolete
  const uint64_t newest_before = before.logs.empty() ? 0 : before.logs.back();
  const uint64_t newest_after = after.logs.empty() ? 0 : after.logs.back();
  return newest_after == newest_before;  // no log came, so none came and went
}

}  // namespace tally::engine
