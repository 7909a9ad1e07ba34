// Status and Result<T>: how every error a user can cause travels up to the CLI.
//
// A Status is either ok or carries a code and a message that names the file, tensor,
// field or value at fault. Library exceptions are converted where the library is called;
// nothing user-reachable aborts. OG_TRY propagates; OG_ASSIGN_OR_RETURN unwraps.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace og {

enum class ErrorCode {
  kOk = 0,
  kUsage,      // bad flags or arguments
  kBadInput,   // malformed or inconsistent files, out-of-range values
  kUnsupported,// a valid input that offgraph cannot honour (named field)
  kResource,   // out of memory / disk, I/O failures
  kInternal,   // broken invariant
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("model.safetensors: ") to the message of an error.
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <typename... Args>
Status bad_input(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kBadInput, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status usage_error(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kUsage, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kUnsupported, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status resource_error(fmt::format_string<Args...> f, Args&&... args) {
  return Status(ErrorCode::kResource, fmt::format(f, std::forward<Args>(args)...));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {     // NOLINT
    if (std::get<Status>(v_).is_ok()) v_ = Status(ErrorCode::kInternal, "ok status used as error");
  }
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
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

namespace detail {
inline Status to_status(const Status& s) { return s; }
template <typename T>
Status to_status(const Result<T>& r) { return r.status(); }
}  // namespace detail

}  // namespace og

#define OG_CONCAT_INNER(a, b) a##b
#define OG_CONCAT(a, b) OG_CONCAT_INNER(a, b)

// Returns the error of a Status or Result expression from the enclosing function.
#define OG_TRY(expr)                                              \
  do {                                                            \
    auto&& og_try_value_ = (expr);                                \
    if (!og_try_value_.is_ok()) return ::og::detail::to_status(og_try_value_); \
  } while (0)

// `OG_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its error.
#define OG_ASSIGN_OR_RETURN(decl, expr) \
  OG_ASSIGN_OR_RETURN_IMPL(OG_CONCAT(og_result_, __LINE__), decl, expr)
#define OG_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return tmp.status();          \
  decl = std::move(tmp).value()
