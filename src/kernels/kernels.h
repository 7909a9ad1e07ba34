// Compute kernels: plain functions on pointers and shapes. They know nothing of programs,
// ops or models (DESIGN.md §5). Activations are f32 row-major [T, width]; weights are
// row-major [rows, cols] in f32, bf16 or f16 and are widened in registers, never copied.
#pragma once

#include <cstdint>

namespace og::kernels {

enum class ElemType : uint8_t { kF32, kF16, kBF16 };

struct Matrix {
  const void* data = nullptr;
  ElemType type = ElemType::kF32;
  int64_t rows = 0;   // out features / vocab
  int64_t cols = 0;   // in features / hidden
};

// y[T, w.rows] = x[T, w.cols] w^T (+ bias[w.rows])
void linear(const float* x, int64_t T, const Matrix& w, const float* bias, float* y);
// y[t] = table[ids[t]] * scale
void embedding(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y);
// rows of length dim: y = x / sqrt(mean(x^2) + eps) * w (w may be null: no weight)
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y);

struct RopeParams {
  int32_t n_heads = 0;
  int32_t head_dim = 0;
  int32_t rotary_dim = 0;      // first rotary_dim dims of each head rotate (rotate-half pairing)
  const float* inv_freq = nullptr;  // [rotary_dim / 2]
};
// y[T, n_heads * head_dim] = rope(x) at positions pos[T]
void rope(const float* x, const int32_t* pos, int64_t T, const RopeParams& p, float* y);

enum class Activation : uint8_t { kSilu, kGeluTanh };
void act(const float* x, int64_t n, Activation a, float* y);
void act_mul(const float* gate, const float* up, int64_t n, Activation a, float* y);  // act(gate) * up
void add(const float* a, const float* b, int64_t n, float* y);
void mul(const float* a, const float* b, int64_t n, float* y);
void scale(const float* x, int64_t n, float s, float* y);
void softcap(const float* x, int64_t n, float cap, float* y);  // cap * tanh(x / cap)
// y[T, width] = x[T, in_width][:, begin : begin + width]
void slice_columns(const float* x, int64_t T, int64_t in_width, int64_t begin, int64_t width, float* y);

// One cache's storage: K and V as [kv_heads, slots, head_dim] in `type`. Position p lives
// in slot p (flat) or p % slots (ring).
struct KvStorage {
  void* k = nullptr;
  void* v = nullptr;
  ElemType type = ElemType::kF32;
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
};
// out[T, n_heads * head_dim]: causal (and windowed) softmax attention of q [T, n_heads *
// head_dim] at positions p0.. over the keys stored in kv (one pass, running softmax).
void attend(const AttendParams& p, const float* q, int64_t T, int64_t p0, const KvStorage& kv, float* out);

inline constexpr int32_t kMaxHeadDim = 1024;

}  // namespace og::kernels
