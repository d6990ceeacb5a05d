// Status and Result<T>: how library code reports an expected failure to its caller.
// Values, no shared state: safe to use from any thread.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "omnilearn/base/check.h"

namespace omnilearn {

enum class StatusCode { kOk, kInvalidArgument, kNotFound, kParseError, kIoError, kPermissionDenied, kInternal };

// The outcome of an operation: ok, or a code and a message naming the file, field or line at fault.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return {}; }
  static Status invalid_argument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status not_found(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status parse_error(std::string msg) { return {StatusCode::kParseError, std::move(msg)}; }
  static Status io_error(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
  static Status permission_denied(std::string msg) { return {StatusCode::kPermissionDenied, std::move(msg)}; }
  static Status internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a status with the same code whose message is `context + ": " + message()`.
  Status with_context(const std::string& context) const {
    return is_ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value of type T or a non-ok Status. Accessing value() of an error is a checked failure.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor): implicit by design.
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    OMNI_CHECK(!std::get<Status>(v_).is_ok(), "Result constructed from an ok Status without a value");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    OMNI_CHECK(is_ok(), "value() of an error Result: " + std::get<Status>(v_).message());
    return std::get<T>(v_);
  }
  const T& value() const& {
    OMNI_CHECK(is_ok(), "value() of an error Result: " + std::get<Status>(v_).message());
    return std::get<T>(v_);
  }
  T&& value() && {
    OMNI_CHECK(is_ok(), "value() of an error Result: " + std::get<Status>(v_).message());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace omnilearn

// Returns early from the enclosing function if `expr` (a Status) is not ok.
#define OMNI_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::omnilearn::Status omni_status_ = (expr); \
    if (!omni_status_.is_ok()) return omni_status_; \
  } while (0)
