// OutboxRun: the outbox seqs one write reserved (write_path.cc), released
// once its commit settled. A run that was not marked committed failed: its
// seqs are dead, and DbImpl::OutboxRunFailed records the new watermark so a
// read-only reader is not held behind the gap (docs/sync.md).
//
// Ownership: lives on the writer's stack for one write. Thread safety: one
// thread.

#ifndef TALLY_ENGINE_OUTBOX_RUN_H_
#define TALLY_ENGINE_OUTBOX_RUN_H_

#include <cstdint>

#include "engine/db_impl.h"
#include "engine/outbox_sequencer.h"
#include "tally/status.h"

namespace tally::engine {

class OutboxRun {
 public:
  explicit OutboxRun(DbImpl* db) : db_(db) {}
  OutboxRun(const OutboxRun&) = delete;
  OutboxRun& operator=(const OutboxRun&) = delete;
  ~OutboxRun() {
    if (n_ == 0) return;
    db_->outbox_sequencer()->Release(first_);
    if (!committed_) db_->OutboxRunFailed();
  }
  Status Reserve(uint64_t n, uint64_t cap) {
    if (n == 0) return Status::OK();
    Status s = db_->outbox_sequencer()->Reserve(n, cap, &first_, &settled_);
    if (s.ok()) n_ = n;
    return s;
  }
  // The write's commit succeeded.
  void Committed() { committed_ = true; }
  uint64_t first() const { return first_; }
  // The watermark before this run, stored in each of its entries.
  uint64_t settled() const { return settled_; }

 private:
  DbImpl* const db_;
  uint64_t first_ = 0;
  uint64_t settled_ = 0;
  uint64_t n_ = 0;
  bool committed_ = false;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_OUTBOX_RUN_H_
