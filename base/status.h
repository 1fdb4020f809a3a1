// Status and Result<T>: the one error type of limbic.
//
// Functions that can fail return a Status (or a Result<T> carrying a value on
// success) by value. Exceptions never cross a module boundary: code that calls
// a throwing library (RocksDB does not throw; nlohmann::json can) catches at
// the call site and turns the failure into a Status.
//
// A Status has a code and a message. The message is meant for a human and
// names what is wrong and where ("events/00000000000000000001.jsonl offset
// 4096: seq 17 follows seq 15"). Codes map onto CLI exit codes and HTTP
// statuses in runtime/.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace limbic {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,     // the caller's input is malformed or out of range
    kNotFound,            // a named percept/thread/action/... does not exist
    kAlreadyExists,       // an id is taken
    kFailedPrecondition,  // valid input, wrong state (e.g. completing a deleted thread)
    kCorruption,          // on-disk data is not what it must be
    kIOError,             // the OS said no
    kBusy,                // another process holds the state dir
    kUnavailable,         // shutting down, queue full, effector unreachable
    kInternal,            // a bug: an invariant did not hold
  };

  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {Code::kAlreadyExists, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) {
    return {Code::kFailedPrecondition, std::move(msg)};
  }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status Busy(std::string msg) { return {Code::kBusy, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsFailedPrecondition() const { return code_ == Code::kFailedPrecondition; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsUnavailable() const { return code_ == Code::kUnavailable; }

  // "not_found: thread t-9 does not exist"
  std::string ToString() const;
  // Stable lower_snake name of the code, used in JSON errors ("not_found").
  static std::string_view CodeName(Code code);

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(std::string_view context) const;
  // Returns a status of the same code with another message.
  Status WithMessage(std::string message) const { return Status(code_, std::move(message)); }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // The error; Status::OK() when a value is held. A reference to the held
  // one, so `const std::string& why = r.status().message();` stays valid
  // while r does.
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace limbic

// Early return of a non-OK Status: `LIMBIC_RETURN_IF_ERROR(log->Sync());`
#define LIMBIC_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::limbic::Status limbic_status_ = (expr);     \
    if (!limbic_status_.ok()) return limbic_status_; \
  } while (0)
