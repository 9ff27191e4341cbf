// The order counter of docs/embedding.md, in C++: an order service receives
// "order accepted" events at least once (a queue redelivers after a
// timeout), from several worker threads at once, and must count each order
// once, with its amount, in the same atomic write. 40 orders, each
// delivered twice: the counter ends at 40, with 40 markers, and the revenue
// is the sum of the 40 amounts.
//
// Build against an installed tally: see CMakeLists.txt beside this file
// (find_package(tally)). Run: ./orders DB_DIR

#include <tally/tally.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kOrders = 40;
constexpr int kWorkers = 4;

int64_t AmountCents(int order) { return 1000 + 25 * order; }

std::string EventId(int order) {
  char id[40];
  std::snprintf(id, sizeof id, "ORDER_ACCEPTED:ord-%04d", order);
  return id;
}

// One delivery: the order's count and its amount, once, in one write.
tally::Status Deliver(tally::Db& db, int order) {
  tally::Batch batch;
  batch.AddOnce("orders-today", EventId(order), 1);
  batch.AddOnce("revenue-cents", EventId(order), AmountCents(order));
  std::vector<tally::IncrementResult> results;
  return db.Apply(batch, &results);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DB_DIR\n", argv[0]);
    return 2;
  }
  std::unique_ptr<tally::Db> db;
  tally::Status s = tally::Db::Open(tally::Options(), argv[1], &db);
  for (const char* name : {"orders-today", "revenue-cents"}) {
    if (s.ok()) s = db->CreateCounter(name, tally::CounterSpec{10});
    if (s.IsAlreadyExists()) s = tally::Status::OK();  // a second run
  }
  if (!s.ok()) {
    std::fprintf(stderr, "orders: %s\n", s.ToString().c_str());
    return 1;
  }
  // Every order delivered twice, the copies to different workers.
  std::vector<std::thread> workers;
  std::vector<tally::Status> failed(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int delivery = 0; delivery < 2 * kOrders; ++delivery) {
        if (delivery % kWorkers != w) continue;
        tally::Status d = Deliver(*db, delivery % kOrders);
        if (!d.ok()) failed[w] = d;
      }
    });
  }
  for (auto& t : workers) t.join();
  for (const tally::Status& f : failed) {
    if (!f.ok()) {
      std::fprintf(stderr, "orders: %s\n", f.ToString().c_str());
      return 1;
    }
  }
  auto orders = db->ReadExact("orders-today");
  auto revenue = db->ReadExact("revenue-cents");
  auto markers = db->CountMarkers("orders-today");
  auto shards = db->ShardCounts("orders-today");
  if (!orders.ok() || !revenue.ok() || !markers.ok() || !shards.ok()) {
    std::fprintf(stderr, "orders: a read failed\n");
    return 1;
  }
  int64_t expected_revenue = 0;
  for (int i = 0; i < kOrders; ++i) expected_revenue += AmountCents(i);
  std::printf("orders %lld, markers %llu, revenue %lld cents; shards:",
              static_cast<long long>(*orders),
              static_cast<unsigned long long>(*markers),
              static_cast<long long>(*revenue));
  for (int64_t n : *shards) std::printf(" %lld", static_cast<long long>(n));
  std::printf("\n");
  const bool right = *orders == kOrders && *markers == uint64_t{kOrders} &&
                     *revenue == expected_revenue;
  if (!right) std::fprintf(stderr, "orders: WRONG (want 40, 40, %lld)\n",
                           static_cast<long long>(expected_revenue));
  return right ? 0 : 1;
}
