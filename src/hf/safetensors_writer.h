// Writes safetensors files and sharded checkpoints exactly as huggingface_hub does:
// an 8-byte little-endian header length, a JSON header padded with spaces to 8 bytes,
// tensors packed in header order; shards named model-0000i-of-0000n.safetensors with
// model.safetensors.index.json mapping every tensor to its shard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace og::hf {

struct OwnedTensor {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // numel x dtype_size, little-endian
  uint64_t zero_bytes = 0;     // with `bytes` empty: that many zero bytes, written as a file hole
  uint64_t size() const { return bytes.empty() ? zero_bytes : bytes.size(); }
};

Status write_safetensors(const std::string& path, const std::vector<const OwnedTensor*>& tensors);

// Single model.safetensors when max_shard_bytes == 0 or everything fits in one shard;
// otherwise shards of at most max_shard_bytes (a larger tensor gets a shard of its own).
Status write_checkpoint(const std::string& dir, const std::vector<OwnedTensor>& tensors,
                        uint64_t max_shard_bytes = 0);

}  // namespace og::hf
