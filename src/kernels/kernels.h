// Compute kernels: plain functions on pointers and shapes. They know nothing of programs,
// ops or models (DESIGN.md §5). Activations are f32 row-major [T, width]; weights are
// [rows, cols] in f32, bf16 or f16, row-major or interleaved by blocks of 16 rows (below),
// and are widened in registers, never copied.
//
// Every kernel is written once with Highway and compiled for each SIMD target (AVX-512,
// AVX2, SSE4, NEON, portable fallback); the best target the CPU supports is chosen once per
// call at the kernel's entry. Kernels that take a ThreadPool split their output into fixed
// pieces (blocks of rows, kv heads) whose arithmetic does not depend on the thread count,
// the token count T or the piece size: results are bit-identical with 1 or N threads, and
// a row computed in a T-token step equals the same row computed alone. Null pool: run on
// the calling thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/storage_type.h"

namespace og {
class ThreadPool;
}

namespace og::kernels {

// Matrices and caches are stored as og::StorageType (base/storage_type.h). kQ8 / kQ4:
// group-quantized weights (matrices only), laid out as program.fbs describes:
// value = scale[row][col / group_size] * q; Q4 packs a group's values j and j + group/2
// into the low and high nibble of its byte j, q = nibble - 8.

// kQ4 / kQ8 with row_block = kRowBlock ("interleaved"): rows in blocks of 16, the last one
// padded with rows of q = 0 (Q4 code 8, Q8 code 0) and scale 0, so a block of rows is one
// sequential stream and one 32-bit lane of a vector sums one row's whole group:
//   Q4 codes: block b, group g, chunk u < group_size / 8 is 64 bytes at
//          ((b * groups + g) * (group_size / 8) + u) * 64; its byte 4i + j (i < 16, j < 4)
//          holds row 16b + i's value g * group_size + 8u + j in its low nibble and value
//          g * group_size + 8u + 4 + j in its high nibble (q = nibble - 8).
//   Q8 codes: chunk u < group_size / 4 at ((b * groups + g) * (group_size / 4) + u) * 64;
//          its byte 4i + j is row 16b + i's q of value g * group_size + 4u + j.
//   scales: f16 [ceil(rows / 16), groups, 16]: row 16b + i's scale of group g at
//          (b * groups + g) * 16 + i.
// Block b's codes are thus 16 rows' codes, from b * 16 * (code bytes per row).
//
// kF32 / kBF16 / kF16 with row_block = kRowBlock: rows in blocks of 16, the last one padded
// with zero rows, each block one sequential stream in which one 32-bit lane of a vector is
// one row. With P = 4 / element bytes values per lane (f32 1, bf16 / f16 2; cols a multiple
// of P), block b's column step p < cols / P is 64 bytes at (b * cols / P + p) * 64; its
// 32-bit word i holds row 16b + i's values of columns pP .. pP + P - 1, the first in the low
// half. Element index of (row 16b + i, column k): ((b * cols / P + k / P) * 16 + i) * P + k % P.
inline constexpr int32_t kRowBlock = 16;

struct Matrix {
  const void* data = nullptr;
  StorageType type = StorageType::kF32;
  int64_t rows = 0;   // out features / vocab
  int64_t cols = 0;   // in features / hidden
  const uint16_t* scales = nullptr;  // kQ8 / kQ4: f16 [rows, cols / group_size] (interleaved: above)
  int32_t group_size = 0;            // kQ8 / kQ4: a multiple of 32 dividing cols
  int32_t row_block = 0;             // 0 (row-major, as program.fbs) or kRowBlock (interleaved, above)
};

// Bytes one row of m occupies (quantized: its codes plus its f16 scales).
inline int64_t row_storage_bytes(const Matrix& m) {
  switch (m.type) {
    case StorageType::kQ8: return m.cols + 2 * m.cols / m.group_size;
    case StorageType::kQ4: return m.cols / 2 + 2 * m.cols / m.group_size;
    default: return m.cols * (m.type == StorageType::kF32 ? 4 : 2);
  }
}

// One weight of m as float (the scalar definition of every storage type, for tests).
float matrix_at(const Matrix& m, int64_t row, int64_t col);

// How a linear over kQ8 / kQ4 weights treats its input (ignored for float weights):
//   kNone: x in f32, each weight dequantized (q * s) and multiplied in f32.
//   kInt8: x quantized per token and weight group g as ggml's quantize_row_q8_0 does:
//          d = max|x_g| / 127 (f32), q_i = nearest-even(x_i * (1 / d)) (0 when d = 0);
//          y = sum_g s[g] * d_g * sum_{i in g} q_i c_i with c the stored code (integer
//          sums, exact). ggml's Q8_0 / Q4_0 x Q8_0 dot product at group 32, except that d
//          is not rounded to f16 (ggml stores it so; here it is never stored). A group
//          holding NaN or infinity has d = NaN: the outputs are not finite, as with kNone.
//   kBF16: (interleaved kBF16 weights only) x rounded to bf16 (nearest-even), and each
//          pair of columns (2p, 2p + 1) added as AVX512_BF16's vdpbf16ps adds it:
//          acc = fma(w[2p+1], x[2p+1], acc), then acc = fma(w[2p], x[2p], acc), pairs in
//          column order (products of bf16 values are exact in f32). ggml's bf16
//          arithmetic; the instruction where the CPU has it (one per 32 products against
//          two f32 FMAs and two widenings), else the same FMAs. The instruction flushes
//          subnormal inputs and results to zero, the FMAs do not: the two agree on every
//          input without subnormals (measured on Zen 4; Intel documents this order).
enum class XQuant : uint8_t { kNone, kInt8, kBF16 };

// y[T, w.rows] = x[T, w.cols] w^T (+ bias[w.rows]); a kQ8 / kQ4 weight as XQuant::kNone.
// Split by blocks of output rows; for T > 1 each block of weight rows is read from memory
// once per call and reused for all T tokens from cache. xquant: kNone, or kBF16 for an
// interleaved kBF16 weight (checked).
void linear(const float* x, int64_t T, const Matrix& w, const float* bias, float* y, ThreadPool* pool = nullptr,
            XQuant xquant = XQuant::kNone);
// One linear of a group over the same x: its weight [rows, cols], bias [rows] or null, and
// output y [T, rows].
struct LinearOut {
  Matrix w;
  const float* bias = nullptr;
  float* y = nullptr;
};
// Linears in one group at most (q, k and v; gate and up).
inline constexpr size_t kMaxGroup = 4;
// linear() of each of outs over one x, their weights of one type, width, group size and
// row block (checked): x packed or quantized once, and the rows of all of them in one run
// over the pool. Each y is bit-identical to linear()'s alone.
void linear_group(const float* x, int64_t T, std::span<const LinearOut> outs, ThreadPool* pool, XQuant xquant);
// A linear per group of columns (program.fbs HeadLinearAttrs): x [T, groups * x_stride],
// w [groups * out, in] (F32 / BF16 / F16; interleaved only with out a multiple of kRowBlock),
// y [T, groups * out] with y[t, g out + r] = sum_{j < in} w[g out + r, j] x[t, g x_stride + j].
// Each group's rows equal linear()'s of the same matrix rows over the group's columns.
void head_linear(const float* x, int64_t T, int64_t groups, int64_t x_stride, const Matrix& w, float* y,
                 ThreadPool* pool = nullptr);
// Whether kBF16 linears run on the CPU's vdpbf16ps (at the SIMD target dispatched now).
bool bf16_dot_native();
// Whether they also outrun the f32 FMAs an exact linear runs: vdpbf16ps's flops per second
// against vfmadd's on this core, measured once per SIMD target (peak.cc, about 2 ms). AMD Zen 5
// runs the dot products at twice the FMAs' flops; a Xeon without AMX (AVX512_BF16 on port 0
// alone) at half of them, so that exact bf16 prefill is 1.8x faster there.
bool bf16_dot_outruns_fma();

// XQuant::kInt8 in two calls, so that linears reading one value with one weight layout
// (q, k and v; gate and up) quantize it once: quantize_int8 writes x's rows into a buffer
// the caller owns and describes with Int8Input; linear reads them. The bytes are in the
// layout of the SIMD target chosen when quantizing, which Int8Input records with the
// target's kernel: a linear reads them with that kernel, whatever the target is by then.
struct Int8Input {
  uint8_t* data = nullptr;  // [rows, row_bytes], caller-owned
  int64_t row_bytes = 0;    // at least int8_row_bytes(w) for every weight w it serves
  // Set by quantize_int8: the weight layout the rows were made for, and their reader.
  StorageType type = StorageType::kF32;
  int64_t cols = 0;
  int32_t group_size = 0;
  int32_t row_block = 0;
  void (*reader)() = nullptr;
};
// Bytes of one token's row of quantize_int8's output for a kQ8 / kQ4 weight w, enough for
// every SIMD target.
int64_t int8_row_bytes(const Matrix& w);
// Quantizes x [T, w.cols] into rows [row0, row0 + T) of xq (sized >= row0 + T rows).
void quantize_int8(const float* x, int64_t T, const Matrix& w, Int8Input& xq, int64_t row0 = 0);
// y[T, w.rows] = the rows [row0, row0 + T) of xq times w^T (+ bias); xq as quantize_int8
// left it for a weight of w's type, cols and group size (checked).
void linear(const Int8Input& xq, int64_t row0, int64_t T, const Matrix& w, const float* bias, float* y,
            ThreadPool* pool = nullptr);
// The same for a group of linears (linear_group's rule) reading those rows.
void linear_group(const Int8Input& xq, int64_t row0, int64_t T, std::span<const LinearOut> outs, ThreadPool* pool);
// y[t] = table[ids[t]] * scale (ids past the table's last row read row 0)
void embedding(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y);
// rows of length dim: y = x / sqrt(mean(x^2) + eps) * w (w may be null: no weight)
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y, ThreadPool* pool = nullptr);
// rows of length dim: y = (x - mean(x)) / sqrt(var(x) + eps) * w + b, the population
// variance, as torch's LayerNorm (w, b may be null: none). With weight_groups G > 1, w and b
// hold G rows of dim and row r takes row r % G of them (a LayerNorm per head of [T, G * dim]).
void layer_norm(const float* x, int64_t rows, int64_t dim, const float* w, const float* b, float eps, float* y,
                ThreadPool* pool = nullptr, int64_t weight_groups = 1);

