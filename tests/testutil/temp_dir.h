// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// contents on destruction unless kept. The one place tests and test tools
// make a temporary directory.
//
// Needs no gtest (the crash driver uses it): when the directory cannot be
// made, path() is empty, ok() false, and the constructor prints why to
// stderr.
//
// Thread safety: a plain value; removal happens on the destroying thread.
#ifndef TALLY_TESTS_TEMP_DIR_H_
#define TALLY_TESTS_TEMP_DIR_H_

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace tally::test {

class TempDir {
 public:
  // Named `prefix`-XXXXXX.
  explicit TempDir(const std::string& prefix = "tally-test") {
    const char* base = std::getenv("TMPDIR");
    const std::string templ =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" +
        prefix + "-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      std::fprintf(stderr, "mkdtemp %s: %s\n", templ.c_str(),
                   std::strerror(errno));
      return;
    }
    path_ = buf.data();
  }
  ~TempDir() {
    if (path_.empty() || keep_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // A path inside the directory (not created).
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  // Leaves the directory and its contents in place on destruction (to be
  // looked at after a failure).
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TEMP_DIR_H_
