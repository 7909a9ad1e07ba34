// The C++ objects behind offgraph's Python classes. A Session holds its Program's handle
// (and the runtime Session holds the Model), so a session outlives `del program`.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "generate/model_text.h"
#include "runtime/batch_runner.h"
#include "runtime/session.h"

namespace og::python {

namespace py = pybind11;

struct ProgramHandle {
  std::string path;
  std::shared_ptr<const runtime::Model> model;
  Result<generate::ModelText> text = Status(ErrorCode::kInternal, "text not loaded");  // tokenizer, template, stop ids
  std::mutex batch_mu;                          // guards batch
  std::unique_ptr<runtime::BatchRunner> batch;  // made at the first step_batch

  const generate::ModelText& model_text() const;  // raises InputError when the program has no tokenizer
};

struct SessionHandle {
  std::shared_ptr<ProgramHandle> program;
  std::mutex mu;                              // one step at a time; guards session
  std::unique_ptr<runtime::Session> session;  // null once closed

  runtime::Session& open();  // raises ValueError once closed (call with mu held)
};

// "last" | "all"; anything else is a ValueError.
runtime::LogitsRows parse_logits_rows(const std::string& s);
// JSON text -> Python object (json.loads): dicts with the same keys as the CLI's --json.
py::object json_to_python(const std::string& text);

std::vector<chat::Message> messages_from_python(const py::sequence& messages);  // [{"role", "content"}, ...]

using ProgramClass = py::class_<ProgramHandle, std::shared_ptr<ProgramHandle>>;
void bind_program(py::module_& m);                        // layout(), Tokenizer, Program
void bind_session(py::module_& m, ProgramClass& program);  // Session, Program.session, step_batch
void bind_generate(py::module_& m, ProgramClass& program); // Program.generate / stream, TextStream
void bind_export(py::module_& m);                         // export()

}  // namespace og::python
