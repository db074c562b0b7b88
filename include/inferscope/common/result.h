// File: result.h
// Result<T> carries either a value or an Error for operations whose failure is caused by
// input from outside (network, files, CLI). Modelled on absl::StatusOr; C++20 has no
// std::expected. Example:
//   Result<int> r = parse_port("80"); if (!r) { log(r.error().message); }
// Thread-compatible (like any value type). Never throws except value() on an error, which is a bug.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace inferscope {

// Error describes why an operation failed, in the form "cannot <verb> <what> from <where>: <cause>".
struct Error {
  std::string message;
};

// Result holds a T or an Error. Check ok() (or operator bool) before value().
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  // ok reports whether a value is held.
  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // value returns the held value; calling it on an error aborts (a BUG in the caller).
  T& value() & { return *checked(); }
  const T& value() const& { return *const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(*checked()); }
  T* operator->() { return checked(); }
  const T* operator->() const { return const_cast<Result*>(this)->checked(); }
  T& operator*() & { return *checked(); }
  const T& operator*() const& { return *const_cast<Result*>(this)->checked(); }

  // error returns the held error; only meaningful when !ok().
  const Error& error() const { return std::get<1>(state_); }

 private:
  T* checked() {
    if (!ok()) std::abort();
    return &std::get<0>(state_);
  }
  std::variant<T, Error> state_;
};

// Result<void> reports success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

// make_error builds an Error from a message, for `return make_error("cannot ...");`.
inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace inferscope
