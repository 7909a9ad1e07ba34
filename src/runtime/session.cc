#include "runtime/session.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "runtime/cache/cache_file.h"

namespace og::runtime {

Result<KvDType> parse_kv_dtype(const std::string& s) {
  if (s == "fp32" || s == "f32") return KvDType::kF32;
  if (s == "bf16") return KvDType::kBF16;
  if (s == "fp16" || s == "f16") return KvDType::kF16;
  return usage_error("--kv-dtype '{}': expected fp32, bf16 or fp16", s);
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& o) {
  auto s = std::unique_ptr<Session>(new Session());
  s->model_ = std::move(model);
  const Model& m = *s->model_;
  s->max_ctx_len_ = o.max_ctx_len > 0 ? o.max_ctx_len : m.max_ctx_len();
  if (o.max_ctx_len < 0 || s->max_ctx_len_ > (1ll << 30)) return usage_error("max_ctx_len {} is out of range", o.max_ctx_len);
  const int64_t chunk = std::min<int64_t>(m.prefill_chunk_size(), s->max_ctx_len_);
  const kernels::ElemType et = o.kv_dtype == KvDType::kF32    ? kernels::ElemType::kF32
                               : o.kv_dtype == KvDType::kBF16 ? kernels::ElemType::kBF16
                                                              : kernels::ElemType::kF16;
  const size_t esize = et == kernels::ElemType::kF32 ? 4 : 2;
  const program::CacheLayout& layout = m.layout();
  uint64_t total = 0;
  for (int32_t c = 0; c < layout.n_caches(); ++c) {
    CachePolicy p = plan_cache(layout.windows[c], s->max_ctx_len_, chunk);
    total += 2ull * static_cast<uint64_t>(p.slots) * layout.kv_heads[c] * layout.head_dims[c] * esize;
    s->policies_.push_back(p);
  }
  // Refuse up front, with the numbers, rather than die on allocation.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && total > static_cast<uint64_t>(pages) * static_cast<uint64_t>(page))
    return resource_error("KV caches need {} bytes ({} caches, max_ctx_len {}), more than this machine's memory ({} bytes)",
                          total, layout.n_caches(), s->max_ctx_len_, static_cast<uint64_t>(pages) * page);
  for (int32_t c = 0; c < layout.n_caches(); ++c) {
    const CachePolicy& p = s->policies_[c];
    const size_t half = static_cast<size_t>(p.slots) * layout.kv_heads[c] * layout.head_dims[c] * esize;
    auto mem = std::unique_ptr<uint8_t[]>(new (std::nothrow) uint8_t[2 * half]);
    if (!mem) return resource_error("cannot allocate {} bytes for KV cache {}", 2 * half, c);
    kernels::KvStorage kv;
    kv.k = mem.get();
    kv.v = mem.get() + half;
    kv.type = et;
    kv.kv_heads = layout.kv_heads[c];
    kv.head_dim = layout.head_dims[c];
    kv.slots = p.slots;
    kv.ring = p.ring;
    s->kv_.push_back(kv);
    s->kv_memory_.push_back(std::move(mem));
  }
  s->kv_bytes_ = total;
  s->kv_type_ = static_cast<uint32_t>(et);
  for (int32_t w : m.slot_widths()) s->slots_.emplace_back(static_cast<size_t>(chunk) * w);
  for (int64_t bytes : m.int8_buffer_row_bytes()) {
    s->int8_memory_.emplace_back(static_cast<size_t>(chunk * bytes));
    s->int8_.push_back({.data = s->int8_memory_.back().data(), .row_bytes = bytes});
  }
  s->ids_.resize(static_cast<size_t>(chunk));
  s->remapped_.resize(static_cast<size_t>(chunk));
  if (o.threads < 0) return usage_error("threads {} must be >= 0", o.threads);
  s->own_pool_ = o.pool ? o.pool : o.threads > 1 ? std::make_shared<ThreadPool>(o.threads) : nullptr;
  s->pool_ = s->own_pool_ ? s->own_pool_.get() : o.threads == 0 ? default_thread_pool() : nullptr;
  s->positions_.resize(static_cast<size_t>(chunk));
  return s;
}

uint64_t Session::cache_bytes() const { return kv_bytes_; }

Status Session::rewind(int64_t n) {
  OG_TRY(check_rewind(length_, n, policies_));
  length_ = n;
  return Status::ok();
}

Status Session::save(const std::string& path) const {
  CacheImage img{.program_checksum = model_->file().checksum(), .kv_type = kv_type_, .length = length_, .caches = kv_};
  return write_cache_file(path, img);
}

Status Session::load(const std::string& path) {
  // read_cache_file checks everything before it copies, so a refused file changes nothing.
  OG_ASSIGN_OR_RETURN(int64_t n, read_cache_file(path, model_->file().checksum(), kv_type_, kv_));
  if (n > max_ctx_len_) return bad_input("{}: saved length {} exceeds max_ctx_len {}", path, n, max_ctx_len_);
  length_ = n;
  return Status::ok();
}

float* Session::value_ptr(int32_t v, int64_t row) {
  const Model& m = *model_;
  if (v == m.logits()) return logits_.data() + row * m.width(v);
  return slots_[m.slot_of(v)].data() + row * m.width(v);
}

Result<std::span<const float>> Session::append(std::span<const int32_t> ids, LogitsRows rows) {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T > static_cast<int64_t>(positions_.size()))
    return bad_input("step of {} tokens exceeds prefill_chunk_size {}", T, positions_.size());
  std::vector<int32_t>& pos = positions_;
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(length_ + t);
  return step(ids, std::span<const int32_t>(pos.data(), static_cast<size_t>(T)), rows);
}