struct RopeParams {
  int32_t n_heads = 0;
  int32_t head_dim = 0;
  int32_t rotary_dim = 0;      // first rotary_dim dims of each head rotate (rotate-half pairing)
  const float* inv_freq = nullptr;  // [rotary_dim / 2]
  float scale = 1.0f;          // cos and sin times scale (YaRN's attention factor)
  // Optional second table [rotary_dim / 2] for positions >= long_from (LongRoPE's long
  // factors past the pretraining context); null: inv_freq at every position.
  const float* long_inv_freq = nullptr;
  int32_t long_from = 0;
};
// y[T, n_heads * head_dim] = rope(x) at positions pos[T]. The cos and sin of a step's
// positions are kept by the calling thread for the next calls with the same frequencies,
// scale and positions (q and k of a layer, every layer of one rope kind).
void rope(const float* x, const int32_t* pos, int64_t T, const RopeParams& p, float* y, ThreadPool* pool = nullptr);

// kGelu: the exact (erf) gelu; kRelu2: the squared ReLU, max(x, 0)^2
enum class Activation : uint8_t { kSilu, kGeluTanh, kTanh, kGelu, kRelu2 };
// The element-wise kernels split long arrays over the pool (an element's value does not
// depend on where it falls, so any split gives the same bits).
void act(const float* x, int64_t n, Activation a, float* y, ThreadPool* pool = nullptr);
void act_mul(const float* gate, const float* up, int64_t n, Activation a, float* y, ThreadPool* pool = nullptr);  // act(gate) * up
// The clamped SwiGLU (program.fbs ClampedSwiglu): g = min(gate, limit), u = clamp(up, -limit, limit),
// y = (u + 1) * g * sigmoid(alpha * g); a NaN in gate or up gives NaN (as torch.clamp).
// Scalar: it runs on the I-wide expert intermediates only, next to three matrix products.
struct ClampedSwiglu {
  float alpha = 1.702f;
  float limit = 7.0f;
};
void act_mul_clamped(const float* gate, const float* up, int64_t n, const ClampedSwiglu& c, float* y);
void add(const float* a, const float* b, int64_t n, float* y, ThreadPool* pool = nullptr);
void mul(const float* a, const float* b, int64_t n, float* y, ThreadPool* pool = nullptr);
void scale(const float* x, int64_t n, float s, float* y, ThreadPool* pool = nullptr);
void softcap(const float* x, int64_t n, float cap, float* y, ThreadPool* pool = nullptr);  // cap * tanh(x / cap)
// xIELU (program.fbs XieluAttrs): y = alpha_p x^2 + beta x for x > 0, else
// alpha_n (expm1(min(x, eps)) - x) + beta x; a NaN stays NaN. The coefficients are the
// effective ones (the checkpoint's softplus-parameterized scalars resolved at export).
struct XieluParams {
  float alpha_p = 0, alpha_n = 0, beta = 0, eps = 0;
};
void xielu(const float* x, int64_t n, const XieluParams& p, float* y, ThreadPool* pool = nullptr);
// y[T, width] = x[T, in_width][:, begin : begin + width]
void slice_columns(const float* x, int64_t T, int64_t in_width, int64_t begin, int64_t width, float* y);

