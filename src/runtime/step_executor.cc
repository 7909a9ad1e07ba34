#include "runtime/step_executor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

namespace og::runtime {
namespace {

// Moves the kept rows of a [N, width] value to its front (kept is increasing, so each row
// moves towards the front and never over a row still to be read).
template <typename T>
void keep_rows(T* data, int64_t width, std::span<const int64_t> kept) {
  for (size_t i = 0; i < kept.size(); ++i)
    if (kept[i] != static_cast<int64_t>(i))
      std::memcpy(data + static_cast<int64_t>(i) * width, data + kept[i] * width, static_cast<size_t>(width) * sizeof(T));
}

}  // namespace

void execute_step(const Model& m, std::span<EntryRows> entries, StepBuffers& b, ThreadPool* pool) {
  int64_t N = 0;  // rows of the step
  for (const EntryRows& e : entries) N = std::max(N, e.row0 + e.rows);
  b.kept.clear();
  for (EntryRows& e : entries) {
    e.logits_row0 = static_cast<int64_t>(b.kept.size());
    for (int64_t r = e.logits == LogitsRows::kAll ? 0 : e.rows - 1; r < e.rows; ++r) b.kept.push_back(e.row0 + r);
  }
  const auto n_kept = static_cast<int64_t>(b.kept.size());
  const size_t need = static_cast<size_t>(n_kept) * static_cast<size_t>(m.vocab_size());
  if (b.logits.size() < need) b.logits.resize(need);  // grows once to the largest request

  auto value = [&](int32_t v) -> float* {
    return v == m.logits() ? b.logits.data() : b.slots[static_cast<size_t>(m.slot_of(v))].data();
  };
  std::vector<bool> kept_done;  // values already reduced to the kept rows
  int64_t n = N;                // rows the current op runs on
  const auto& ops = m.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const BoundOp& op = ops[i];
    if (i == m.row_suffix_begin() && n_kept < N) {
      // From here on every op is row-wise: drop the rows nobody reads logits of.
      keep_rows(b.ids.data(), 1, b.kept);
      keep_rows(b.positions.data(), 1, b.kept);
      kept_done.assign(static_cast<size_t>(m.program().values()->size()), false);
      n = n_kept;
    }
    auto in = [&](int k) -> float* {
      const int32_t v = op.in[k];
      if (v == m.input_ids() || v == m.positions()) return nullptr;
      if (n < N && !op.in_from_suffix[k] && !kept_done[static_cast<size_t>(v)]) {
        keep_rows(value(v), m.width(v), b.kept);  // made before the suffix: N rows
        kept_done[static_cast<size_t>(v)] = true;
      }
      return value(v);
    };
    const int32_t* ids = b.ids.data();
    float* out = value(op.out);
    const int64_t elems = n * op.width;
    const auto op_start = b.op_times ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    switch (op.kind) {
      case OpKind::kEmbedding:
        if (op.in[0] == m.positions()) {  // a learned position table (the validator: a row per position)
          kernels::embedding(b.positions.data(), n, op.matrix, op.scalar, out);
        } else if (!op.remap_ids.empty()) {  // multimodal placeholders read the padding row
          for (int64_t t = 0; t < n; ++t)
            b.remapped[static_cast<size_t>(t)] =
                std::find(op.remap_ids.begin(), op.remap_ids.end(), ids[t]) != op.remap_ids.end() ? op.remap_to : ids[t];
          kernels::embedding(b.remapped.data(), n, op.matrix, op.scalar, out);
        } else {
          kernels::embedding(ids, n, op.matrix, op.scalar, out);
        }
        break;
      case OpKind::kRmsNorm: kernels::rms_norm(in(0), elems / op.dim, op.dim, op.vec, op.eps, out, pool); break;
      case OpKind::kLayerNorm:
        kernels::layer_norm(in(0), elems / op.dim, op.dim, op.vec, op.vec2, op.eps, out, pool, op.norm_groups);
        break;
      case OpKind::kLinear: {
        if (op.group == 0) break;  // ran with its group's first linear
        // This linear and the group's others (Model::plan_linear_groups), over one x.
        std::array<kernels::LinearOut, kernels::kMaxGroup> group;
        for (int32_t g = 0; g < op.group; ++g) {
          const BoundOp& o = ops[i + static_cast<size_t>(g)];
          group[static_cast<size_t>(g)] = {.w = o.matrix, .bias = o.vec, .y = value(o.out)};
        }
        const std::span<const kernels::LinearOut> outs(group.data(), static_cast<size_t>(op.group));
        if (op.int8_buffer < 0) {
          kernels::linear_group(in(0), n, outs, pool,
                                op.xquant == kernels::XQuant::kBF16 ? op.xquant : kernels::XQuant::kNone);
        } else {  // int8 activations: rows numbered as the input value's rows
          kernels::Int8Input& xq = b.int8[static_cast<size_t>(op.int8_buffer)];
          // A value made before the suffix was reduced to the kept rows: its buffer, filled
          // for all N rows, no longer lines up, so the suffix quantizes those rows again.
          const bool requantize = n < N && !op.in_from_suffix[0];
          const float* x = in(0);
          if (op.int8_fill || requantize) kernels::quantize_int8(x, n, op.matrix, xq, 0);
          kernels::linear_group(xq, 0, n, outs, pool);
        }
        break;
      }
      case OpKind::kRope: kernels::rope(in(0), b.positions.data(), n, op.rope, out, pool); break;
      case OpKind::kAttend: {
        const float* q = in(0);
        const float* k = op.writes_cache ? in(1) : nullptr;  // [N, kv_heads * head_dim]
        const float* v = op.writes_cache ? in(2) : nullptr;
        const int64_t qw = m.width(op.in[0]);
        for (const EntryRows& e : entries) {  // each entry against its own caches
          const kernels::KvStorage& kv = e.caches->storage(op.cache_id);
          if (op.writes_cache) {
            const int64_t kw = m.width(op.in[1]), vw = m.width(op.in[2]);
            kernels::kv_write(k + e.row0 * kw, v + e.row0 * vw, e.rows, e.p0, kv);
          }
          kernels::attend(op.attend, q + e.row0 * qw, e.rows, e.p0, kv, out + e.row0 * op.width, pool);
        }
        break;
      }
      case OpKind::kAdd: kernels::add(in(0), in(1), elems, out, pool); break;
      case OpKind::kMul: kernels::mul(in(0), in(1), elems, out, pool); break;
      case OpKind::kScale: kernels::scale(in(0), elems, op.scalar, out, pool); break;
      case OpKind::kAct: kernels::act(in(0), elems, op.act, out, pool); break;
      case OpKind::kActMul: kernels::act_mul(in(0), in(1), elems, op.act, out, pool); break;
      case OpKind::kSoftcap: kernels::softcap(in(0), elems, op.scalar, out, pool); break;
      case OpKind::kSlice: kernels::slice_columns(in(0), n, m.width(op.in[0]), op.dim, op.width, out); break;
      case OpKind::kStreamMix: {
        const float* x = in(0);
        kernels::stream_mix(x, op.vec ? op.vec : in(1), n, op.mix, out);
        break;
      }
      case OpKind::kConcat: {  // G groups of a row: the row as G rows of a group's columns
        const float* a = in(0);
        const int64_t groups = op.norm_groups;
        kernels::concat_columns(a, m.width(op.in[0]) / groups, in(1), m.width(op.in[1]) / groups, n * groups, out);
        break;
      }
      case OpKind::kXielu: kernels::xielu(in(0), elems, op.xielu, out, pool); break;
      case OpKind::kHeadLinear: kernels::head_linear(in(0), n, op.norm_groups, op.dim, op.matrix, out, pool); break;
      case OpKind::kRmsMatch: {
        const float* x = in(0);
        kernels::rms_match(x, in(1), n, op.width / op.dim, op.dim, op.eps, out);
        break;
      }
      case OpKind::kEmbeddingOverlay: kernels::embedding_overlay(in(0), ids, n, op.matrix, op.dim, out); break;
      case OpKind::kGaussianTopK: kernels::gaussian_top_k(in(0), n, op.width, op.scalar, out); break;
      case OpKind::kMoe: {
        const float* x = in(0);
        kernels::moe(m.moe(op.moe), x, in(1), n, out, b.moe, pool);
        break;
      }
    }
    if (b.op_times && op.group > 0) {
      // A group's time is shared by its linears in proportion to their rows (one width).
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - op_start).count();
      double rows = 0;
      for (int32_t g = 0; g < op.group; ++g) rows += static_cast<double>(ops[i + static_cast<size_t>(g)].matrix.rows);
      for (int32_t g = 0; g < op.group; ++g) {
        const size_t k = i + static_cast<size_t>(g);
        b.op_times->seconds[k] += op.group == 1 ? seconds : seconds * static_cast<double>(ops[k].matrix.rows) / rows;
        ++b.op_times->calls[k];
      }
    }
  }
}

}  // namespace og::runtime
