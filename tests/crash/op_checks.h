// The crash checker's checks of resets and claims (issue 28, item 13), and
// the helpers it shares with them. Each check reports through a CheckSink.
//
// Thread safety: none; the checker runs them one after another.

#ifndef TALLY_TESTS_CRASH_OP_CHECKS_H_
#define TALLY_TESTS_CRASH_OP_CHECKS_H_

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tally/db.h"

namespace tally::crash {

// Where a check reports: a violation, a check passed, an acknowledged call
// checked.
class CheckSink {
 public:
  virtual void Violation(const std::string& what) = 0;
  virtual void Pass() = 0;
  virtual void Acknowledged() = 0;

 protected:
  ~CheckSink() = default;
};

// Every key of keyed counter `name` with its value, in key order (ListKeys,
// paged).
Status ListAllKeys(Db* db, std::string_view name, std::vector<KeyValue>* out);

// "gauge" (workload.h): each key is written by one thread, one call at a
// time, so its value follows from the ack log. The model keeps each key's
// value across cycles.
class GaugeModel {
 public:
  // From now on (the final check, which reads the whole log again) the ack
  // lines only ask the calls again; the model stays as it is.
  void BeginFinal() { final_ = true; }
  // An intent line ("g", the fields after the kind).
  void Intent(std::istringstream* fields, const std::string& line,
              CheckSink* sink);
  // An ack line ("G"): its answer is checked against the model (a reset
  // took exactly the value the key held to its value; a once-increment
  // counted its delta), the model moves, and a once-increment or reset is
  // asked again: `duplicate` with its first answer, the value unchanged.
  void Ack(Db* db, std::istringstream* fields, const std::string& line,
           CheckSink* sink);
  // After a cycle's lines: the call each key had in flight at the kill
  // (intent, no ack) is whole or absent (a reset: its marker and its value,
  // or neither); then every key holds exactly the model's value.
  void Settle(Db* db, CheckSink* sink);
  // Every key holds the model's value, and no other key exists.
  void CheckValues(Db* db, CheckSink* sink);
  uint64_t in_flight() const { return in_flight_; }

 private:
  struct Op {
    std::string key, kind, id;
    int64_t arg = 0;
  };
  static bool Parse(std::istringstream* fields, Op* op);
  void Move(const Op& op, const std::string& outcome, int64_t value,
            int64_t applied, CheckSink* sink);
  std::string Resolve(Db* db, const Op& op);

  bool final_ = false;
  std::map<std::string, int64_t> expected_;  // every key, all cycles
  std::map<std::string, Op> pending_;        // key -> its call in flight
  std::set<std::string> counted_;  // ids counted in this cycle's lines
  uint64_t in_flight_ = 0;         // calls caught in flight, all cycles
};

// A claim call's ack line ("C", the fields after the kind): the claim's
// token never went back, and the call asked again gets its answer: a claim
// found `done` is `done` with the same token and result; a completion is
// `completed` again (repeated, nothing counted again), a stale one stale; a
// release is answered as the claim stored now says (released by this
// token, or a later grant's: stale, or done), and never found held by its
// token.
void CheckClaimAck(Db* db, std::istringstream* fields, const std::string& line,
                   CheckSink* sink);

// Done and counted agree: the completed claims are exactly the events of
// "jobs" (one marker of delta 1 per claim key), and "jobs" counts them.
void CheckClaimsCounted(Db* db, CheckSink* sink);

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_OP_CHECKS_H_
