// offgraph.layout(), offgraph.Program (layout, inspect, tokenizer, session) and offgraph.Tokenizer.
#include <pybind11/stl.h>

#include "export/layout_resolver.h"
#include "python/errors.h"
#include "python/handles.h"
#include "runtime/program_info.h"

namespace og::python {

const generate::ModelText& ProgramHandle::model_text() const {
  if (!text.is_ok()) raise_status(text.status());
  return *text;
}

py::object json_to_python(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

namespace {

std::shared_ptr<ProgramHandle> open_program(const std::string& path, bool mmap, const std::string& math) {
  auto h = std::make_shared<ProgramHandle>();
  h->path = path;
  Status s = without_gil([&]() -> Status {
    OG_ASSIGN_OR_RETURN(runtime::MathMode mode, runtime::parse_math_mode(math));
    OG_ASSIGN_OR_RETURN(h->model, runtime::Model::load(path, residency_for_mmap(mmap), mode));
    h->text = generate::load_model_text(*h->model, "");
    return Status::ok();
  });
  check(s);
  return h;
}

struct TokenizerHandle {
  std::shared_ptr<ProgramHandle> program;
  const generate::ModelText& text() const { return program->model_text(); }
};

std::vector<chat::Message> to_messages(const py::sequence& messages) {
  std::vector<chat::Message> out;
  for (const py::handle& m : messages) {
    if (!py::isinstance<py::dict>(m)) throw py::type_error("a message must be a dict with 'role' and 'content'");
    py::dict d = py::reinterpret_borrow<py::dict>(m);
    if (!d.contains("role") || !d.contains("content")) throw py::value_error("a message needs 'role' and 'content'");
    py::object role = d["role"], content = d["content"];
    if (!py::isinstance<py::str>(role) || !py::isinstance<py::str>(content))
      throw py::type_error("a message's 'role' and 'content' must be str");
    out.push_back({py::cast<std::string>(role), py::cast<std::string>(content)});
  }
  return out;
}

}  // namespace

std::vector<chat::Message> messages_from_python(const py::sequence& messages) { return to_messages(messages); }

void bind_program(py::module_& m) {
  m.def(
      "layout",
      [](const std::string& model) {
        auto r = without_gil([&] { return exporter::resolve_model_layout(model); });
        return json_to_python(runtime::layout_json(unwrap(std::move(r)).layout).dump());
      },
      py::arg("model"),
      "The cache layout a model's config.json implies (a directory, config.json or hub id), as `offgraph layout --json`.");

  py::class_<TokenizerHandle>(m, "Tokenizer", "The program's tokenizer and chat template.")
      .def(
          "encode",
          [](const TokenizerHandle& t, const std::string& text, bool add_special) {
            return unwrap(without_gil([&] { return t.text().tokenizer.encode(text, add_special); }));
          },
          py::arg("text"), py::arg("add_special") = true, "Token ids of text (add_special: the tokenizer's BOS etc.).")
      .def(
          "decode",
          [](const TokenizerHandle& t, const std::vector<int32_t>& ids, bool skip_special) {
            return without_gil([&] { return t.text().tokenizer.decode(ids, skip_special); });
          },
          py::arg("ids"), py::arg("skip_special") = false)
      .def(
          "apply_chat_template",
          [](const TokenizerHandle& t, const py::sequence& messages, bool add_generation_prompt, const py::object& tools,
             const py::kwargs& kwargs) {
            const generate::ModelText& text = t.text();
            if (!text.chat_template) raise_status(bad_input("{}: the program has no chat template", t.program->path));
            for (const py::handle& m : messages) {
              if (!py::isinstance<py::dict>(m)) throw py::type_error("a message must be a dict with 'role' and 'content'");
              py::dict d = py::reinterpret_borrow<py::dict>(m);
              if (!d.contains("role") || (!d.contains("content") && !d.contains("tool_calls")))
                throw py::value_error("a message needs 'role' and 'content' (or 'tool_calls')");
            }
            // Messages, tools and template variables as the JSON the template reads (OpenAI's
            // message shapes: tool_calls, tool results, content parts), through json.dumps.
            const py::object dumps = py::module_::import("json").attr("dumps");
            const auto to_json = [&](const py::handle& v) { return nlohmann::ordered_json::parse(py::cast<std::string>(dumps(v))); };
            chat::RenderOptions o = text.render;
            o.add_generation_prompt = add_generation_prompt;
            if (!tools.is_none()) o.extra_context["tools"] = to_json(tools);
            for (const auto& [k, v] : kwargs) o.extra_context[py::cast<std::string>(k)] = to_json(v);
            const nlohmann::ordered_json msgs = to_json(messages);
            return unwrap(without_gil([&] { return text.chat_template->render_json(msgs, o); }));
          },
          py::arg("messages"), py::arg("add_generation_prompt") = true, py::arg("tools") = py::none(),
          "The conversation rendered by the program's chat template (as transformers' apply_chat_template, tokenize=False): "
          "messages as OpenAI's (tool_calls, tool results), `tools` as OpenAI's tool list, other keywords as template "
          "variables (enable_thinking=False).")
      .def_property_readonly("stop_ids", [](const TokenizerHandle& t) { return t.text().stop_ids; });

  ProgramClass program(m, "Program", "A loaded program file (read-only, shared by its sessions).");
  program.def(py::init(&open_program), py::arg("path"), py::arg("mmap") = false, py::arg("math") = "auto",
              "mmap=True uses the weights in place from the file's mapping (zero-copy, sharing the page cache) instead of reading them into huge pages. "
              "math: how bf16 linears compute, as the CLI's --math: 'fast' (bf16 activations), 'exact' (f32), 'auto' (fast where the CPU's BF16 dot products outrun its f32 FMAs).")
      .def_property_readonly("math", [](const ProgramHandle& p) { return std::string(p.model->math_name()); })
      .def_readonly("path", &ProgramHandle::path)
      .def_property_readonly("layout", [](const ProgramHandle& p) { return json_to_python(runtime::layout_json(p.model->layout()).dump()); })
      .def_property_readonly("vocab_size", [](const ProgramHandle& p) { return p.model->vocab_size(); })
      .def_property_readonly("max_ctx_len", [](const ProgramHandle& p) { return p.model->max_ctx_len(); })
      .def_property_readonly("prefill_chunk_size", [](const ProgramHandle& p) { return p.model->prefill_chunk_size(); })
      .def(
          "inspect",
          [](const ProgramHandle& p, bool verify) {
            if (!verify) return json_to_python(runtime::program_info_json(p.model->file(), false).dump());
            auto pf = unwrap(without_gil([&] { return program::ProgramFile::open(p.path, program::ProgramFile::Verify::kFull); }));
            return json_to_python(runtime::program_info_json(*pf, true).dump());
          },
          py::arg("verify") = false, "The data of `offgraph inspect --json` (verify: check every weight byte's checksum).")
      .def_property_readonly("tokenizer", [](const std::shared_ptr<ProgramHandle>& p) {
        p->model_text();  // raises when the program has none
        return TokenizerHandle{p};
      });
  bind_session(m, program);
  bind_generate(m, program);
}

}  // namespace og::python
