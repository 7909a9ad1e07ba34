// Saving a session's caches and position to a file and restoring them, so a long system
// prompt is prefilled once. The file is tied to one program (its checksum), versioned and
// checksummed; anything that does not match is refused before the session is touched.
//
//   "OGKVCACH" | version u32 | kv dtype u32 | program checksum u64 | length u64 |
//   n_caches u32 | per cache: slots u64, kv_heads u32, head_dim u32, rows u64 |
//   data: per cache, K then V, per kv head the first `rows` slots | XXH3-64 of all before
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/kernels.h"

namespace og::runtime {

inline constexpr uint32_t kCacheFileVersion = 1;

struct CacheImage {
  uint64_t program_checksum = 0;
  uint32_t kv_type = 0;  // kernels::ElemType
  int64_t length = 0;
  std::vector<kernels::KvStorage> caches;
};

// Writes the used rows of every cache (all slots of a ring, `length` rows of a flat cache).
Status write_cache_file(const std::string& path, const CacheImage& image);
// Reads into caches whose geometry must equal the file's; returns the stored length.
Result<int64_t> read_cache_file(const std::string& path, uint64_t program_checksum, uint32_t kv_type,
                                std::span<const kernels::KvStorage> caches);

}  // namespace og::runtime
