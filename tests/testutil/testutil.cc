#include "testutil/testutil.h"

#include <rocksdb/env.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include "reliability/fault_fs.h"
#include "tally/import.h"
#include "testutil/exported.h"

namespace tally::test {

CounterSpec OutboxSpec(uint32_t shards) {
  CounterSpec spec;
  spec.shards = shards;
  spec.outbox = true;
  return spec;
}

std::unique_ptr<Db> OpenOrDie(const std::string& path, const Options& options,
                              rocksdb::Env* env) {
  std::unique_ptr<Db> db;
  Status s = engine::OpenOnEnv(options, path, env, &db);
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

CounterImport ExportedCounter(Db* from, const CounterInfo& c,
                              size_t page_size) {
  CounterImport im;
  EXPECT_OK(ReadExported(from, c, page_size, &im));
  return im;
}

Status ImportMissing(Db* from, Db* to) {
  auto counters = from->ListCounters();
  if (!counters.ok()) return counters.status();
  for (const CounterInfo& c : *counters) {
    if (to->DescribeCounter(c.name).ok()) continue;
    Status s = tally::ImportCounter(*to, ExportedCounter(from, c));
    if (!s.ok()) return s;
  }
  return Status::OK();
}

bool ImportCutAfter(Db* from, const std::string& path, int cut) {
  auto fs = std::make_shared<FaultFs>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  std::unique_ptr<Db> db = OpenOrDie(path, Options(), env.get());
  if (db == nullptr) return false;
  fs->InjectAfter(Fault::kWriteError, cut, ".log");
  Status s = ImportMissing(from, db.get());
  const bool completed = fs->injected() == 0;
  if (completed) {
    EXPECT_OK(s);
  }
  return completed;
}

}  // namespace tally::test