// y[T, wa + wb] = [a[T, wa] | b[T, wb]]
void concat_columns(const float* a, int64_t wa, const float* b, int64_t wb, int64_t T, float* y);

// Per-token mixing of equal-width streams (mixing.cc): x [T, n_in * width] holds n_in
// streams; y [T, n_out * width] with y[t, j*width + h] = sum_i c[j*n_in + i] x[t, i*width + h],
// where c = coefs + t * n_out * n_in when coefs_per_token, else coefs for every token.
// Sums run in double in the order i = 0, 1, ...
struct StreamMixParams {
  int64_t width = 0;
  int64_t n_in = 0;
  int64_t n_out = 0;
  bool coefs_per_token = true;
};
void stream_mix(const float* x, const float* coefs, int64_t T, const StreamMixParams& p, float* y);
// Each `dim`-wide group of x [T, groups * dim] rescaled to the root-mean-square of
// ref [T, dim]: y = x * sqrt(mean(ref^2)) / sqrt(max(mean(x_group^2), eps)) (sums in double).
void rms_match(const float* x, const float* ref, int64_t T, int64_t groups, int64_t dim, float eps, float* y);
// y[t] = table[ids[t] - first_id] for ids in [first_id, first_id + table.rows), else x[t]
// (x, y [T, table.cols]).
void embedding_overlay(const float* x, const int32_t* ids, int64_t T, const Matrix& table, int64_t first_id, float* y);
// Per row of x [rows, dim]: y = max(x - (mean + multiplier * std), 0), std the population one
// (mean and std in double).
void gaussian_top_k(const float* x, int64_t rows, int64_t dim, float multiplier, float* y);

