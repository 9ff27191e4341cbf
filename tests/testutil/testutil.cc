#include "testutil/testutil.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

namespace tally::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") +
                      "/tally-test-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const char* made = ::mkdtemp(buf.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << templ;
    return;
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::unique_ptr<Db> OpenOrDie(const std::string& path, const Options& options) {
  std::unique_ptr<Db> db;
  Status s = Db::Open(options, path, &db);
  EXPECT_TRUE(s.ok()) << "open " << path << ": " << s.ToString();
  return db;
}

void FinishesOrDie(const std::string& what, std::chrono::seconds bound,
                   const std::function<void()>& body) {
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  std::thread runner([&] {
    body();
    finished.set_value();
  });
  if (done.wait_for(bound) != std::future_status::ready) {
    ADD_FAILURE() << "HANG: " << what << " did not finish within "
                  << bound.count() << " s; ending the test process";
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
  runner.join();
}

}  // namespace tally::test
