// NumPy .npy files (format 1.0, little-endian float32, C order): how `offgraph logits`
// hands logits to other tools and tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace og {

Status write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape);

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
Result<NpyArray> read_npy_f32(const std::string& path);

}  // namespace og
