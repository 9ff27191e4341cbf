// counterctl create and import on the directory of an interrupted database
// creation (a kill after RocksDB's default family, before tally's): both
// finish the creation instead of refusing "not a tally database".

#include <gtest/gtest.h>

#include <string>

#include "counterctl_fixture.h"
#include "testutil/interrupted_create.h"

namespace tally::test {
namespace {

using CounterctlCreate = CounterctlTest;

TEST_F(CounterctlCreate, Item12_CreateFinishesAnInterruptedCreation) {
  InterruptCreation(db_, CreationStopFs::Mode::kExit);
  // A read finds no database (not a refusal to remove by hand).
  ProcessResult get = Ctl({"get", "orders"});
  EXPECT_NE(get.exit_code, 0) << Describe({"get", "orders"}, get);
  EXPECT_EQ(get.err.find("not a tally database"), std::string::npos) << get.err;
  CtlOk({"create", "orders", "--shards", "4"});
  CtlOk({"incr", "orders", "--by", "3"});
  EXPECT_EQ(CtlValue({"get", "orders"}), "3");
}

TEST_F(CounterctlCreate, Item12_ImportFinishesAnInterruptedCreation) {
  CtlOk({"create", "orders", "--shards", "2"});
  CtlOk({"incr", "orders", "--by", "7"});
  const std::string file = tmp_.Sub("dump.jsonl");
  CtlOk({"export", file});
  const std::string copy = tmp_.Sub("copy");
  InterruptCreation(copy, CreationStopFs::Mode::kExit);
  ProcessResult imported = CtlOn(copy, {"import", file});
  EXPECT_EQ(imported.exit_code, 0) << Describe({"import", file}, imported);
  EXPECT_EQ(CtlOnOk(copy, {"get", "orders"}), "7\n");
}

}  // namespace
}  // namespace tally::test
