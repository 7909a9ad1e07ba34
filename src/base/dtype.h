// Element types of tensors in checkpoints and programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace og {

// kF8E4M3: torch's float8_e4m3fn (1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no
// infinities, S.1111.111 is NaN; largest 448), as FP8 checkpoints store weights.
enum class DType : uint8_t { kF32, kF16, kBF16, kF64, kI8, kU8, kI16, kI32, kI64, kBool, kF8E4M3 };

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: return 8;
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: case DType::kF8E4M3: return 1;
  }
  return 0;
}

// safetensors spelling: F32, F16, BF16, F64, I8, U8, I16, I32, I64, BOOL, F8_E4M3.
inline std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kF64: return "F64";
    case DType::kI8: return "I8";
    case DType::kU8: return "U8";
    case DType::kI16: return "I16";
    case DType::kI32: return "I32";
    case DType::kI64: return "I64";
    case DType::kBool: return "BOOL";
    case DType::kF8E4M3: return "F8_E4M3";
  }
  return "?";
}

inline std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8, DType::kU8, DType::kI16,
                  DType::kI32, DType::kI64, DType::kBool, DType::kF8E4M3})
    if (dtype_name(t) == s) return t;
  return std::nullopt;
}

inline bool is_float_dtype(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64 || t == DType::kF8E4M3;
}

}  // namespace og
