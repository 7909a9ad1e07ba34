// offgraph.Session (Program.session()) and offgraph.step_batch(): steps return float32
// numpy arrays [rows, vocab] that the caller owns (a copy: the runtime reuses its logits
// buffer at the next step, so a view would change under the caller).
#include <algorithm>
#include <cstring>

#include <pybind11/stl.h>

#include "python/errors.h"
#include "python/handles.h"

namespace og::python {

runtime::Session& SessionHandle::open() {
  if (!session) throw py::value_error("the session is closed");
  return *session;
}

runtime::LogitsRows parse_logits_rows(const std::string& s) {
  if (s == "last") return runtime::LogitsRows::kLast;
  if (s == "all") return runtime::LogitsRows::kAll;
  throw py::value_error("logits='" + s + "': expected 'last' or 'all'");
}

namespace {

using FloatArray = py::array_t<float, py::array::c_style>;

// Token ids or positions: a sequence of ints or an integer numpy array (a float array, a str
// or values beyond int32 are a TypeError, never silently converted).
std::vector<int32_t> int32_list(const py::handle& h, const char* what) {
  if (py::isinstance<py::array>(h)) {
    const py::dtype dtype = py::reinterpret_borrow<py::array>(h).dtype();
    if (dtype.kind() != 'i' && dtype.kind() != 'u')
      throw py::type_error(std::string(what) + " must be integers, not an array of " + std::string(py::str(py::handle(dtype))));
  }
  if (py::isinstance<py::str>(h) || py::isinstance<py::bytes>(h))
    throw py::type_error(std::string(what) + " must be a sequence of int32 values, not a string");
  try {
    return py::cast<std::vector<int32_t>>(h);
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " must be a sequence of int32 values");
  }
}

FloatArray new_logits(runtime::LogitsRows rows, size_t n_ids, int64_t vocab) {
  const auto n_rows = static_cast<py::ssize_t>(rows == runtime::LogitsRows::kLast ? std::min<size_t>(n_ids, 1) : n_ids);
  return FloatArray({n_rows, static_cast<py::ssize_t>(vocab)});
}

// Copies a step's logits into `out` (allocated with the GIL for the rows asked for).
Status copy_logits(std::span<const float> logits, float* out, py::ssize_t size) {
  if (static_cast<py::ssize_t>(logits.size()) != size)
    return Status(ErrorCode::kInternal, fmt::format("step returned {} logits, expected {}", logits.size(), size));
  std::memcpy(out, logits.data(), logits.size() * sizeof(float));
  return Status::ok();
}

std::shared_ptr<SessionHandle> make_session(const std::shared_ptr<ProgramHandle>& p, const std::string& kv_dtype,
                                            int threads, int64_t max_ctx_len) {
  if (threads < 0) throw py::value_error("threads must be >= 0");
  const StorageType kv = unwrap(runtime::parse_kv_dtype(kv_dtype));
  auto h = std::make_shared<SessionHandle>();
  h->program = p;
  h->session = unwrap(without_gil([&] {
    return runtime::Session::create(p->model, {.kv_dtype = kv, .max_ctx_len = max_ctx_len, .threads = threads});
  }));
  return h;
}

FloatArray step(SessionHandle& h, const py::handle& ids_arg, const py::handle& positions_arg, const std::string& logits) {
  const runtime::LogitsRows rows = parse_logits_rows(logits);
  const std::vector<int32_t> ids = int32_list(ids_arg, "ids");
  std::optional<std::vector<int32_t>> positions;
  if (!positions_arg.is_none()) positions = int32_list(positions_arg, "positions");
  FloatArray out = new_logits(rows, ids.size(), h.program->model->vocab_size());
  float* dst = out.mutable_data();
  const py::ssize_t size = out.size();
  bool closed = false;
  Status s = without_gil([&]() -> Status {
    std::lock_guard lock(h.mu);
    if (!h.session) {
      closed = true;
      return Status::ok();
    }
    auto r = positions ? h.session->step(ids, *positions, rows) : h.session->append(ids, rows);
    if (!r.is_ok()) return r.status();
    return copy_logits(*r, dst, size);
  });
  if (closed) throw py::value_error("the session is closed");
  check(s);
  return out;
}

// [(session, ids) or (session, ids, positions), ...] -> one batched step.
py::list step_batch(const py::sequence& entries, const std::string& logits) {
  const runtime::LogitsRows rows = parse_logits_rows(logits);
  struct Entry {
    std::shared_ptr<SessionHandle> handle;
    std::vector<int32_t> ids, positions;
    FloatArray out;
  };
  std::vector<Entry> in;
  for (const py::handle& e : entries) {
    if (!py::isinstance<py::tuple>(e) && !py::isinstance<py::list>(e))
      throw py::type_error("step_batch entries are (session, ids) or (session, ids, positions)");
    py::sequence t = py::reinterpret_borrow<py::sequence>(e);
    if (t.size() != 2 && t.size() != 3) throw py::type_error("step_batch entries are (session, ids) or (session, ids, positions)");
    if (!py::isinstance<SessionHandle>(t[0])) throw py::type_error("step_batch: an entry's first item must be a Session");
    Entry x{.handle = py::cast<std::shared_ptr<SessionHandle>>(t[0]), .ids = int32_list(t[1], "ids")};
    if (t.size() == 3 && !t[2].is_none()) x.positions = int32_list(t[2], "positions");
    x.out = new_logits(rows, x.ids.size(), x.handle->program->model->vocab_size());
    in.push_back(std::move(x));
  }
  if (in.empty()) return py::list();
  ProgramHandle& program = *in[0].handle->program;
  for (const Entry& e : in)
    if (e.handle->program->model != program.model) throw py::value_error("step_batch: the sessions belong to different programs");
  // Lock each distinct session once, in address order (no deadlock with another batch).
  std::vector<SessionHandle*> locks;
  for (const Entry& e : in) locks.push_back(e.handle.get());
  std::sort(locks.begin(), locks.end());
  locks.erase(std::unique(locks.begin(), locks.end()), locks.end());
  std::vector<float*> dst;
  for (Entry& e : in) dst.push_back(e.out.mutable_data());
  bool closed = false;
  Status s = without_gil([&]() -> Status {
    std::lock_guard batch_lock(program.batch_mu);
    std::vector<std::unique_lock<std::mutex>> held;
    for (SessionHandle* h : locks) held.emplace_back(h->mu);
    for (SessionHandle* h : locks)
      if (!h->session) closed = true;
    if (closed) return Status::ok();
    if (!program.batch) {
      OG_ASSIGN_OR_RETURN(program.batch, runtime::BatchRunner::create(program.model));
    }
    std::vector<runtime::BatchEntry> batch;
    for (const Entry& e : in)
      batch.push_back({.session = e.handle->session.get(), .ids = e.ids, .positions = e.positions, .logits = rows});
    OG_ASSIGN_OR_RETURN(auto results, program.batch->step(batch));
    for (size_t i = 0; i < in.size(); ++i) OG_TRY(copy_logits(results[i], dst[i], in[i].out.size()));
    return Status::ok();
  });
  if (closed) throw py::value_error("step_batch: a session is closed");
  check(s);
  py::list out;
  for (Entry& e : in) out.append(std::move(e.out));
  return out;
}

// Runs f on the open session with the GIL released and the session locked.
template <typename F>
auto locked(SessionHandle& h, F&& f) {
  bool closed = false;
  auto r = without_gil([&] {
    std::lock_guard lock(h.mu);
    closed = h.session == nullptr;
    return closed ? decltype(f(*h.session))(Status::ok()) : f(*h.session);
  });
  if (closed) throw py::value_error("the session is closed");
  return r;
}

}  // namespace

