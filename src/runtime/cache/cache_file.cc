#include "runtime/cache/cache_file.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/mapped_file.h"

namespace og::runtime {
namespace {

constexpr char kMagic[8] = {'O', 'G', 'K', 'V', 'C', 'A', 'C', 'H'};
constexpr size_t kHeadRead = 64 << 10;  // a header (with its tokens) usually fits in this


int64_t used_rows(const kernels::KvStorage& kv, int64_t length) { return kv.ring ? kv.slots : std::min(length, kv.slots); }

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& path) : b_(bytes), path_(path) {}
  template <typename T>
  Result<T> get(const char* what) {
    if (pos_ + sizeof(T) > b_.size()) return bad_input("{}: truncated at {}", path_, what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return b_.size() - pos_; }
  Status read(void* dst, size_t n) {
    if (pos_ + n > b_.size()) return bad_input("{}: truncated in the cache data", path_);
    if (n == 0) return Status::ok();  // dst may be the null data() of an empty vector
    std::memcpy(dst, b_.data() + pos_, n);
    pos_ += n;
    return Status::ok();
  }

 private:
  std::string_view b_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Parses the header from `r` (positioned at the start); leaves r at the data.
Result<CacheFileHeader> parse_header(Reader& r, const std::string& path, uint64_t program_checksum, StorageType kv_type) {
  CacheFileHeader h;
  OG_TRY(r.get<uint64_t>("magic"));
  OG_ASSIGN_OR_RETURN(h.version, r.get<uint32_t>("version"));
  if (h.version < 1 || h.version > kCacheFileVersion)
    return bad_input("{}: cache file version {} is not supported", path, h.version);
  OG_ASSIGN_OR_RETURN(const uint32_t code, r.get<uint32_t>("kv dtype"));
  auto type = kv_type_of_disk_code(code);
  if (!type.is_ok()) return type.status().with_context(path);
  h.kv_type = *type;
  OG_ASSIGN_OR_RETURN(uint64_t program, r.get<uint64_t>("program checksum"));
  if (program != program_checksum)
    return bad_input("{}: the cache was saved for a different program ({:016x}, this one is {:016x})", path, program,
                     program_checksum);
  if (h.kv_type != kv_type) return bad_input("{}: the cache was saved with another --kv-dtype", path);
  OG_ASSIGN_OR_RETURN(uint64_t length, r.get<uint64_t>("length"));
  OG_ASSIGN_OR_RETURN(uint32_t n, r.get<uint32_t>("cache count"));
  if (length > (uint64_t{1} << 40) || n > (1u << 16)) return bad_input("{}: implausible header (length {}, {} caches)", path, length, n);
  h.length = static_cast<int64_t>(length);
  uint64_t data = 0;
  for (uint32_t c = 0; c < n; ++c) {
    CacheFileHeader::Cache hc;
    OG_ASSIGN_OR_RETURN(uint64_t slots, r.get<uint64_t>("slots"));
    OG_ASSIGN_OR_RETURN(uint32_t heads, r.get<uint32_t>("kv heads"));
    OG_ASSIGN_OR_RETURN(uint32_t dim, r.get<uint32_t>("head dim"));
    OG_ASSIGN_OR_RETURN(uint64_t rows, r.get<uint64_t>("rows"));
    uint64_t window = 0;
    if (h.version >= 2) {
      OG_ASSIGN_OR_RETURN(window, r.get<uint64_t>("window"));
    }
    uint32_t copies = 2;
    if (h.version >= 3) {
      OG_ASSIGN_OR_RETURN(copies, r.get<uint32_t>("copies"));
    }
    if (copies != 1 && copies != 2) return bad_input("{}: cache {} has {} copies (1 or 2)", path, c, copies);
    if (slots > (uint64_t{1} << 40) || rows > slots || heads > (1u << 16) || dim > (1u << 16) || window > (uint64_t{1} << 40))
      return bad_input("{}: implausible geometry of cache {}", path, c);
    hc.slots = static_cast<int64_t>(slots);
    hc.kv_heads = static_cast<int32_t>(heads);
    hc.head_dim = static_cast<int32_t>(dim);
    hc.rows = static_cast<int64_t>(rows);
    hc.window = static_cast<int64_t>(window);
    hc.copies = static_cast<int32_t>(copies);
    data += copies * rows * heads * static_cast<uint64_t>(kv_row_bytes(h.kv_type, static_cast<int64_t>(dim)));
    h.caches.push_back(hc);
  }
  if (h.version >= 2) {
    OG_ASSIGN_OR_RETURN(uint64_t n_tokens, r.get<uint64_t>("token count"));
    if (n_tokens > r.remaining() / sizeof(int32_t)) return bad_input("{}: truncated in the tokens", path);
    h.tokens.resize(n_tokens);
    OG_TRY(r.read(h.tokens.data(), n_tokens * sizeof(int32_t)));
  }
  h.file_bytes = r.pos() + data + sizeof(uint64_t);
  return h;
}

}  // namespace

uint32_t kv_disk_code(StorageType t) {
  const uint8_t c = storage_info(t).cache_code;
  return c == kNoCode ? UINT32_MAX : c;  // a storage type without a code is never written
}

Result<StorageType> kv_type_of_disk_code(uint32_t code) {
  for (const StorageTypeInfo& i : kStorageTypes)
    if (i.cache_code != kNoCode && i.cache_code == code) return i.type;
  return bad_input("kv dtype code {} is unknown to this offgraph (a newer build wrote it?)", code);
}

Status write_cache_file(const std::string& path, const CacheImage& img) {
  const uint32_t code = kv_disk_code(img.kv_type);
  if (code == UINT32_MAX) return unsupported("{}: this kv dtype has no cache-file code yet", path);
  // The oldest version that expresses the image: 3 only where a cache keeps one copy, so that
  // files of other programs stay readable by builds that know version 2.
  const bool one_copy = std::any_of(img.caches.begin(), img.caches.end(), [](const kernels::KvStorage& kv) { return kv.v == kv.k; });
  const uint32_t version = one_copy ? kCacheFileVersion : 2;
  std::string out(kMagic, 8);
  put<uint32_t>(out, version);
  put<uint32_t>(out, code);
  put<uint64_t>(out, img.program_checksum);
  put<uint64_t>(out, static_cast<uint64_t>(img.length));
  put<uint32_t>(out, static_cast<uint32_t>(img.caches.size()));
  for (size_t c = 0; c < img.caches.size(); ++c) {
    const auto& kv = img.caches[c];
    put<uint64_t>(out, static_cast<uint64_t>(kv.slots));
    put<uint32_t>(out, static_cast<uint32_t>(kv.kv_heads));
    put<uint32_t>(out, static_cast<uint32_t>(kv.head_dim));
    put<uint64_t>(out, static_cast<uint64_t>(used_rows(kv, img.length)));
    put<uint64_t>(out, static_cast<uint64_t>(img.windows.empty() ? 0 : img.windows[c]));
    if (version >= 3) put<uint32_t>(out, kv.v == kv.k ? 1u : 2u);
  }
  put<uint64_t>(out, img.tokens.size());
  out.append(reinterpret_cast<const char*>(img.tokens.data()), img.tokens.size_bytes());
  for (const auto& kv : img.caches) {
    const auto row = static_cast<size_t>(kv_row_bytes(kv.type, kv.head_dim));
    const size_t rows = static_cast<size_t>(used_rows(kv, img.length));
    auto write = [&](const void* base) {
      for (int32_t h = 0; h < kv.kv_heads; ++h)
        out.append(static_cast<const char*>(base) + static_cast<size_t>(h) * kv.slots * row, rows * row);
    };
    write(kv.k);
    if (kv.v != kv.k) write(kv.v);  // V is K's memory: one copy
  }
  put<uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return resource_error("{}: cannot create", path);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      return resource_error("{}: write failed", path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return resource_error("{}: cannot rename {}", path, tmp);
  return Status::ok();
}

Result<CacheFileHeader> read_cache_header(const std::string& path, uint64_t program_checksum, StorageType kv_type) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return bad_input("{}: cannot read: {}", path, ec.message());
  std::ifstream f(path, std::ios::binary);
  if (!f) return bad_input("{}: cannot open", path);
  std::string head(static_cast<size_t>(std::min<uint64_t>(size, kHeadRead)), '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (static_cast<size_t>(f.gcount()) != head.size()) return bad_input("{}: cannot read", path);
  if (head.size() < 8 + 8 || std::memcmp(head.data(), kMagic, 8) != 0) return bad_input("{}: not an offgraph cache file", path);
  Reader r(head, path);
  auto h = parse_header(r, path, program_checksum, kv_type);
  if (!h.is_ok() && size > head.size()) {  // a header longer than the first read (many tokens)
    OG_ASSIGN_OR_RETURN(std::string all, read_text_file(path));
    Reader whole(all, path);
    h = parse_header(whole, path, program_checksum, kv_type);
  }
  if (!h.is_ok()) return h.status();
  if (h->file_bytes != size)
    return bad_input("{}: {} bytes, the header describes {} (truncated?)", path, size, h->file_bytes);
  return h;
}

Result<CacheFileHeader> read_cache_file(const std::string& path, uint64_t program_checksum, StorageType kv_type,
                                        const CacheDestinations& destinations) {
  OG_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path));
  if (bytes.size() < 8 + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return bad_input("{}: not an offgraph cache file", path);
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored)
    return bad_input("{}: checksum mismatch; the cache file is corrupt", path);
  Reader r(std::string_view(bytes).substr(0, bytes.size() - 8), path);
  OG_ASSIGN_OR_RETURN(CacheFileHeader h, parse_header(r, path, program_checksum, kv_type));
  if (h.file_bytes != bytes.size())
    return bad_input("{}: {} bytes of cache data, the header describes {}", path, r.remaining(),
                     h.file_bytes - r.pos() - sizeof(uint64_t));
  OG_ASSIGN_OR_RETURN(std::vector<kernels::KvStorage> caches, destinations(h));
  if (caches.size() != h.caches.size()) return bad_input("{}: {} caches, the session has {}", path, h.caches.size(), caches.size());
  for (size_t c = 0; c < caches.size(); ++c) {
    const auto& kv = caches[c];
    const auto& hc = h.caches[c];
    if (hc.slots != kv.slots || hc.kv_heads != kv.kv_heads || hc.head_dim != kv.head_dim ||
        kv.type != h.kv_type)
      return bad_input("{}: cache {} geometry differs from this session's (was it saved with another --max-ctx-len?)", path, c);
  }
  // All checks happen before the first byte is copied: a refused file changes nothing.
  for (size_t c = 0; c < caches.size(); ++c) {
    const auto& kv = caches[c];
    const auto row = static_cast<size_t>(kv_row_bytes(kv.type, kv.head_dim));
    const size_t rows = static_cast<size_t>(h.caches[c].rows);
    auto head = [&](void* base, int32_t hd) { return static_cast<char*>(base) + static_cast<size_t>(hd) * kv.slots * row; };
    for (int32_t hd = 0; hd < kv.kv_heads; ++hd) OG_TRY(r.read(head(kv.k, hd), rows * row));
    if (h.caches[c].copies == 2) {  // into V, which is K again where the destination keeps one copy
      for (int32_t hd = 0; hd < kv.kv_heads; ++hd) OG_TRY(r.read(head(kv.v, hd), rows * row));
    } else if (kv.v != kv.k) {  // one copy into a cache with two: V gets K's rows
      for (int32_t hd = 0; hd < kv.kv_heads; ++hd) std::memcpy(head(kv.v, hd), head(kv.k, hd), rows * row);
    }
  }
  return h;
}

}  // namespace og::runtime