// Mixture of experts (moe.cc), per token row of x [T, H] with router logits [T, n_experts]:
// the top_k experts by logit (largest first, ties to the lower index) e_1..e_k, weights
// w_j from the scoring rule (softmax over all logits then pick, or softmax over the k picked;
// or kSigmoidTopK: w_j = sigmoid(r_{e_j}), the experts picked by sigmoid(r_e) + choice_bias[e]
// within the topk_group best of n_group groups; kSoftmaxTopK with a choice_bias or groups:
// picked by probability + choice_bias[e] within the best groups; program.fbs RouterScoring; in double),
// optionally renormalized to sum 1, times routed_scale and expert_scale[e_j]; then
//   y = sum_{j = 1..k in that order} w_j * f_e(x)   (+ shared)
//   f_e(x) = down_e(act(gate_e x + gate_bias_e, up_e x + up_bias_e)) + down_bias_e
// (absent biases are 0; act is act(g) * u, or the clamped SwiGLU when `clamped` is set)
// with the shared expert's MLP (times sigmoid(shared_expert_gate . x) if that is set) added
// last. Each expert's matrices are read once per call: the rows routed to an expert are
// gathered and go through its three linears together (kernels::linear, so each row's
// arithmetic does not depend on which other rows are there), and each row's k outputs are
// summed in f32 in top-k order. So a row's result is the same in any batch.
enum class RouterScoring : uint8_t { kSoftmaxTopK, kTopKSoftmax, kSigmoidTopK };
struct MoeParams {
  int64_t n_experts = 0;
  int64_t top_k = 0;
  RouterScoring scoring = RouterScoring::kSoftmaxTopK;
  bool normalize_top_k = false;
  float routed_scale = 1.0f;
  Activation act = Activation::kSilu;
  bool clamped = false;          // the experts' activation is act_mul_clamped(swiglu)
  ClampedSwiglu swiglu;
  const float* expert_scale = nullptr;  // [n_experts] or null
  // [n_experts] or null: added to the scores that pick the experts (kSigmoidTopK's sigmoids,
  // kSoftmaxTopK's probabilities), not to the weights.
  const float* choice_bias = nullptr;
  // kSigmoidTopK, kSoftmaxTopK: experts in n_group equal groups, each scored by the sum of its
  // group_top best choice keys; the experts picked within the topk_group best groups.
  int32_t n_group = 1, topk_group = 1, group_top = 2;
  float masked_key = 0.0f;  // the choice key of an expert outside the kept groups (0 or -inf)
  const float* gate_bias = nullptr;     // [n_experts, I] or null (routed experts only)
  const float* up_bias = nullptr;       // [n_experts, I] or null
  const float* down_bias = nullptr;     // [n_experts, H] or null
  const Matrix* gate = nullptr;  // [n_experts] each [I, H]
  const Matrix* up = nullptr;    // [n_experts] each [I, H]
  const Matrix* down = nullptr;  // [n_experts] each [H, I]
  bool has_shared = false;
  Matrix shared_gate, shared_up, shared_down;  // [Is, H], [Is, H], [H, Is]
  bool has_shared_expert_gate = false;
  Matrix shared_expert_gate;                   // [1, H]
  XQuant xquant = XQuant::kNone;               // for the quantized expert matrices
};
// Working memory of moe() (grown on demand, reused across calls) and what the last call did.
struct MoeScratch {
  std::vector<int32_t> chosen;        // [T, top_k] expert per slot
  std::vector<float> weight;          // [T, top_k]
  std::vector<int32_t> slots;         // slots grouped by expert, tokens ascending
  std::vector<int64_t> first;         // [n_experts + 1] start of each expert's slots
  std::vector<float> xg, gate, up, h, out, shared;  // gathered rows and intermediates
  std::vector<float> slot_out;        // [T * top_k, H]
  std::vector<uint8_t> xq, hq;        // int8 inputs of the expert linears
  // Statistics of the last call: how many times each expert's matrices were read (at most
  // once per call by construction; tests check it) and how many experts were read.
  std::vector<int32_t> expert_reads;  // [n_experts]
  int64_t experts_read = 0;
};
void moe(const MoeParams& p, const float* x, const float* logits, int64_t T, float* y, MoeScratch& s,
         ThreadPool* pool = nullptr);

