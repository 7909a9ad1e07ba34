#include "runtime/cache/cache_file.h"

#include <xxhash.h>

#include <cstring>
#include <fstream>

#include "base/mapped_file.h"

namespace og::runtime {
namespace {

constexpr char kMagic[8] = {'O', 'G', 'K', 'V', 'C', 'A', 'C', 'H'};

size_t elem_size(kernels::ElemType t) { return t == kernels::ElemType::kF32 ? 4 : 2; }

int64_t used_rows(const kernels::KvStorage& kv, int64_t length) { return kv.ring ? kv.slots : std::min(length, kv.slots); }

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : b_(bytes), path_(path) {}
  template <typename T>
  Result<T> get(const char* what) {
    if (pos_ + sizeof(T) > b_.size()) return bad_input("{}: truncated at {}", path_, what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  size_t remaining() const { return b_.size() - pos_; }
  Status read(void* dst, size_t n) {
    if (pos_ + n > b_.size()) return bad_input("{}: truncated in the cache data", path_);
    std::memcpy(dst, b_.data() + pos_, n);
    pos_ += n;
    return Status::ok();
  }

 private:
  const std::string& b_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

Status write_cache_file(const std::string& path, const CacheImage& img) {
  std::string out(kMagic, 8);
  put<uint32_t>(out, kCacheFileVersion);
  put<uint32_t>(out, img.kv_type);
  put<uint64_t>(out, img.program_checksum);
  put<uint64_t>(out, static_cast<uint64_t>(img.length));
  put<uint32_t>(out, static_cast<uint32_t>(img.caches.size()));
  for (const auto& kv : img.caches) {
    put<uint64_t>(out, static_cast<uint64_t>(kv.slots));
    put<uint32_t>(out, static_cast<uint32_t>(kv.kv_heads));
    put<uint32_t>(out, static_cast<uint32_t>(kv.head_dim));
    put<uint64_t>(out, static_cast<uint64_t>(used_rows(kv, img.length)));
  }
  for (const auto& kv : img.caches) {
    const size_t row = static_cast<size_t>(kv.head_dim) * elem_size(kv.type);
    const size_t rows = static_cast<size_t>(used_rows(kv, img.length));
    for (const void* base : {static_cast<const void*>(kv.k), static_cast<const void*>(kv.v)})
      for (int32_t h = 0; h < kv.kv_heads; ++h)
        out.append(static_cast<const char*>(base) + static_cast<size_t>(h) * kv.slots * row, rows * row);
  }
  put<uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return resource_error("{}: cannot create", path);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) return resource_error("{}: write failed", path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return resource_error("{}: cannot rename {}", path, tmp);
  return Status::ok();
}

Result<int64_t> read_cache_file(const std::string& path, uint64_t program_checksum, uint32_t kv_type,
                                std::span<const kernels::KvStorage> caches) {
  OG_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path));
  if (bytes.size() < 8 + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return bad_input("{}: not an offgraph cache file", path);
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored)
    return bad_input("{}: checksum mismatch; the cache file is corrupt", path);
  bytes.resize(bytes.size() - 8);
  Reader r(bytes, path);
  OG_TRY(r.get<uint64_t>("magic").status());
  OG_ASSIGN_OR_RETURN(uint32_t version, r.get<uint32_t>("version"));
  if (version != kCacheFileVersion) return bad_input("{}: cache file version {} is not supported", path, version);
  OG_ASSIGN_OR_RETURN(uint32_t type, r.get<uint32_t>("kv dtype"));
  OG_ASSIGN_OR_RETURN(uint64_t program, r.get<uint64_t>("program checksum"));
  if (program != program_checksum)
    return bad_input("{}: the cache was saved for a different program ({:016x}, this one is {:016x})", path, program,
                     program_checksum);
  if (type != kv_type) return bad_input("{}: the cache was saved with another --kv-dtype", path);
  OG_ASSIGN_OR_RETURN(uint64_t length, r.get<uint64_t>("length"));
  OG_ASSIGN_OR_RETURN(uint32_t n, r.get<uint32_t>("cache count"));
  if (n != caches.size()) return bad_input("{}: {} caches, the session has {}", path, n, caches.size());
  std::vector<uint64_t> rows(n);
  for (uint32_t c = 0; c < n; ++c) {
    OG_ASSIGN_OR_RETURN(uint64_t slots, r.get<uint64_t>("slots"));
    OG_ASSIGN_OR_RETURN(uint32_t heads, r.get<uint32_t>("kv heads"));
    OG_ASSIGN_OR_RETURN(uint32_t dim, r.get<uint32_t>("head dim"));
    OG_ASSIGN_OR_RETURN(rows[c], r.get<uint64_t>("rows"));
    const auto& kv = caches[c];
    if (slots != static_cast<uint64_t>(kv.slots) || heads != static_cast<uint32_t>(kv.kv_heads) ||
        dim != static_cast<uint32_t>(kv.head_dim) || rows[c] != static_cast<uint64_t>(used_rows(kv, static_cast<int64_t>(length))) ||
        length > static_cast<uint64_t>(kv.ring ? INT64_MAX : kv.slots))
      return bad_input("{}: cache {} geometry differs from this session's (was it saved with another --max-ctx-len?)", path, c);
  }
  // All checks happen before the first byte is copied: a refused file changes nothing.
  uint64_t data = 0;
  for (uint32_t c = 0; c < n; ++c)
    data += 2 * rows[c] * static_cast<uint64_t>(caches[c].kv_heads) * caches[c].head_dim * elem_size(caches[c].type);
  if (data != r.remaining())
    return bad_input("{}: {} bytes of cache data, the header describes {}", path, r.remaining(), data);
  for (uint32_t c = 0; c < n; ++c) {
    const auto& kv = caches[c];
    const size_t row = static_cast<size_t>(kv.head_dim) * elem_size(kv.type);
    for (void* base : {kv.k, kv.v})
      for (int32_t h = 0; h < kv.kv_heads; ++h)
        OG_TRY(r.read(static_cast<char*>(base) + static_cast<size_t>(h) * kv.slots * row, rows[c] * row));
  }
  return static_cast<int64_t>(length);
}

}  // namespace og::runtime
