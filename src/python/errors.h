// offgraph's errors as Python exceptions, one class per CLI exit class (base/status.h):
// Error (base), UsageError (exit 1; also a ValueError), InputError (exit 2) with
// UnsupportedError under it, ResourceError (exit 3) with InternalError under it. The message
// is the Status message, unchanged. Each class carries `exit_code`.
#pragma once

#include <pybind11/pybind11.h>

#include "base/status.h"

namespace og::python {

namespace py = pybind11;

void register_errors(py::module_& m);

// Sets the Python exception for `status` (not ok) and throws py::error_already_set. Needs the GIL.
[[noreturn]] void raise_status(const Status& status);

inline void check(const Status& status) {
  if (!status.is_ok()) raise_status(status);
}
template <typename T>
T unwrap(Result<T>&& r) {
  if (!r.is_ok()) raise_status(r.status());
  return std::move(r).value();
}

// Runs f() with the GIL released and returns its result.
template <typename F>
auto without_gil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

}  // namespace og::python
