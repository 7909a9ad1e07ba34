#include "export/mxfp4.h"

#include <cmath>

namespace og::exporter {

float mxfp4_value(const uint8_t* blocks, const uint8_t* scales, int64_t R, int64_t G, int64_t e, int64_t r, int64_t c) {
  const int64_t group = (e * R + r) * G + c / 32;     // [E, R, G]
  const uint8_t byte = blocks[group * 16 + (c % 32) / 2];  // [E, R, G, 16]
  const uint8_t code = c % 2 == 0 ? byte & 0x0F : byte >> 4;
  return std::ldexp(kFp4Values[code], static_cast<int>(scales[group]) - 127);
}

}  // namespace og::exporter
