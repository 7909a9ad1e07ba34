// Program.generate() -> text, and Program.stream() -> an iterator of text pieces. Each call
// runs on a new session of the program; the generation runs with the GIL released (a
// stream's on a thread of its own, handing pieces over through a queue).
#include <condition_variable>
#include <deque>
#include <thread>

#include <nlohmann/json.hpp>
#include <pybind11/stl.h>

#include "generate/text_generation.h"
#include "python/errors.h"
#include "python/handles.h"

namespace og::python {
namespace {

struct Request {
  std::shared_ptr<ProgramHandle> program;
  std::vector<int32_t> prompt;
  generate::GenerateOptions options;
  std::unique_ptr<runtime::Session> session;
};

Request make_request(const std::shared_ptr<ProgramHandle>& p, const py::object& prompt, int32_t max_tokens,
                     float temperature, float top_p, int32_t top_k, float min_p, float repeat_penalty, uint64_t seed,
                     const std::vector<int32_t>& stop, const py::object& json_schema) {
  const generate::ModelText& text = p->model_text();
  Request r{.program = p};
  if (py::isinstance<py::str>(prompt)) {
    const std::string s = py::cast<std::string>(prompt);
    r.prompt = unwrap(without_gil([&] { return generate::prompt_tokens(text, s); }));
  } else if (py::isinstance<py::sequence>(prompt)) {
    const std::vector<chat::Message> messages = messages_from_python(py::reinterpret_borrow<py::sequence>(prompt));
    r.prompt = unwrap(without_gil([&] { return generate::chat_tokens(text, messages); }));
  } else {
    throw py::type_error("prompt must be a str or a list of {'role', 'content'} messages");
  }
  if (max_tokens < -1) throw py::value_error("max_tokens must be >= -1");
  r.options.max_tokens = max_tokens;
  r.options.sampling.temperature = temperature;
  r.options.sampling.top_p = top_p;
  r.options.sampling.top_k = top_k;
  r.options.sampling.min_p = min_p;
  r.options.sampling.repetition_penalty = repeat_penalty;
  r.options.sampling.seed = seed;
  check(r.options.sampling.validate());
  r.options.stop_ids = text.stop_ids;
  r.options.stop_ids.insert(r.options.stop_ids.end(), stop.begin(), stop.end());
  if (!json_schema.is_none()) {
    // A dict keeps its keys' order through json.dumps: the order the reply's objects are written in.
    const std::string schema_text = py::isinstance<py::str>(json_schema)
                                        ? py::cast<std::string>(json_schema)
                                        : py::cast<std::string>(py::module_::import("json").attr("dumps")(json_schema));
    const auto schema = nlohmann::ordered_json::parse(schema_text, nullptr, false);
    if (schema.is_discarded()) throw py::value_error("json_schema is not valid JSON");
    r.options.sampling.grammar = unwrap(without_gil([&] { return text.grammars->json_schema(schema); }));
  }
  r.session = unwrap(without_gil([&] { return runtime::Session::create(p->model); }));
  return r;
}

std::string run(Request& r) {
  std::string out;
  auto stats = without_gil([&] {
    return generate::generate_text(*r.session, r.program->model_text(), r.prompt, r.options, [&](const std::string& piece) {
      out += piece;
      return true;
    });
  });
  check(stats.status());
  return out;
}

// The iterator of Program.stream(): pieces produced on a worker thread.
class TextStream {
 public:
  explicit TextStream(Request r) : request_(std::move(r)) {
    worker_ = std::thread([this] {
      auto stats = generate::generate_text(*request_.session, request_.program->model_text(), request_.prompt,
                                           request_.options, [this](const std::string& piece) {
                                             std::lock_guard lock(mu_);
                                             pieces_.push_back(piece);
                                             cv_.notify_one();
                                             return !cancelled_;
                                           });
      std::lock_guard lock(mu_);
      status_ = stats.status();
      done_ = true;
      cv_.notify_one();
    });
  }
  ~TextStream() { close(); }

  std::string next() {
    std::optional<std::string> piece;
    Status status;
    without_gil([&] {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !pieces_.empty() || done_; });
      if (!pieces_.empty()) {
        piece = std::move(pieces_.front());
        pieces_.pop_front();
      } else {
        status = status_;
        status_ = Status::ok();  // reported once
      }
      return 0;
    });
    if (piece) return *piece;
    check(status);
    throw py::stop_iteration();
  }

  // Stops the generation at its next token and waits for the worker.
  void close() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
    }
    py::gil_scoped_release release;
    worker_.join();
  }

 private:
  Request request_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> pieces_;
  bool done_ = false, cancelled_ = false;
  Status status_;
  std::thread worker_;
};

}  // namespace

void bind_generate(py::module_& m, ProgramClass& program) {
  py::class_<TextStream>(m, "TextStream", "Iterator of the text pieces of Program.stream(); close() stops the generation.")
      .def("__iter__", [](TextStream& s) -> TextStream& { return s; })
      .def("__next__", &TextStream::next)
      .def("close", &TextStream::close)
      .def("__enter__", [](TextStream& s) -> TextStream& { return s; })
      .def("__exit__", [](TextStream& s, py::args) { s.close(); });

  const generate::GenerateOptions d;
  auto args = [&](auto&&... extra) {
    return std::make_tuple(py::arg("prompt"), py::arg("max_tokens") = d.max_tokens,
                           py::arg("temperature") = d.sampling.temperature, py::arg("top_p") = d.sampling.top_p,
                           py::arg("top_k") = d.sampling.top_k, py::arg("min_p") = d.sampling.min_p,
                           py::arg("repeat_penalty") = d.sampling.repetition_penalty, py::arg("seed") = d.sampling.seed,
                           py::arg("stop") = std::vector<int32_t>{}, py::arg("json_schema") = py::none());
  };
  std::apply(
      [&](auto&&... a) {
        program.def(
            "generate",
            [](const std::shared_ptr<ProgramHandle>& p, const py::object& prompt, int32_t max_tokens, float temperature,
               float top_p, int32_t top_k, float min_p, float repeat_penalty, uint64_t seed, const std::vector<int32_t>& stop,
               const py::object& json_schema) {
              Request r = make_request(p, prompt, max_tokens, temperature, top_p, top_k, min_p, repeat_penalty, seed, stop,
                                       json_schema);
              return run(r);
            },
            a...,
            "Generated text for a prompt (str: encoded with the tokenizer's special tokens, as `offgraph run`) or "
            "messages ([{'role', 'content'}]: rendered by the chat template, as `offgraph run --chat`). Sampling as "
            "the CLI's (temperature 0: greedy); stop: token ids that end generation besides the program's; json_schema "
            "(a dict or JSON text): the reply is constrained to the JSON texts the schema accepts (`--json-schema`).");
        program.def(
            "stream",
            [](const std::shared_ptr<ProgramHandle>& p, const py::object& prompt, int32_t max_tokens, float temperature,
               float top_p, int32_t top_k, float min_p, float repeat_penalty, uint64_t seed, const std::vector<int32_t>& stop,
               const py::object& json_schema) {
              return std::make_unique<TextStream>(make_request(p, prompt, max_tokens, temperature, top_p, top_k, min_p,
                                                               repeat_penalty, seed, stop, json_schema));
            },
            a..., "As generate(), as an iterator of text pieces (their concatenation is generate()'s text).");
      },
      args());
}

}  // namespace og::python
