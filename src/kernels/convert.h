// Element loads shared by the kernels.
#pragma once

#include <cstdint>

#include "base/half.h"
#include "kernels/kernels.h"
#include "kernels/kv_blocks.h"

namespace og::kernels {

// Value i of base: an array of t, or for the KV block types a row of blocks.
inline float load(const void* base, int64_t i, StorageType t) {
  switch (t) {
    case StorageType::kF32: return static_cast<const float*>(base)[i];
    case StorageType::kBF16: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case StorageType::kF16: return fp16_to_float(static_cast<const uint16_t*>(base)[i]);
    case StorageType::kQ8_0: return kv_block_value(static_cast<const KvQ8Block*>(base), i);
    case StorageType::kQ4_0: return kv_block_value(static_cast<const KvQ4Block*>(base), i);
    default: return 0;  // group-quantized weights are read by their own kernels
  }
}

inline void store(void* base, int64_t i, StorageType t, float v) {
  switch (t) {
    case StorageType::kF32: static_cast<float*>(base)[i] = v; break;
    case StorageType::kBF16: static_cast<uint16_t*>(base)[i] = float_to_bf16(v); break;
    case StorageType::kF16: static_cast<uint16_t*>(base)[i] = float_to_fp16(v); break;
    default: break;  // quantized types are written a block at a time (kv_blocks.h)
  }
}

}  // namespace og::kernels
