// Shared by the kernels' translation units (not part of the kernels' interface): scalar
// element access, element sizes, and the argument structs passed to per-target code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/half.h"
#include "kernels/kernels.h"

namespace og::kernels {

inline size_t elem_size(ElemType t) { return t == ElemType::kF32 ? 4 : 2; }


// One element of f32/bf16/f16 data as float (exact).
inline float to_float(float v) { return v; }
inline float to_float(uint16_t v, ElemType t) { return t == ElemType::kBF16 ? bf16_to_float(v) : fp16_to_float(v); }

// quantize_x's output for one linear call (linear_int8.cc): per token, x as int8 codes in
// the order the running target's kernel reads them, each group's scale d and, where the
// kernel multiplies codes shifted by a constant c (Q4: nibble = code + 8; Q8 on VNNI:
// code + 128), the groups' -c sum q laid out as the kernel's integer sums start.
struct Int8X {
  const int16_t* q = nullptr;   // token t at q + t * stride (Q4 on x86: int8, stride bytes)
  int64_t stride = 0;
  const float* d = nullptr;     // [T, cols / group_size]
  const int32_t* offsets = nullptr;  // per token, vectors of -c sum q (see linear_int8.cc)
  int64_t offset_stride = 0;         // int32s per token (0: no offsets)
  std::vector<int16_t> q_buf;
  std::vector<float> d_buf;
  std::vector<int32_t> offset_buf;
  // What the above was made from, so that linears reading the same x (q, k and v; gate and
  // up) quantize it once: the bits of x, the weight's layout and the target's function.
  std::vector<float> source;
  ElemType type = ElemType::kF32;
  int64_t cols = 0, group = 0;
  const void* made_by = nullptr;
};

struct LinearArgs {
  const float* x;      // [T, w.cols]
  int64_t T;
  Matrix w;            // [rows, cols]
  const float* bias;   // [rows] or null
  float* y;            // [T, rows]
  int64_t panel_rows;  // rows whose weights stay in cache while every token block uses them
  const Int8X* xq = nullptr;  // set: int8 activations (XQuant::kInt8), read instead of x
};

// linear_quant.cc: rows [r0, r1) of every token for a kQ8 / kQ4 weight, and embedding rows.
void linear_quant_rows(const LinearArgs& a, int64_t r0, int64_t r1);
// linear_int8.cc: the same with int8 activations (a.xq from quantize_x for this weight).
void linear_int8_rows(const LinearArgs& a, int64_t r0, int64_t r1);
void quantize_x(const float* x, int64_t T, const Matrix& w, Int8X& out);
void embedding_quant(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y);

struct AttendArgs {
  const AttendParams* p;
  const float* q;      // [T, n_heads * head_dim]
  int64_t T, p0;
  const KvStorage* kv;
  float* out;          // [T, n_heads * head_dim]
  int32_t heads_per_task;
};

}  // namespace og::kernels
