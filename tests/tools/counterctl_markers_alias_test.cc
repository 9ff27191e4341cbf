// counterctl markers: the alias of `events` under the API's noun (the
// Db::CountMarkers/ListMarkers/GetMarker calls) answers as `events` does.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

class CounterctlMarkersAlias : public CounterctlTest {
 protected:
  void SetUp() override {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    CounterSpec spec;
    spec.shards = 2;
    ASSERT_OK(db->CreateCounter("orders", spec));
    ASSERT_OK(db->IncrementOnce("orders", "ord-1", 3, {}));
    ASSERT_OK(db->IncrementOnce("orders", "ord-2", 4, {}));
  }
};

// Proves `markers NAME` (list, --count, --show) prints what `events NAME`
// prints.
TEST_F(CounterctlMarkersAlias, AnswersAsEvents) {
  EXPECT_EQ(CtlOk({"markers", "orders"}), CtlOk({"events", "orders"}));
  EXPECT_EQ(CtlValue({"markers", "orders", "--count"}), "2");
  EXPECT_EQ(CtlOk({"markers", "orders", "--show", "ord-2"}),
            CtlOk({"events", "orders", "--show", "ord-2"}));
  EXPECT_EQ(Ctl({"markers", "orders", "--show", "nope"}).exit_code, 1);
}

}  // namespace
}  // namespace tally::test
