// The `offgraph` Python module: bindings over the C++ libraries, no logic of its own
// (DESIGN.md §5). Steps, exports and generation run with the GIL released.
#include "python/errors.h"
#include "python/handles.h"

PYBIND11_MODULE(offgraph, m) {
  m.doc() = "offgraph: export HuggingFace causal LMs to stateless step programs and run them on the CPU";
  og::python::register_errors(m);
  og::python::bind_program(m);
  og::python::bind_export(m);
}
