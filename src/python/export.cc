// offgraph.export(): the exporter with the CLI's options as keyword arguments.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "export/exporter.h"
#include "python/errors.h"
#include "python/handles.h"

namespace og::python {

void bind_export(py::module_& m) {
  const exporter::ExportOptions d;
  m.def(
      "export",
      [](const std::string& model, const std::string& output, const std::string& dtype, const std::optional<std::string>& qlinear,
         int32_t qlinear_group_size, const std::optional<std::string>& qembedding, const std::string& qactivations,
         int64_t max_ctx_len, int64_t prefill_chunk_size, const py::object& progress, const std::optional<std::string>& qhead,
         const std::string& layout) {
        exporter::ExportOptions o{.model = model, .output = output, .dtype = dtype, .max_ctx_len = max_ctx_len,
                                  .prefill_chunk_size = prefill_chunk_size, .qlinear = qlinear.value_or(""), .qhead = qhead.value_or(""),
                                  .qembedding = qembedding.value_or(""), .qgroup_size = qlinear_group_size,
                                  .qactivations = qactivations, .layout = layout};
        // The callback runs on this thread with the GIL released; an exception it raises is
        // kept and re-raised once the export returns (later calls are skipped).
        std::optional<py::error_already_set> callback_error;
        if (!progress.is_none()) {
          if (!PyCallable_Check(progress.ptr())) throw py::type_error("progress must be a callable or None");
          o.on_progress = [&](const exporter::ExportProgress& p) {
            py::gil_scoped_acquire gil;
            if (callback_error) return;
            try {
              progress(p.tensors_written, p.tensors_expected, p.bytes_written);
            } catch (py::error_already_set& e) {
              callback_error = std::move(e);
            }
          };
        }
        auto summary = without_gil([&] { return exporter::export_program(o); });
        if (callback_error) throw std::move(*callback_error);
        const exporter::ExportSummary s = unwrap(std::move(summary));
        py::dict out;
        out["tensors"] = s.n_tensors;
        out["bytes"] = s.bytes;
        out["ops"] = s.n_ops;
        out["seconds"] = s.seconds;
        out["quantized"] = s.n_quantized;
        out["not_quantizable"] = s.n_not_quantizable;
        return out;
      },
      py::arg("model"), py::arg("output"), py::arg("dtype") = d.dtype, py::arg("qlinear") = py::none(),
      py::arg("qlinear_group_size") = d.qgroup_size, py::arg("qembedding") = py::none(),
      py::arg("qactivations") = d.qactivations, py::arg("max_ctx_len") = d.max_ctx_len,
      py::arg("prefill_chunk_size") = d.prefill_chunk_size, py::arg("progress") = py::none(), py::arg("qhead") = py::none(),
      py::arg("layout") = d.layout,
      "Exports a HF checkpoint (directory, config.json or hub id) to a program file, as `offgraph export`; "
      "progress(tensors_written, tensors_expected, bytes_written) is called after each tensor. Returns a summary dict.");
}

}  // namespace og::python
