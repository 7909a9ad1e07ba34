// The KV cache's block-quantized rows (StorageType kQ8_0 / kQ4_0), GGUF's q8_0 and q4_0
// blocks: 32 consecutive values of a row (along head_dim) share one fp16 scale d.
//   q8_0: value = d * q, q int8 in [-127, 127]; d = max|x| / 127.
//   q4_0: value = d * (n - 8), n a nibble in [0, 15]; d = x_m / -8 where x_m is the value of
//         largest magnitude (its sign kept), so x_m itself is stored exactly as n = 0.
//         Byte j holds value j in its low nibble and value j + 16 in its high nibble.
// A row of head_dim values is ceil(head_dim / 32) blocks; a partial last block quantizes
// zeros past head_dim. Rows are quantized once, when kv_write stores them (scalar code, so
// every target writes the same bytes), and read by dequantizing in registers: a stored value
// reads as the same float wherever it is read, which keeps decode == prefill exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "base/half.h"
#include "base/storage_type.h"

namespace og::kernels {

struct KvQ8Block {
  uint16_t d;  // fp16 scale
  int8_t q[kKvBlockValues];
};
struct KvQ4Block {
  uint16_t d;  // fp16 scale
  uint8_t q[kKvBlockValues / 2];
};
static_assert(sizeof(KvQ8Block) == kv_block_bytes(StorageType::kQ8_0));
static_assert(sizeof(KvQ4Block) == kv_block_bytes(StorageType::kQ4_0));

// Quantizes x [n] (n <= 32; the rest of the block is zeros) into one block.
inline void quantize_kv_block(const float* x, int64_t n, KvQ8Block& b) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
  b.d = float_to_fp16(d);
  for (int64_t i = 0; i < kKvBlockValues; ++i)
    b.q[i] = i < n ? static_cast<int8_t>(std::clamp<long>(std::lround(x[i] * id), -127, 127)) : 0;
}

inline void quantize_kv_block(const float* x, int64_t n, KvQ4Block& b) {
  float amax = 0, max = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  const float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
  b.d = float_to_fp16(d);
  auto nibble = [&](int64_t i) -> uint8_t {
    if (i >= n) return 8;  // zero
    const float t = x[i] * id + 8.5f;
    return static_cast<uint8_t>(t >= 15.0f ? 15 : t >= 0.0f ? static_cast<int>(t) : 0);  // NaN reads 0
  };
  for (int64_t j = 0; j < kKvBlockValues / 2; ++j) b.q[j] = static_cast<uint8_t>(nibble(j) | nibble(j + 16) << 4);
}

// Value i of a row of blocks.
inline float kv_block_value(const KvQ8Block* row, int64_t i) {
  const KvQ8Block& b = row[i / kKvBlockValues];
  return fp16_to_float(b.d) * static_cast<float>(b.q[i % kKvBlockValues]);
}
inline float kv_block_value(const KvQ4Block* row, int64_t i) {
  const KvQ4Block& b = row[i / kKvBlockValues];
  const int64_t j = i % kKvBlockValues;
  const int n = j < 16 ? b.q[j] & 0xF : b.q[j - 16] >> 4;
  return fp16_to_float(b.d) * static_cast<float>(n - 8);
}

// Quantizes a row x [head_dim] into blocks at dst (kv_row_bytes(type, head_dim) bytes).
template <typename Block>
void quantize_kv_row(const float* x, int64_t head_dim, Block* dst) {
  for (int64_t i = 0; i < head_dim; i += kKvBlockValues)
    quantize_kv_block(x + i, std::min<int64_t>(kKvBlockValues, head_dim - i), dst[i / kKvBlockValues]);
}

}  // namespace og::kernels
