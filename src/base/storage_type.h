// The element types a program stores its weights in and a runtime its KV caches in: one
// enum for the kernels, the program format, the cache set and the cache files, and one
// table (kStorageTypes) for its names, sizes and on-disk codes. (base::DType is another
// thing: the element types a safetensors checkpoint may hold, F64 and the integers too.)
//
// On-disk codes are append-only: a code once written means the same type forever.
//   program_code: the program file's DType (program.fbs; checked against it in program/).
//   cache_code: a cache file's kv dtype (runtime/cache/cache_file.h), kNoCode where a type
//               cannot be a KV cache yet.
//   tag: the short spelling (the GGUF world's), also accepted as a name; it names the directory
//        of a --cache-dir store (runtime/prefix_cache.h), so it is fixed like the codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace og {

// kQ8 / kQ4: group-quantized weight matrices (kernels/kernels.h spells out the layout).
// kQ8_0 / kQ4_0: block-quantized KV cache rows, GGUF's q8_0 and q4_0 blocks (32 values along
// head_dim, one fp16 scale each; kernels/kv_blocks.h); never a program's weights.
enum class StorageType : uint8_t { kF32, kF16, kBF16, kQ8, kQ4, kQ8_0, kQ4_0 };

struct StorageTypeInfo {
  StorageType type;
  std::string_view name;  // as flags, messages and JSON spell it
  std::string_view tag;   // the short spelling (see above)
  uint8_t bits;            // bits per value, scales excluded
  uint8_t program_code;
  uint8_t cache_code;
  bool kv;                 // can be a KV cache's type
};

inline constexpr uint8_t kNoCode = 255;

inline constexpr StorageTypeInfo kStorageTypes[] = {
    {StorageType::kF32, "fp32", "f32", 32, 0, 0, true},
    {StorageType::kF16, "fp16", "f16", 16, 1, 1, true},
    {StorageType::kBF16, "bf16", "bf16", 16, 2, 2, true},
    {StorageType::kQ8, "q8", "q8", 8, 4, kNoCode, false},
    {StorageType::kQ4, "q4", "q4", 4, 5, kNoCode, false},
    {StorageType::kQ8_0, "q8_0", "q8_0", 8, kNoCode, 3, true},
    {StorageType::kQ4_0, "q4_0", "q4_0", 4, kNoCode, 4, true},
};

constexpr const StorageTypeInfo& storage_info(StorageType t) {
  for (const StorageTypeInfo& i : kStorageTypes)
    if (i.type == t) return i;
  return kStorageTypes[0];  // unreachable: every enumerator has a row (storage_type_test)
}

inline std::string_view storage_type_name(StorageType t) { return storage_info(t).name; }
inline std::string_view storage_type_tag(StorageType t) { return storage_info(t).tag; }

// Bytes of one value of an unquantized type (0 for the quantized ones: see storage_info's bits).
constexpr size_t storage_value_bytes(StorageType t) {
  const uint8_t bits = storage_info(t).bits;
  return bits % 8 == 0 && bits >= 16 ? bits / 8 : 0;
}

constexpr bool is_quantized(StorageType t) { return t == StorageType::kQ8 || t == StorageType::kQ4; }

// Whether a type can hold a program's weights (the KV-only block types cannot).
constexpr bool is_weight_type(StorageType t) { return storage_info(t).program_code != kNoCode; }

// Values per block of the KV block types, and bytes per block (fp16 scale + values).
inline constexpr int64_t kKvBlockValues = 32;
constexpr int64_t kv_block_bytes(StorageType t) {
  return t == StorageType::kQ8_0 ? 2 + kKvBlockValues : t == StorageType::kQ4_0 ? 2 + kKvBlockValues / 2 : 0;
}

// Bytes of one cache row (one position of one kv head, head_dim values) stored as t: a block
// type pads the row to whole blocks (the padding quantizes zeros).
constexpr int64_t kv_row_bytes(StorageType t, int64_t head_dim) {
  if (kv_block_bytes(t) > 0) return (head_dim + kKvBlockValues - 1) / kKvBlockValues * kv_block_bytes(t);
  return head_dim * static_cast<int64_t>(storage_value_bytes(t));
}

inline std::optional<StorageType> storage_type_from_name(std::string_view s) {
  for (const StorageTypeInfo& i : kStorageTypes)
    if (s == i.name || s == i.tag) return i.type;
  return std::nullopt;
}

// "fp32, fp16, bf16" (the names of the types `pred` admits), for messages.
template <typename Pred>
std::string storage_type_names(Pred pred) {
  std::string out;
  for (const StorageTypeInfo& i : kStorageTypes) {
    if (!pred(i)) continue;
    if (!out.empty()) out += ", ";
    out += i.name;
  }
  return out;
}

}  // namespace og
