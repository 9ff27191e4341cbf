// Status: the result of every tally operation that can fail.
//
// Ownership: a Status owns its message. Copying copies it; moving is free.
// Thread safety: a Status is a value; distinct objects may be used from
// different threads, one object needs external synchronization.
//
// An OK Status holds no allocation, so returning OK on the hot path is free.
// The class is [[nodiscard]]: a caller that wants to ignore a Status must say
// so with IgnoreError(), which makes swallowing an error visible in review.

#ifndef TALLY_STATUS_H_
#define TALLY_STATUS_H_

#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "tally/export.h"

namespace tally {

class [[nodiscard]] TALLY_EXPORT Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound = 1,         // a counter or record does not exist
    kInvalidArgument = 2,  // bad input; nothing was written
    kCorruption = 3,       // stored bytes failed validation
    kIOError = 4,          // the file system failed
    kOutOfRange = 5,       // a value does not fit int64 (overflow)
    kBusy = 6,             // the database is held by another process
    kAlreadyExists = 7,    // a counter with that name exists
    kNotSupported = 8,     // e.g. a database written by a newer format
  };

  Status() noexcept = default;
  Status(const Status& other)
      : code_(other.code_),
        msg_(other.msg_ ? std::make_unique<std::string>(*other.msg_)
                        : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) {
    return {Code::kNotFound, msg};
  }
  static Status InvalidArgument(std::string_view msg) {
    return {Code::kInvalidArgument, msg};
  }
  static Status Corruption(std::string_view msg) {
    return {Code::kCorruption, msg};
  }
  static Status IOError(std::string_view msg) { return {Code::kIOError, msg}; }
  static Status OutOfRange(std::string_view msg) {
    return {Code::kOutOfRange, msg};
  }
  static Status Busy(std::string_view msg) { return {Code::kBusy, msg}; }
  static Status AlreadyExists(std::string_view msg) {
    return {Code::kAlreadyExists, msg};
  }
  static Status NotSupported(std::string_view msg) {
    return {Code::kNotSupported, msg};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsOutOfRange() const { return code_ == Code::kOutOfRange; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }

  // The message alone ("" for OK).
  const std::string& message() const;
  // "OK", or "<Code name>: <message>".
  std::string ToString() const;

  // The same code with "<prefix>: <message>" (OK stays OK).
  Status WithContext(std::string_view prefix) const;

  // Explicitly discards this Status.
  void IgnoreError() const {}

 private:
  Status(Code code, std::string_view msg)
      : code_(code), msg_(std::make_unique<std::string>(msg)) {}

  Code code_ = Code::kOk;
  std::unique_ptr<std::string> msg_;  // null for OK
};

namespace internal {
// Writes "tally: read the value of a failed Result: <status>" to stderr and
// aborts. Out of line, so the check costs callers one compare and branch.
[[noreturn]] TALLY_EXPORT void DieReadingFailedResult(const Status& status);
}  // namespace internal

// Result<T>: a Status and, when it is OK, a value.
//
// Reading the value of a failed Result (value(), operator*, operator->)
// aborts the process with the status on stderr, in every build (as
// absl::StatusOr does): a failed read must never pass for a value (a
// default-constructed T, such as 0, would be a wrong number). Check ok()
// first.
//
// Ownership: owns its value. Thread safety: as Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    // An OK Result must carry a value: construct it from the value instead.
    assert(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Precondition: ok(); aborts with the status otherwise.
  const T& value() const& { return Checked(); }
  T& value() & { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  const T& operator*() const& { return Checked(); }
  // On a temporary (`for (auto& c : *db->ListCounters())`) the value is
  // moved out, so nothing refers into the destroyed Result.
  T operator*() && { return std::move(Checked()); }
  const T* operator->() const { return &Checked(); }

 private:
  const T& Checked() const {
    if (!status_.ok()) internal::DieReadingFailedResult(status_);
    return value_;
  }
  T& Checked() {
    if (!status_.ok()) internal::DieReadingFailedResult(status_);
    return value_;
  }

  Status status_;
  T value_{};
};

}  // namespace tally

#endif  // TALLY_STATUS_H_
