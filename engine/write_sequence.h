// The write sequence: one function, DbImpl::RunWrite, owns the order in
// which every write of counts checks, holds, locks, looks up, reads the
// clock, decides and commits. What differs between writes is a Writer, a
// class that supplies each step and nothing else:
//
//   SingleWrite     Increment, IncrementOnce, Reset, and IncrementOnceAsync
//                   without Options::sync (engine/write_sequence.cc)
//   BatchWrite      Apply, and CompleteClaim's counts (engine/apply.cc)
//   OnceAsyncWrite  IncrementOnceAsync with Options::sync: its commit is
//                   queued once the holds are released (once_async.cc)
//   PlainAsyncWrite IncrementAsync (engine/write_path.cc)
//
// The steps, in RunWrite's order:
//
//   1. format   RaiseFormat: a feature's first use raises the database's
//               format, before any hold (DbImpl::RaiseFormatOnFirstUse);
//   2. check    Check, under the catalog's shared hold (held to the end):
//               writable, the op's arguments, its counter and placement
//               (core::CheckArguments, core::PlaceOp); a writer may end
//               here (an empty batch);
//   3. lock     Lock: the stripes the op's rules need (a once-op's event
//               id's, a strict counter's key's), as one guard;
//   4. look up  LookUp: the stored markers, after any IncrementOnceAsync
//               copy of the event has been written (AwaitOnceWritten); an
//               async copy may end here, answered by a copy in flight;
//   5. clock    read after the lookup, and only when ReadsClock says so: a
//               found marker answers whatever the time (docs/design.md,
//               "Dedupe windows");
//   6. decide   Decide: core::Decide, then an applied op's rule against its
//               key's value (core::CheckBounds, core::AnswerReset), the
//               values read here under the lock;
//   7. commit   Commit: one WriteBatch through the commit pipeline, or for
//               an async write its batch made ready to queue; the books.
//
// RunWrite is a template so that each writer's steps inline into it: the
// sequence costs no call a hand-written copy would not (the instruction
// counts are in docs/design.md, "The write path").

#ifndef TALLY_ENGINE_WRITE_SEQUENCE_H_
#define TALLY_ENGINE_WRITE_SEQUENCE_H_

#include <cstdint>

#include "engine/db_impl.h"
#include "engine/perf_counters.h"
#include "tally/status.h"

namespace tally::engine {

// Lock's guard for a write that takes no stripe.
struct NoStripes {};

// What a Writer inherits: no format to raise, no stripe, nothing to look
// up, not finished. A writer hides the steps it has.
struct WriteSteps {
  Status RaiseFormat() { return Status::OK(); }
  NoStripes Lock() { return NoStripes(); }
  Status LookUp() { return Status::OK(); }
  // Set by Check or LookUp when the write's answer is complete without
  // the later steps.
  bool finished = false;
};

template <typename Writer>
Status DbImpl::RunWrite(Writer* w) {
  const PerfCountersOff perf_off;
  Status s = w->RaiseFormat();  // 1.
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  s = w->Check(catalog);  // 2.
  if (!s.ok() || w->finished) return s;
  [[maybe_unused]] const auto guard = w->Lock();  // 3.
  s = w->LookUp();  // 4.
  if (!s.ok() || w->finished) return s;
  const int64_t now = w->ReadsClock() ? clock_->NowMillis() : 0;  // 5.
  s = w->Decide(now);  // 6.
  if (!s.ok()) return s;
  return w->Commit(now);  // 7.
}

}  // namespace tally::engine

#endif  // TALLY_ENGINE_WRITE_SEQUENCE_H_
