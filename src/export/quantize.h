// Group-wise weight quantization at export (storage described in program.fbs).
//
// Each row is cut into groups of `group` values sharing one f16 scale s; a value is s * q,
// q an int8 in [-127, 127] (8w) or a 4-bit code in [-8, 7] (4w).
//
// kFit (what export uses) chooses s per group to minimize the group's squared error:
//   8w: s = amax / 127 rounded to f16, q = round(w / s), then s refit by least squares
//       for those q (s = sum(w q) / sum(q q)) and kept if it lowers the error;
//   4w: the same from three starts: s = m / -8 (m the value of largest magnitude, so it
//       maps exactly to the extra negative code, as llama.cpp's Q4_0 does), m / -7 and
//       m / 7 (m inside the code range); the lowest error wins. (Six more starts between
//       m / -7.5 and m / 6 lowered the error by 0.1% of itself and tripled the time.)
// kRoundToNearest reproduces llama.cpp's Q8_0 / Q4_0 reference rounding (group 32: the
// same bits as its quantize_row_q8_0_ref / quantize_row_q4_0_ref), to compare against.
// kFit's error is never above kRoundToNearest's on a group (it is one of the starts and
// refits only when that helps).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace og::exporter {

enum class QuantBits : uint8_t { kNone = 0, k8 = 8, k4 = 4 };
enum class QuantMethod : uint8_t { kFit, kRoundToNearest };

// "8w" / "4w" / "" (none); anything else is a usage error naming `flag`.
Result<QuantBits> parse_quant_bits(const std::string& s, const char* flag);

// Quantizes one row of `cols` values (cols % group == 0, group even). Writes cols bytes
// (8w) or cols / 2 bytes (4w) of codes and cols / group f16 scales.
void quantize_row(const float* w, int64_t cols, int32_t group, QuantBits bits, QuantMethod method, uint8_t* codes,
                  uint16_t* scales);

// A Q4 / Q8 matrix in the interleaved layout (program.fbs, row_block = program::kRowBlock):
// stored_rows(rows, 16) rows of codes and of f16 scales, in block order.
struct Interleaved {
  std::vector<uint8_t> codes;    // [stored rows * code bytes per row]
  std::vector<uint16_t> scales;  // [stored rows / 16, groups, 16]
};
// The interleaved layout of a row-major matrix as quantize_row writes it (codes [rows,
// cols / 2] for 4w, [rows, cols] for 8w; scales [rows, cols / group]): the same q and scale
// for every weight, moved, plus padding rows of q 0 and scale 0. 4w nibbles are unpacked
// and paired anew (values 8u + j and 8u + 4 + j share a byte where the row-major layout
// pairs j and j + group / 2); 8w bytes move as they are.
Interleaved interleave_rows(QuantBits bits, std::span<const uint8_t> codes, std::span<const uint16_t> scales, int64_t rows,
                            int64_t cols, int32_t group);

}  // namespace og::exporter
