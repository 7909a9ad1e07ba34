// Element loads shared by the kernels.
#pragma once

#include <cstdint>

#include "base/half.h"
#include "kernels/kernels.h"

namespace og::kernels {

inline float load(const void* base, int64_t i, StorageType t) {
  switch (t) {
    case StorageType::kF32: return static_cast<const float*>(base)[i];
    case StorageType::kBF16: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case StorageType::kF16: return fp16_to_float(static_cast<const uint16_t*>(base)[i]);
    default: return 0;  // quantized types hold weights, never K/V
  }
}

inline void store(void* base, int64_t i, StorageType t, float v) {
  switch (t) {
    case StorageType::kF32: static_cast<float*>(base)[i] = v; break;
    case StorageType::kBF16: static_cast<uint16_t*>(base)[i] = float_to_bf16(v); break;
    case StorageType::kF16: static_cast<uint16_t*>(base)[i] = float_to_fp16(v); break;
    default: break;
  }
}

}  // namespace og::kernels
