#include "runtime/session.h"

#include <cstring>

namespace og::runtime {

Result<StorageType> parse_kv_dtype(const std::string& s) {
  const std::optional<StorageType> t = storage_type_from_name(s);
  if (!t || !storage_info(*t).kv)
    return usage_error("--kv-dtype '{}': expected one of {}", s, storage_type_names([](const StorageTypeInfo& i) { return i.kv; }));
  return *t;
}

Result<ThreadPool*> resolve_pool(int threads, std::shared_ptr<ThreadPool> pool, std::shared_ptr<ThreadPool>& owned) {
  if (threads < 0) return usage_error("threads {} must be >= 0", threads);
  owned = pool ? std::move(pool) : threads > 1 ? std::make_shared<ThreadPool>(threads) : nullptr;
  return owned ? owned.get() : threads == 0 ? default_thread_pool() : nullptr;
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& o) {
  const Model& m = *model;
  const int64_t max_ctx = o.max_ctx_len > 0 ? o.max_ctx_len : m.max_ctx_len();
  if (o.max_ctx_len < 0 || max_ctx > (1ll << 30)) return usage_error("max_ctx_len {} is out of range", o.max_ctx_len);
  if (m.position_rows() > 0 && max_ctx > m.position_rows())
    return usage_error("max_ctx_len {} exceeds the {} positions of the program's learned position table", max_ctx,
                       m.position_rows());
  std::shared_ptr<ThreadPool> owned;
  OG_ASSIGN_OR_RETURN(ThreadPool * pool, resolve_pool(o.threads, o.pool, owned));
  OG_ASSIGN_OR_RETURN(CacheSet caches,
                      CacheSet::create(plan_cache_set(m.layout(), o.kv_dtype, max_ctx, m.prefill_chunk_size())));
  if (o.keep_history) caches.keep_history(o.history_limit);
  auto s = std::unique_ptr<Session>(new Session(std::move(caches)));
  s->model_ = std::move(model);
  s->own_pool_ = std::move(owned);
  s->pool_ = pool;
  return s;
}

Status Session::rewind(int64_t n) {
  OG_TRY(caches_.check_rewind(length_, n));
  length_ = n;
  caches_.truncated(n);
  return Status::ok();
}

Status Session::save(const std::string& path) const { return caches_.save(path, model_->file().checksum(), length_); }

Status Session::load(const std::string& path) {
  OG_ASSIGN_OR_RETURN(int64_t n, caches_.load(path, model_->file().checksum()));
  length_ = n;
  return Status::ok();
}

Result<PrefixState> Session::copy_prefix(int64_t n) const {
  OG_TRY(caches_.check_copy(length_, n));
  return caches_.copy_prefix(n);
}

Status Session::restore_prefix(const PrefixState& state, std::optional<int64_t> n) {
  OG_TRY(caches_.restore_prefix(state, n));
  length_ = n.value_or(state.length);
  return Status::ok();
}

Status Session::restore_prefix(const std::shared_ptr<const PrefixState>& state, std::optional<int64_t> n) {
  OG_TRY(caches_.restore_prefix(state, n));
  length_ = n.value_or(state->length);
  return Status::ok();
}

Status Session::check(std::span<const int32_t> ids, std::span<const int32_t> positions) const {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (positions.size() != ids.size()) return bad_input("{} token ids but {} positions", ids.size(), positions.size());
  if (T == 0) return bad_input("step has no tokens");
  for (int64_t t = 1; t < T; ++t)
    if (positions[t] != positions[t - 1] + 1)
      return bad_input("positions must be contiguous: position {} follows {}", positions[t], positions[t - 1]);
  OG_TRY(check_step(length_, positions[0], T, max_step_rows(), max_ctx_len()));
  for (int64_t t = 0; t < T; ++t)
    if (ids[t] < 0 || ids[t] >= model_->vocab_size())
      return bad_input("token id {} at index {} is outside the vocabulary (size {})", ids[t], t, model_->vocab_size());
  return Status::ok();
}

Result<std::span<const float>> Session::append(std::span<const int32_t> ids, LogitsRows rows) {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T > max_step_rows()) return bad_input("step of {} tokens exceeds prefill_chunk_size {}", T, max_step_rows());
  int32_t pos[1];  // decode needs no allocation; longer steps build their positions
  std::vector<int32_t> many;
  std::span<const int32_t> p;
  if (T == 1) {
    pos[0] = static_cast<int32_t>(length_);
    p = pos;
  } else {
    many.resize(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) many[static_cast<size_t>(t)] = static_cast<int32_t>(length_ + t);
    p = many;
  }
  return step(ids, p, rows);
}

Result<std::span<const float>> Session::step(std::span<const int32_t> ids, std::span<const int32_t> positions,
                                             LogitsRows rows) {
  OG_TRY(check(ids, positions));
  if (!buffers_) buffers_.emplace(*model_, max_step_rows());
  std::memcpy(buffers_->ids.data(), ids.data(), ids.size_bytes());
  std::memcpy(buffers_->positions.data(), positions.data(), positions.size_bytes());
  buffers_->op_times = op_times_;
  EntryRows e{.caches = &caches_, .row0 = 0, .rows = static_cast<int64_t>(ids.size()), .p0 = positions[0], .logits = rows};
  execute_step(*model_, std::span<EntryRows>(&e, 1), *buffers_, pool_);
  length_ = e.p0 + e.rows;  // commit: every cache was written
  caches_.written(e.p0, e.rows);
  const int64_t out_rows = rows == LogitsRows::kAll ? e.rows : 1;
  return std::span<const float>(buffers_->logits.data(), static_cast<size_t>(out_rows) * model_->vocab_size());
}

}  // namespace og::runtime
