// Shared by the kernels' translation units (not part of the kernels' interface): scalar
// element access, element sizes, and the argument structs passed to per-target code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/half.h"
#include "kernels/kernels.h"

namespace og::kernels {

inline size_t elem_size(StorageType t) { return t == StorageType::kF32 ? 4 : 2; }


// One element of f32/bf16/f16 data as float (exact).
inline float to_float(float v) { return v; }
inline float to_float(uint16_t v, StorageType t) { return t == StorageType::kBF16 ? bf16_to_float(v) : fp16_to_float(v); }

// One token's row of int8 activations as a SIMD target's int8 kernel reads it
// (linear_int8.cc): x's codes in the order that kernel reads them, zero-padded, then each
// group's scale d, then (where the kernel multiplies codes shifted by a constant c: Q4's
// nibble = code + 8, Q8 on VNNI code + 128) the -c sum q vectors its integer sums start
// from. Each part starts on a 64-byte boundary of the row.
struct Int8RowLayout {
  int64_t code_stride = 0;  // codes per row: int8 (x86) or int16 (elsewhere) elements
  int64_t d = 0;            // byte offset of the scales, f32 [cols / group_size]
  int64_t offsets = 0;      // byte offset of the offsets, int32 [offset_ints]
  int64_t offset_ints = 0;  // 0: the kernel needs none
  int32_t c = 0;            // the shift c (0: none)
  bool unit_is_chunk = false;  // one offset vector per chunk of W code bytes (else per group)
  int64_t bytes = 0;        // the whole row, a multiple of 64
};

// What shapes a target's layout: W the chunk a Q4 row is processed in (bytes on x86, int16
// lanes elsewhere), NF the int32 lanes of its vectors, whether codes are bytes (x86) and
// whether Q8 codes are made unsigned (VNNI).
struct Int8Target {
  int64_t W = 0, NF = 0;
  bool bytes = false, vnni = false;
};

// Element index of (row, col) in an interleaved f32 / bf16 / f16 matrix (kernels.h).
inline int64_t interleaved_float_index(const Matrix& m, int64_t row, int64_t col) {
  const int64_t P = m.type == StorageType::kF32 ? 1 : 2;
  return ((row / kRowBlock * m.cols / P + col / P) * kRowBlock + row % kRowBlock) * P + col % P;
}

inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// T tokens in the fewest blocks of at most max_tokens, as even as possible (the first
// `extra` blocks one token longer): 13 tokens of 12-token tiles go as 7 + 6, not 12 + 1,
// whose one-token block swept the whole panel again with a tile of two FMA chains and cost
// about as much as the 12 (one 8192 x 2048 bf16 linear on two threads: 1.95 ms at 13 tokens
// against 1.32 ms at 12). The kernels pack x and run their tiles in these blocks.
struct TokenBlocks {
  int64_t count, base, extra;
  TokenBlocks(int64_t T, int64_t max_tokens)
      : count((T + max_tokens - 1) / max_tokens), base(count ? T / count : 0), extra(count ? T % count : 0) {}
  int64_t start(int64_t i) const { return i * base + std::min(i, extra); }
  int64_t size(int64_t i) const { return base + (i < extra ? 1 : 0); }
};

inline Int8RowLayout int8_row_layout(StorageType type, int64_t cols, int64_t G, int32_t row_block, const Int8Target& t) {
  const bool q4 = type == StorageType::kQ4;
  const int64_t groups = cols / G, code_bytes = q4 ? cols / 2 : cols, group_bytes = q4 ? G / 2 : G;
  Int8RowLayout l;
  if (row_block != 0) {
    // Interleaved (kernels.h): one lane per weight row meets x's byte codes in their natural
    // order, 4 at a time, whatever the target; one offset -c sum q per group.
    l.code_stride = round_up(cols, 64);
    l.c = q4 ? 8 : t.vnni ? 128 : 0;
    l.offset_ints = groups;
    l.d = l.code_stride;
    l.offsets = round_up(l.d + 4 * groups, 64);
    l.bytes = round_up(l.offsets + 4 * groups, 64);
    return l;
  }
  // Q4: chunks of W bytes give W low-nibble values then W high-nibble values, the last
  // chunk padded to a whole one. Q8 on x86: natural order, padded to whole vectors.
  l.code_stride = q4 ? round_up(code_bytes, t.W) * 2 : t.bytes ? round_up(cols, t.W) : cols;
  l.c = q4 ? 8 : t.vnni ? 128 : 0;
  // One int32 vector per conversion unit: a group when a group spans whole chunks, else a chunk.
  l.unit_is_chunk = t.bytes && group_bytes < t.W;
  l.offset_ints = l.c ? (l.unit_is_chunk ? (code_bytes + t.W - 1) / t.W : groups) * t.NF : 0;
  l.d = round_up(l.code_stride * (t.bytes ? 1 : 2), 64);
  l.offsets = round_up(l.d + 4 * groups, 64);
  l.bytes = round_up(l.offsets + 4 * l.offset_ints, 64);
  return l;
}

struct LinearArgs {
  const float* x;      // [T, w.cols]
  int64_t T;
  Matrix w;            // [rows, cols]
  const float* bias;   // [rows] or null
  float* y;            // [T, rows]
  int64_t panel_rows;  // rows whose weights stay in cache while every token block uses them
  const uint8_t* xq = nullptr;  // int8 activations [T, xq_row_bytes], read instead of x
  int64_t xq_row_bytes = 0;
  const float* x_packed = nullptr;  // x [T, w.cols] packed per token block (linear_float_blocks.cc)
  bool bf16_x = false;                // XQuant::kBF16 (linear_float_blocks.cc packs x into x_pairs)
  const uint32_t* x_pairs = nullptr;  // x rounded to bf16, [T, w.cols / 2] pairs packed per token block
};

// Half the L2 cache (128 KB to 2 MB): the weights a prefill panel keeps in cache, the rest
// holding the tokens.
int64_t panel_bytes();

// A kernel computing output rows [r0, r1) of every token.
using RowsFn = void (*)(const LinearArgs&, int64_t, int64_t);

// linear.cc: runs rows_fn over all output rows of every linear in as (weights of one type
// and width, so one row costs the same in each), split in panels of one size over the pool:
// the tasks of all of them in one run, so small matrices (k, v) fill the pool beside a
// large one (q) and the threads meet once. Sets each one's panel_rows.
void run_linears(RowsFn rows_fn, std::span<LinearArgs> as, ThreadPool* pool);
// linear_float_blocks.cc: linears of interleaved f32 / bf16 / f16 weights over one x (the
// same type and width), x packed once for all of them.
void linear_float_blocks(std::span<LinearArgs> as, ThreadPool* pool);
// linear_quant.cc: rows [r0, r1) of every token for a kQ8 / kQ4 weight, and embedding rows.
void linear_quant_rows(const LinearArgs& a, int64_t r0, int64_t r1);
void embedding_quant(const int32_t* ids, int64_t T, const Matrix& table, float scale, float* y);

// Queries (tokens x query heads of one kv head) of one attention task at most.
inline constexpr int kMaxQueries = 64;

struct AttendArgs {
  const AttendParams* p;
  const float* q;      // [T, n_heads * head_dim]
  int64_t T, p0;
  const KvStorage* kv;
  float* out;          // [T, n_heads * head_dim]
  int32_t heads_per_task;   // query heads of one kv head per task
  int64_t tokens_per_task;  // consecutive tokens per task (heads x tokens <= kMaxQueries)
};

}  // namespace og::kernels
