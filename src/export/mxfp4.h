// MXFP4 (OCP microscaling FP4) as transformers' mxfp4 integration stores expert matrices
// (integrations/mxfp4.py convert_moe_packed_tensors): blocks U8 [E, R, G, 16] hold two e2m1
// codes per byte, low nibble first, and scales U8 [E, R, G] an e8m0 exponent (bias 127) per
// group of 32 values along a row. Expert e's matrix is [R, 32 G]:
//   W[r, 32 g + 2 j + h] = kFp4Values[nibble h of blocks[e, r, g, j]] * 2^(scales[e, r, g] - 127)
// Every such value is exact in f32 (and in bf16, transformers' default dtype).
#pragma once

#include <cstdint>

namespace og::exporter {

inline constexpr float kFp4Values[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
inline constexpr uint8_t kMxfp4NanScale = 0xFF;  // e8m0's NaN: refused at export

// W[r, c] of expert e (see above); R rows, G groups per row.
float mxfp4_value(const uint8_t* blocks, const uint8_t* scales, int64_t R, int64_t G, int64_t e, int64_t r, int64_t c);

}  // namespace og::exporter
