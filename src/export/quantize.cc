#include "export/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "program/program_file.h"

namespace og::exporter {
namespace {

constexpr int32_t kMaxGroup = 1024;

struct Levels {
  int lo, hi;  // the codes' range
};
Levels levels(QuantBits b) { return b == QuantBits::k8 ? Levels{-127, 127} : Levels{-8, 7}; }

// Squared error of the group under the stored (f16) scale s and codes q.
double group_error(const float* w, const int8_t* q, int32_t n, float s) {
  double e = 0;
  for (int32_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(w[i]) - static_cast<double>(s) * q[i];
    e += d * d;
  }
  return e;
}

// llama.cpp's reference rounding: codes from the exact scale d (through its reciprocal,
// as ggml does), scale stored as f16(d).
float round_to_nearest(const float* w, int32_t n, QuantBits bits, int8_t* q) {
  float amax = 0, max = 0;
  for (int32_t i = 0; i < n; ++i)
    if (amax < std::fabs(w[i])) {
      amax = std::fabs(w[i]);
      max = w[i];
    }
  if (bits == QuantBits::k8) {
    const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
    for (int32_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::roundf(w[i] * id));
    return fp16_to_float(float_to_fp16(d));
  }
  const float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
  for (int32_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(w[i] * id + 8.5f))) - 8);
  return fp16_to_float(float_to_fp16(d));
}

// Codes for a given (already f16) scale: nearest level, clamped.
void codes_for(const float* w, int32_t n, float s, Levels l, int8_t* q) {
  const float inv = s != 0 ? 1.0f / s : 0.0f;
  for (int32_t i = 0; i < n; ++i)
    q[i] = static_cast<int8_t>(std::clamp(static_cast<int>(std::lrintf(w[i] * inv)), l.lo, l.hi));
}

// The least-squares scale for fixed codes, rounded to f16 (0 if all codes are 0).
float refit(const float* w, const int8_t* q, int32_t n) {
  double wq = 0, qq = 0;
  for (int32_t i = 0; i < n; ++i) {
    wq += static_cast<double>(w[i]) * q[i];
    qq += static_cast<double>(q[i]) * q[i];
  }
  return qq > 0 ? fp16_to_float(float_to_fp16(static_cast<float>(wq / qq))) : 0.0f;
}

// kFit: the start given by llama.cpp's rounding and (4w) two alternative starts, each
// refit once; the lowest error wins.
float fit(const float* w, int32_t n, QuantBits bits, int8_t* best_q) {
  const Levels l = levels(bits);
  float best_s = round_to_nearest(w, n, bits, best_q);
  double best_e = group_error(w, best_q, n, best_s);
  int8_t q[kMaxGroup];
  auto consider = [&](float s) {
    if (!(std::isfinite(s) && s != 0)) return;
    codes_for(w, n, s, l, q);
    for (int pass = 0; pass < 2; ++pass) {  // the codes' error, then their refit scale's
      const double e = group_error(w, q, n, s);
      if (e < best_e) {
        best_e = e;
        best_s = s;
        std::memcpy(best_q, q, static_cast<size_t>(n));
      }
      if (pass == 0) s = refit(w, q, n);
      if (!(std::isfinite(s) && s != 0)) return;
    }
  };
  consider(refit(w, best_q, n));
  if (bits == QuantBits::k4) {
    float amax = 0, max = 0;
    for (int32_t i = 0; i < n; ++i)
      if (amax < std::fabs(w[i])) {
        amax = std::fabs(w[i]);
        max = w[i];
      }
    // Scales that map the extreme value inside the code range instead of onto its end:
    // groups with one large value lose less on the others.
    for (float c : {-7.0f, 7.0f}) consider(fp16_to_float(float_to_fp16(max / c)));
  }
  return best_s;
}

// Nibble (q + 8) of value c of row r in a row-major Q4 matrix (program.fbs): in its group,
// byte k holds value k in its low nibble and value k + group / 2 in its high one.
uint8_t row_major_nibble(std::span<const uint8_t> codes, int64_t cols, int32_t group, int64_t r, int64_t c) {
  const int64_t half = group / 2, k = c % group;
  const uint8_t byte = codes[static_cast<size_t>(r * cols / 2 + c / group * half + k % half)];
  return k < half ? byte & 15 : byte >> 4;
}

}  // namespace

Result<QuantBits> parse_quant_bits(const std::string& s, const char* flag) {
  if (s.empty() || s == "none") return QuantBits::kNone;
  if (s == "8w") return QuantBits::k8;
  if (s == "4w") return QuantBits::k4;
  return usage_error("{} '{}': expected 4w or 8w", flag, s);
}

void quantize_row(const float* w, int64_t cols, int32_t group, QuantBits bits, QuantMethod method, uint8_t* codes,
                  uint16_t* scales) {
  int8_t q[kMaxGroup];
  for (int64_t g0 = 0; g0 < cols; g0 += group) {
    const float* wg = w + g0;
    const float s = method == QuantMethod::kFit ? fit(wg, group, bits, q) : round_to_nearest(wg, group, bits, q);
    scales[g0 / group] = float_to_fp16(s);
    if (bits == QuantBits::k8) {
      std::memcpy(codes + g0, q, static_cast<size_t>(group));
    } else {
      uint8_t* b = codes + g0 / 2;
      for (int32_t j = 0; j < group / 2; ++j)
        b[j] = static_cast<uint8_t>((q[j] + 8) | ((q[j + group / 2] + 8) << 4));
    }
  }
}

Interleaved interleave_rows(QuantBits bits, std::span<const uint8_t> codes, std::span<const uint16_t> scales, int64_t rows,
                            int64_t cols, int32_t group) {
  constexpr int64_t B = program::kRowBlock;
  const bool q4 = bits == QuantBits::k4;
  const int64_t groups = cols / group, chunks = group / (q4 ? 8 : 4), stored = program::stored_rows(rows, B);
  Interleaved out;
  // Padding: q 0 (Q4 code 8 in both nibbles, Q8 code 0), scale +0.
  out.codes.assign(static_cast<size_t>(stored * (q4 ? cols / 2 : cols)), q4 ? 0x88 : 0);
  out.scales.assign(static_cast<size_t>(stored * groups), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / B, i = r % B;
    for (int64_t g = 0; g < groups; ++g) {
      out.scales[static_cast<size_t>((b * groups + g) * B + i)] = scales[static_cast<size_t>(r * groups + g)];
      for (int64_t u = 0; u < chunks; ++u) {
        uint8_t* chunk = &out.codes[static_cast<size_t>(((b * groups + g) * chunks + u) * 64)];
        const int64_t c0 = g * group + (q4 ? 8 : 4) * u;  // the chunk's first value
        for (int64_t j = 0; j < 4; ++j)
          chunk[4 * i + j] = q4 ? static_cast<uint8_t>(row_major_nibble(codes, cols, group, r, c0 + j) |
                                                       row_major_nibble(codes, cols, group, r, c0 + 4 + j) << 4)
                                : codes[static_cast<size_t>(r * cols + c0 + j)];
      }
    }
  }
  return out;
}

}  // namespace og::exporter
