#include "testgen/random_fill.h"

#include <cmath>
#include <cstring>
#include <random>

#include "base/check.h"
#include "base/half.h"

namespace og::testgen {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Irwin-Hall: the sum of twelve uniforms on [0, 2^32) has mean 6 (2^32 - 1) and variance
// (2^64 - 1); centred and divided by 2^32 it is N(0, 1) to within what tests care about.
// Every step is exact: the sum fits in 36 bits and the division is by a power of two.
double irwin_hall_normal(std::mt19937_64& gen) {
  int64_t sum = 0;
  for (int i = 0; i < 6; ++i) {
    uint64_t u = gen();
    sum += static_cast<int64_t>(u >> 32) + static_cast<int64_t>(u & 0xffffffffull);
  }
  constexpr int64_t kMean = 6 * 0xffffffffll;
  return static_cast<double>(sum - kMean) * 0x1p-32;
}

}  // namespace

uint64_t tensor_seed(uint64_t seed, std::string_view name) {
  return splitmix64(splitmix64(seed) ^ fnv1a64(name));
}

std::vector<float> random_values(uint64_t seed, std::string_view name, size_t count, Init init) {
  std::mt19937_64 gen(tensor_seed(seed, name));
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    double z = irwin_hall_normal(gen);
    // std::fma rounds once, so no compiler contraction choice can change the result.
    out[i] = static_cast<float>(std::fma(init.stddev, z, init.mean));
  }
  return out;
}

std::vector<uint8_t> random_bytes(uint64_t seed, std::string_view name, size_t count, ByteRange range) {
  OG_CHECK(0 <= range.lo && range.lo <= range.hi && range.hi <= 255);
  std::mt19937_64 gen(tensor_seed(seed, name));
  const uint64_t n = static_cast<uint64_t>(range.hi - range.lo + 1);
  std::vector<uint8_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<uint8_t>(range.lo + static_cast<int>(gen() % n));
  return out;
}

std::vector<uint8_t> encode_values(const std::vector<float>& values, DType dtype) {
  const size_t width = dtype_size(dtype);
  std::vector<uint8_t> bytes(values.size() * width);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits = 0;
    switch (dtype) {
      case DType::kF32: std::memcpy(&bits, &values[i], 4); break;
      case DType::kBF16: bits = float_to_bf16(values[i]); break;
      case DType::kF16: bits = float_to_fp16(values[i]); break;
      default: OG_CHECK(false && "encode_values: unsupported dtype");
    }
    for (size_t b = 0; b < width; ++b) bytes[i * width + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  return bytes;
}

}  // namespace og::testgen