// One cache's storage: K and V as [kv_heads, slots] rows of head_dim values in `type`, each
// row kv_row_bytes(type, head_dim) bytes (block types: kv_blocks.h). Position p lives
// in slot p (flat) or p % slots (ring).
struct KvStorage {
  void* k = nullptr;
  void* v = nullptr;
  StorageType type = StorageType::kF32;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int64_t slots = 0;
  bool ring = false;
  int64_t slot(int64_t pos) const { return ring ? pos % slots : pos; }
};

// Writes k, v [T, kv_heads * head_dim] at positions p0 .. p0 + T - 1.
void kv_write(const float* k, const float* v, int64_t T, int64_t p0, const KvStorage& kv);

struct AttendParams {
  float scale = 1.0f;
  float softcap = 0.0f;      // 0: none
  int32_t window = 0;        // 0: full history; else keys j > p - window
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  // [n_heads] or null: a logit per query head in the softmax's denominator only (no value):
  // out = sum_j e^(s_j - m) v_j / (e^(sink - m) + sum_j e^(s_j - m)), m = max(sink, s_j).
  const float* sinks = nullptr;
};
// out[T, n_heads * head_dim]: causal (and windowed) softmax attention of q [T, n_heads *
// head_dim] at positions p0.. over the keys stored in kv (one pass, running softmax).
// Split by (block of tokens, kv head, group of query heads); K and V are read in place.
void attend(const AttendParams& p, const float* q, int64_t T, int64_t p0, const KvStorage& kv, float* out,
            ThreadPool* pool = nullptr);

inline constexpr int32_t kMaxHeadDim = 1024;

// Reads n floats once, split over the pool; returns their sum (so the read cannot be
// elided). For measuring memory bandwidth.
double stream_sum(const float* x, int64_t n, ThreadPool* pool = nullptr);

// The cores' arithmetic rate on the dispatched target, every thread of the pool at once:
// f32 vector FMAs (2 flops per lane) and the int8-activation kernel's byte multiply-adds
// (2 ops per byte product), each on registers only. Best of 5 rounds of about 50 ms.
struct ComputePeak {
  double f32_flop_s = 0;
  double int8_op_s = 0;
  double bf16_flop_s = 0;  // XQuant::kBF16's arithmetic: vdpbf16ps, else f32 FMAs
  int threads = 0;
};
ComputePeak compute_peak(ThreadPool* pool = nullptr);

// Name of the SIMD target the kernels dispatch to ("AVX3", "AVX2", "NEON", ...).
const char* simd_target();
// Dispatches to targets no better than `name` from now on (for comparisons, e.g. "AVX2" on
// an AVX-512 machine); false if no compiled target has that name.
bool limit_simd_target(const char* name);

}  // namespace og::kernels
