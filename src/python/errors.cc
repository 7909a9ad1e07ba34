#include "python/errors.h"

namespace og::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_usage = nullptr;
PyObject* g_input = nullptr;
PyObject* g_unsupported = nullptr;
PyObject* g_resource = nullptr;
PyObject* g_internal = nullptr;

PyObject* add_class(py::module_& m, const char* name, py::handle bases, int exit_code, const char* doc) {
  PyObject* cls = PyErr_NewExceptionWithDoc((std::string("offgraph.") + name).c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  py::handle h(cls);
  h.attr("exit_code") = exit_code;
  m.attr(name) = h;  // the module holds a reference; so does this file (never released)
  return cls;
}

}  // namespace

void register_errors(py::module_& m) {
  g_error = add_class(m, "Error", PyExc_Exception, 0, "Base class of offgraph's errors.");
  g_usage = add_class(m, "UsageError", py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)), 1,
                      "A bad argument or option value (the CLI's exit code 1).");
  g_input = add_class(m, "InputError", g_error, 2, "A malformed or inconsistent file or value (exit code 2).");
  g_unsupported = add_class(m, "UnsupportedError", g_input, 2, "A valid input offgraph cannot honour (exit code 2).");
  g_resource = add_class(m, "ResourceError", g_error, 3, "Out of memory or disk, an I/O failure (exit code 3).");
  g_internal = add_class(m, "InternalError", g_resource, 3, "A broken invariant (exit code 3).");
}

void raise_status(const Status& status) {
  PyObject* cls = g_internal;
  switch (status.code()) {
    case ErrorCode::kUsage: cls = g_usage; break;
    case ErrorCode::kBadInput: cls = g_input; break;
    case ErrorCode::kUnsupported: cls = g_unsupported; break;
    case ErrorCode::kResource: cls = g_resource; break;
    default: break;
  }
  PyErr_SetString(cls, status.message().c_str());
  throw py::error_already_set();
}

}  // namespace og::python