Result<std::span<const float>> Session::step(std::span<const int32_t> ids, std::span<const int32_t> positions,
                                             LogitsRows rows) {
  const Model& m = *model_;
  const int64_t T = static_cast<int64_t>(ids.size());
  if (positions.size() != ids.size())
    return bad_input("{} token ids but {} positions", ids.size(), positions.size());
  if (T == 0) return bad_input("step has no tokens");
  for (int64_t t = 1; t < T; ++t)
    if (positions[t] != positions[t - 1] + 1)
      return bad_input("positions must be contiguous: position {} follows {}", positions[t], positions[t - 1]);
  const int64_t p0 = positions[0];
  OG_TRY(check_step(length_, p0, T, static_cast<int64_t>(ids_.size()), max_ctx_len_));
  for (int64_t t = 0; t < T; ++t)
    if (ids[t] < 0 || ids[t] >= m.vocab_size())
      return bad_input("token id {} at index {} is outside the vocabulary (size {})", ids[t], t, m.vocab_size());

  std::memcpy(ids_.data(), ids.data(), ids.size_bytes());
  std::memcpy(positions_.data(), positions.data(), positions.size_bytes());
  const int64_t out_rows = rows == LogitsRows::kAll ? T : 1;
  const size_t need = static_cast<size_t>(out_rows) * m.vocab_size();
  if (logits_.size() < need) logits_.resize(need);  // grows once to the largest request

  const auto& ops = m.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const BoundOp& op = ops[i];
    // After the last attention every op is row-wise: for the last row only, run it on one row.
    const bool last_only = rows == LogitsRows::kLast && i >= m.row_suffix_begin();
    const int64_t n = last_only ? 1 : T;
    auto in_ptr = [&](int k) -> const float* {
      const int32_t v = op.in[k];
      if (v == m.input_ids() || v == m.positions()) return nullptr;
      // Values made before the suffix hold T rows: start at the last one.
      const bool before_suffix = !op.in_from_suffix[k];
      return value_ptr(v, last_only && before_suffix ? T - 1 : 0);
    };
    const int32_t* pos_ptr = positions_.data() + (last_only ? T - 1 : 0);
    const int32_t* id_ptr = ids_.data() + (last_only ? T - 1 : 0);
    float* out = value_ptr(op.out, 0);
    const int64_t elems = n * op.width;
    switch (op.kind) {
      case OpKind::kEmbedding:
        if (!op.remap_ids.empty()) {  // multimodal placeholders read the padding row
          for (int64_t t = 0; t < n; ++t)
            if (std::find(op.remap_ids.begin(), op.remap_ids.end(), id_ptr[t]) != op.remap_ids.end())
              remapped_[static_cast<size_t>(t)] = op.remap_to;
            else
              remapped_[static_cast<size_t>(t)] = id_ptr[t];
          kernels::embedding(remapped_.data(), n, op.matrix, op.scalar, out);
        } else {
          kernels::embedding(id_ptr, n, op.matrix, op.scalar, out);
        }
        break;
      case OpKind::kRmsNorm: kernels::rms_norm(in_ptr(0), elems / op.dim, op.dim, op.vec, op.eps, out); break;
      case OpKind::kLinear:
        if (op.int8_buffer < 0) {
          kernels::linear(in_ptr(0), n, op.matrix, op.vec, out, pool_);
        } else {  // int8 activations, their rows numbered as the input's rows (in_ptr)
          kernels::Int8Input& xq = int8_[op.int8_buffer];
          const int64_t row0 = last_only && !op.in_from_suffix[0] ? T - 1 : 0;
          if (op.int8_fill) kernels::quantize_int8(in_ptr(0), n, op.matrix, xq, row0);
          kernels::linear(xq, row0, n, op.matrix, op.vec, out, pool_);
        }
        break;
      case OpKind::kRope: kernels::rope(in_ptr(0), pos_ptr, n, op.rope, out); break;
      case OpKind::kAttend: {
        const kernels::KvStorage& kv = kv_[op.cache_id];
        if (op.writes_cache) kernels::kv_write(in_ptr(1), in_ptr(2), T, p0, kv);
        kernels::attend(op.attend, in_ptr(0), T, p0, kv, out, pool_);
        break;
      }
      case OpKind::kAdd: kernels::add(in_ptr(0), in_ptr(1), elems, out); break;
      case OpKind::kMul: kernels::mul(in_ptr(0), in_ptr(1), elems, out); break;
      case OpKind::kScale: kernels::scale(in_ptr(0), elems, op.scalar, out); break;
      case OpKind::kAct: kernels::act(in_ptr(0), elems, op.act, out); break;
      case OpKind::kActMul: kernels::act_mul(in_ptr(0), in_ptr(1), elems, op.act, out); break;
      case OpKind::kSoftcap: kernels::softcap(in_ptr(0), elems, op.scalar, out); break;
      case OpKind::kSlice:
        kernels::slice_columns(in_ptr(0), n, m.width(op.in[0]), op.dim, op.width, out);
        break;
      case OpKind::kStreamMix: kernels::stream_mix(in_ptr(0), op.vec ? op.vec : in_ptr(1), n, op.mix, out); break;
      case OpKind::kConcat:
        kernels::concat_columns(in_ptr(0), m.width(op.in[0]), in_ptr(1), m.width(op.in[1]), n, out);
        break;
      case OpKind::kRmsMatch:
        kernels::rms_match(in_ptr(0), in_ptr(1), n, op.width / op.dim, op.dim, op.eps, out);
        break;
      case OpKind::kEmbeddingOverlay: kernels::embedding_overlay(in_ptr(0), id_ptr, n, op.matrix, op.dim, out); break;
      case OpKind::kGaussianTopK: kernels::gaussian_top_k(in_ptr(0), n, op.width, op.scalar, out); break;
    }
  }
  length_ = p0 + T;  // commit: every cache was written
  return std::span<const float>(logits_.data(), need);
}

}  // namespace og::runtime
