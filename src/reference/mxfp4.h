// MXFP4 expert matrices as transformers dequantizes them (integrations/mxfp4.py
// convert_moe_packed_tensors): blocks U8 [E, R, G, 16], scales U8 [E, R, G]; expert e's
// matrix W [R, 32 G] has W[r, 32 g + 2 j] from the low nibble of blocks[e, r, g, j] and
// W[r, 32 g + 2 j + 1] from the high one, each an e2m1 code times 2^(scales[e, r, g] - 127).
// Written from the e2m1 bit layout (sign, 2-bit exponent with bias 1, 1-bit mantissa), not
// from a table, so that it checks the exporter's table.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "hf/safetensors.h"
#include "reference/toolkit.h"

namespace og::reference {

// The value of one e2m1 code (0..15).
double e2m1_value(uint8_t code);

// Expert e's [R, 32 G] matrix (out-major, as nn.Linear stores weights). The tensors must be
// U8 of the shapes above; errors name them.
Result<Mat> mxfp4_dequantize(const hf::TensorView& blocks, const hf::TensorView& scales, int64_t expert);

}  // namespace og::reference
