// memory_footprint: the resident memory of an embedded tally, for
// docs/embedding.md ("Small devices"). Loads KEYS keys of a keyed counter
// and MARKERS once-increments (each leaves a marker) through the public
// API, in batches of 1,000, then reads a sample back, and prints the
// process's RSS (VmRSS) and peak (VmHWM) after the load and after the
// reads, with the database's size on disk.
//
// Usage: memory_footprint DIR KEYS MARKERS BLOCK_CACHE_BYTES
//        WRITE_BUFFER_BYTES
// (DIR must not exist.) Not a test: it measures, it does not judge.

#include <tally/tally.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

// VmRSS and VmHWM of this process, in KiB.
void Rss(long* rss_kib, long* hwm_kib) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) *rss_kib = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) *hwm_kib = std::atol(line.c_str() + 6);
  }
}

uint64_t DiskBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

bool Check(const tally::Status& s, const char* what) {
  if (s.ok()) return true;
  std::fprintf(stderr, "memory_footprint: %s: %s\n", what,
               s.ToString().c_str());
  return false;
}

void Report(const char* when) {
  long rss = 0, hwm = 0;
  Rss(&rss, &hwm);
  std::printf("%s: rss %.1f MiB, peak %.1f MiB\n", when, rss / 1024.0,
              hwm / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: %s DIR KEYS MARKERS BLOCK_CACHE_BYTES "
                 "WRITE_BUFFER_BYTES\n",
                 argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const long keys = std::atol(argv[2]);
  const long markers = std::atol(argv[3]);
  tally::Options options;
  options.block_cache_bytes = std::strtoull(argv[4], nullptr, 10);
  options.write_buffer_bytes = std::strtoull(argv[5], nullptr, 10);
  std::unique_ptr<tally::Db> db;
  if (!Check(tally::Db::Open(options, dir, &db), "open")) return 1;
  Report("open");
  tally::CounterSpec likes;
  likes.keyed = true;
  if (!Check(db->CreateCounter("likes", likes), "create likes") ||
      !Check(db->CreateCounter("orders", tally::CounterSpec{16}),
             "create orders")) {
    return 1;
  }
  constexpr long kBatch = 1000;
  tally::Batch batch;
  std::vector<tally::IncrementResult> results;
  char id[32];
  for (long k = 0; k < keys; ++k) {
    std::snprintf(id, sizeof id, "post-%09ld", k);
    batch.Add(tally::CounterRef("likes", id), 1);
    if (batch.size() == kBatch || k + 1 == keys) {
      if (!Check(db->Apply(batch, &results), "apply keys")) return 1;
      batch.Clear();
    }
  }
  for (long m = 0; m < markers; ++m) {
    std::snprintf(id, sizeof id, "ord-%012ld", m);
    batch.AddOnce("orders", id, 1);
    if (batch.size() == kBatch || m + 1 == markers) {
      if (!Check(db->Apply(batch, &results), "apply markers")) return 1;
      batch.Clear();
    }
  }
  Report("loaded");
  // Reads spread over the whole key and marker space.
  for (long i = 0; i < 20000; ++i) {
    std::snprintf(id, sizeof id, "post-%09ld", (i * 7919) % keys);
    if (!Check(db->ReadExact(tally::CounterRef("likes", id)).status(),
               "read key")) {
      return 1;
    }
    std::snprintf(id, sizeof id, "ord-%012ld", (i * 104729) % markers);
    if (!Check(db->GetMarker("orders", id).status(), "read marker")) return 1;
  }
  Report("after 20,000 key reads and 20,000 marker reads");
  std::printf("on disk: %.1f MiB\n", DiskBytes(dir) / 1048576.0);
  return 0;
}
