#include "reference/mxfp4.h"

#include <cmath>

namespace og::reference {

double e2m1_value(uint8_t code) {
  const double sign = (code & 0x8) ? -1.0 : 1.0;
  const int exponent = (code >> 1) & 0x3, mantissa = code & 0x1;
  const double magnitude = exponent == 0 ? 0.5 * mantissa : (1.0 + 0.5 * mantissa) * std::pow(2.0, exponent - 1);
  return sign * magnitude;
}

Result<Mat> mxfp4_dequantize(const hf::TensorView& blocks, const hf::TensorView& scales, int64_t expert) {
  const auto& b = blocks.shape;
  if (blocks.dtype != DType::kU8 || scales.dtype != DType::kU8 || b.size() != 4 || b[3] != 16 ||
      scales.shape != std::vector<int64_t>{b[0], b[1], b[2]} || expert < 0 || expert >= b[0])
    return bad_input("reference: MXFP4 '{}' {} / '{}' {} (expert {}): expected U8 [E, R, G, 16] and U8 [E, R, G]",
                     blocks.name, blocks.shape_str(), scales.name, scales.shape_str(), expert);
  const int64_t R = b[1], G = b[2];
  Mat w(R, 32 * G);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t group = (expert * R + r) * G + g;
      const double scale = std::pow(2.0, static_cast<int>(scales.data[group]) - 127);
      for (int64_t j = 0; j < 16; ++j) {
        const uint8_t byte = blocks.data[group * 16 + j];
        w.at(r, 32 * g + 2 * j) = e2m1_value(byte & 0x0F) * scale;
        w.at(r, 32 * g + 2 * j + 1) = e2m1_value(byte >> 4) * scale;
      }
    }
  return w;
}

}  // namespace og::reference
