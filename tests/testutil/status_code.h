// How docs/ and test messages name a Status code ("NotFound", ...): the
// same names as Status::ToString's prefix, for an expected code that has no
// Status to print.

#ifndef TALLY_TESTS_TESTUTIL_STATUS_CODE_H_
#define TALLY_TESTS_TESTUTIL_STATUS_CODE_H_

#include "tally/status.h"

namespace tally::test {

inline const char* StatusCodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kNotFound:
      return "NotFound";
    case Status::Code::kInvalidArgument:
      return "InvalidArgument";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kIOError:
      return "IOError";
    case Status::Code::kOutOfRange:
      return "OutOfRange";
    case Status::Code::kBusy:
      return "Busy";
    case Status::Code::kAlreadyExists:
      return "AlreadyExists";
    case Status::Code::kNotSupported:
      return "NotSupported";
  }
  return "?";
}

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_STATUS_CODE_H_