void bind_session(py::module_& m, ProgramClass& program) {
  const runtime::SessionOptions defaults;
  py::class_<SessionHandle, std::shared_ptr<SessionHandle>>(
      m, "Session",
      "One sequence's KV caches on a program. Used by one thread at a time (calls from several threads are serialized).")
      .def("step", &step, py::arg("ids"), py::arg("positions") = py::none(), py::arg("logits") = "last",
           "Runs ids at positions (default: continuing the sequence); returns float32 logits [rows, vocab], "
           "rows = 1 for logits='last', len(ids) for 'all'. The array is a copy the caller owns: it stays valid "
           "after further steps and after the session is closed.")
      .def_property_readonly("length", [](SessionHandle& h) {
        std::lock_guard lock(h.mu);
        return h.open().length();
      })
      .def_property_readonly("max_ctx_len", [](SessionHandle& h) {
        std::lock_guard lock(h.mu);
        return h.open().max_ctx_len();
      })
      .def_property_readonly("closed", [](SessionHandle& h) {
        std::lock_guard lock(h.mu);
        return h.session == nullptr;
      })
      .def_property_readonly("program", [](const SessionHandle& h) { return h.program; })
      .def("rewind", [](SessionHandle& h, int64_t n) { check(locked(h, [&](runtime::Session& s) { return s.rewind(n); })); },
           py::arg("n"), "Keeps the first n tokens (as far back as every sliding cache still holds).")
      .def("clear", [](SessionHandle& h) {
        check(locked(h, [](runtime::Session& s) {
          s.clear();
          return Status::ok();
        }));
      })
      .def("save", [](SessionHandle& h, const std::string& path) { check(locked(h, [&](runtime::Session& s) { return s.save(path); })); },
           py::arg("path"))
      .def("load", [](SessionHandle& h, const std::string& path) { check(locked(h, [&](runtime::Session& s) { return s.load(path); })); },
           py::arg("path"))
      .def("close", [](SessionHandle& h) {
        without_gil([&] {
          std::lock_guard lock(h.mu);
          h.session.reset();
          return 0;
        });
      }, "Frees the caches; any later use raises ValueError.")
      .def("__enter__", [](const std::shared_ptr<SessionHandle>& h) { return h; })
      .def("__exit__", [](SessionHandle& h, py::args) {
        std::lock_guard lock(h.mu);
        h.session.reset();
      });
  program.def("session", &make_session, py::arg("kv_dtype") = "fp32", py::arg("threads") = defaults.threads,
              py::arg("max_ctx_len") = defaults.max_ctx_len,
              "A new session (kv_dtype fp32|bf16|fp16|q8_0|q4_0; threads 0: the shared pool of physical cores; "
              "max_ctx_len 0: the program's).");
  m.def("step_batch", &step_batch, py::arg("entries"), py::arg("logits") = "last",
        "One batched step over [(session, ids) or (session, ids, positions), ...] of one program; returns each entry's "
        "logits (as Session.step). Each result equals stepping that session alone; a refused batch changes no session.");
}

}  // namespace og::python
