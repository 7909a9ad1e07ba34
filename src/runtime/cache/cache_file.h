// Cache files: a session's caches and position saved to disk (so a long system prompt is
// prefilled once), and the prefix cache's snapshots (runtime/prefix_cache.h, `serve
// --cache-dir`), in one format. A file is tied to one program (its checksum) and kv dtype,
// versioned and checksummed; anything that does not match is refused before any cache is
// touched.
//
//   "OGKVCACH" | version u32 | kv dtype u32 | program checksum u64 | length u64 |
//   n_caches u32 | per cache: slots u64, kv_heads u32, head_dim u32, rows u64, window u64 (v2),
//   copies u32 (v3) | n_tokens u64 | tokens i32 [n_tokens] (v2; a snapshot's tokens, none for a
//   session) | data: per cache, K then V (V only where copies is 2), per kv head `rows` slots
//   from slot 0 | XXH3-64 of all before
//
// A cache whose V is K's memory (layout value_is_key: a latent attention cache) is written once,
// copies 1; read into a cache with two copies, its rows go to both. A file is written as the
// oldest version that expresses it: version 2 where every cache keeps two copies. Version 1 files (no windows,
// no tokens) and version 2 files (two copies of every cache) are still read.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/kernels.h"

namespace og::runtime {

inline constexpr uint32_t kCacheFileVersion = 3;

// The KV storage type as the file stores it: explicit codes, append-only (a code once
// written keeps its meaning; a new storage type takes the next one), independent of the
// kernels' enum order. 0 f32, 1 f16, 2 bf16 (the values files carried before the codes were
// spelled out). Callers pass and receive StorageType values; the file layer converts.
uint32_t kv_disk_code(StorageType t);
Result<StorageType> kv_type_of_disk_code(uint32_t code);

struct CacheImage {
  uint64_t program_checksum = 0;
  StorageType kv_type = StorageType::kF32;
  int64_t length = 0;
  // Rows written per cache: all slots of a ring, min(length, slots) of a flat cache. A cache
  // whose v is its k (the same memory) is written once.
  std::vector<kernels::KvStorage> caches;
  std::vector<int64_t> windows;     // [n_caches] or empty (all 0)
  std::span<const int32_t> tokens;  // the tokens the caches hold (a prefix snapshot), or empty
};

struct CacheFileHeader {
  uint32_t version = 0;
  StorageType kv_type = StorageType::kF32;
  int64_t length = 0;
  struct Cache {
    int64_t slots = 0;
    int32_t kv_heads = 0;
    int32_t head_dim = 0;
    int64_t rows = 0;    // slots stored, from slot 0
    int64_t window = 0;  // 0 in version 1
    int32_t copies = 2;  // 1: V is K, stored once (version 3)
  };
  std::vector<Cache> caches;
  std::vector<int32_t> tokens;
  uint64_t file_bytes = 0;  // the size the header implies: header, data and checksum
};

Status write_cache_file(const std::string& path, const CacheImage& image);

// Reads only the header (the file's first bytes, not its data): magic, version, program and kv
// dtype are checked, and the file's size against the header's (a truncated file is refused).
// Cheap: the prefix cache indexes a directory of snapshots with it at startup.
Result<CacheFileHeader> read_cache_header(const std::string& path, uint64_t program_checksum, StorageType kv_type);

// The storages a file's data goes to, given its header (the callback may refuse it); each must
// have the header's slots, kv heads and head dim, and receives `rows` slots from slot 0 (into
// K and V both where the file holds one copy).
using CacheDestinations = std::function<Result<std::vector<kernels::KvStorage>>(const CacheFileHeader&)>;
// Reads the whole file, verifying its checksum and header before the first byte is copied.
Result<CacheFileHeader> read_cache_file(const std::string& path, uint64_t program_checksum, StorageType kv_type,
                                        const CacheDestinations& destinations);

}  // namespace og::runtime
