#include "base/npy.h"

#include <cstring>
#include <fstream>
#include <regex>

#include "base/mapped_file.h"

namespace og {

Status write_npy_f32(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  std::string dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ",";
    n *= d;
  }
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic(6) + version(2) + len(2) + header + '\n' padded to a multiple of 64
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return resource_error("{}: cannot create", path);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * 4));
  if (!out) return resource_error("{}: write failed", path);
  return Status::ok();
}

Result<NpyArray> read_npy_f32(const std::string& path) {
  OG_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path));
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad_input("{}: not a .npy file", path);
  uint16_t len;
  std::memcpy(&len, bytes.data() + 8, 2);
  if (10u + len > bytes.size()) return bad_input("{}: truncated header", path);
  const std::string header = bytes.substr(10, len);
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    return bad_input("{}: only little-endian float32 C-order arrays are read", path);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('shape': \(([0-9, ]*)\))"))) return bad_input("{}: no shape", path);
  NpyArray a;
  int64_t n = 1;
  std::string dims = m[1];
  for (size_t p = 0; p < dims.size();) {
    size_t q = dims.find(',', p);
    std::string d = dims.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (d.find_first_not_of(' ') != std::string::npos) {
      a.shape.push_back(std::stoll(d));
      n *= a.shape.back();
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }
  if (bytes.size() - 10 - len != static_cast<size_t>(n) * 4) return bad_input("{}: data size does not match shape", path);
  a.data.resize(static_cast<size_t>(n));
  std::memcpy(a.data.data(), bytes.data() + 10 + len, static_cast<size_t>(n) * 4);
  return a;
}

}  // namespace og
