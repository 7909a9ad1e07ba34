#include "runtime/batch_runner.h"

#include <algorithm>
#include <cstring>

namespace og::runtime {

BatchRunner::BatchRunner(std::shared_ptr<const Model> model, ThreadPool* pool, std::shared_ptr<ThreadPool> owned)
    : model_(std::move(model)), own_pool_(std::move(owned)), pool_(pool), buffers_(*model_, model_->prefill_chunk_size()) {}

Result<std::unique_ptr<BatchRunner>> BatchRunner::create(std::shared_ptr<const Model> model, const BatchOptions& o) {
  std::shared_ptr<ThreadPool> owned;
  OG_ASSIGN_OR_RETURN(ThreadPool * pool, resolve_pool(o.threads, o.pool, owned));
  return std::unique_ptr<BatchRunner>(new BatchRunner(std::move(model), pool, std::move(owned)));
}

Result<std::vector<std::span<const float>>> BatchRunner::step(std::span<const BatchEntry> entries) {
  if (entries.empty()) return bad_input("batched step has no entries");
  // Positions of entries that continue their session, laid out entry after entry.
  int64_t total = 0;
  for (const BatchEntry& e : entries) total += static_cast<int64_t>(e.ids.size());
  continuation_.resize(static_cast<size_t>(total));
  // Validate everything before the first row runs: a refused step changes no session.
  rows_.clear();
  int64_t row = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& e = entries[i];
    if (e.session == nullptr) return bad_input("batch entry {}: no session", i);
    if (&e.session->model() != model_.get()) return bad_input("batch entry {}: the session runs another program", i);
    for (size_t j = 0; j < i; ++j)
      if (entries[j].session == e.session) return bad_input("batch entry {}: its session is also entry {}", i, j);
    const auto T = static_cast<int64_t>(e.ids.size());
    std::span<const int32_t> pos = e.positions;
    if (pos.empty()) {
      int32_t* p = continuation_.data() + row;
      for (int64_t t = 0; t < T; ++t) p[t] = static_cast<int32_t>(e.session->length() + t);
      pos = std::span<const int32_t>(p, static_cast<size_t>(T));
    }
    if (Status s = e.session->check(e.ids, pos); !s.is_ok()) return s.with_context(fmt::format("batch entry {}", i));
    if (row + T > max_rows())
      return bad_input("batch entry {}: the step's {} rows exceed prefill_chunk_size {}", i, total, max_rows());
    std::memcpy(buffers_.ids.data() + row, e.ids.data(), e.ids.size_bytes());
    std::memcpy(buffers_.positions.data() + row, pos.data(), pos.size_bytes());
    rows_.push_back({.caches = &e.session->caches_, .row0 = row, .rows = T, .p0 = pos[0], .logits = e.logits});
    row += T;
  }
  execute_step(*model_, rows_, buffers_, pool_);
  std::vector<std::span<const float>> out;
  out.reserve(entries.size());
  const auto V = static_cast<size_t>(model_->vocab_size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const EntryRows& r = rows_[i];
    entries[i].session->length_ = r.p0 + r.rows;  // commit: every cache of the entry was written
    entries[i].session->caches_.written(r.p0, r.rows);
    const auto n = static_cast<size_t>(r.logits == LogitsRows::kAll ? r.rows : 1);
    out.emplace_back(buffers_.logits.data() + static_cast<size_t>(r.logits_row0) * V, n * V);
  }
  return out;
}

}  // namespace og::runtime
