#include "hf/safetensors_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "hf/json_fields.h"

namespace og::hf {

Status write_safetensors(const std::string& path, const std::vector<const OwnedTensor*>& tensors) {
  // nlohmann's ordered_json keeps insertion order, so offsets ascend in the header as in HF files.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const OwnedTensor* t : tensors) {
    header[t->name] = {{"dtype", std::string(dtype_name(t->dtype))},
                       {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->size()}}};
    offset += t->size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return resource_error("{}: cannot create", path);
  uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const OwnedTensor* t : tensors) {
    if (t->bytes.empty()) out.seekp(static_cast<std::streamoff>(t->zero_bytes), std::ios::cur);  // a hole
    else out.write(reinterpret_cast<const char*>(t->bytes.data()), static_cast<std::streamsize>(t->bytes.size()));
  }
  out.close();
  if (!out) return resource_error("{}: write failed", path);
  // A trailing hole: extend the file to its full length.
  std::error_code ec;
  const uint64_t want = 8 + text.size() + offset;
  if (std::filesystem::file_size(path, ec) < want) std::filesystem::resize_file(path, want, ec);
  if (ec) return resource_error("{}: cannot extend: {}", path, ec.message());
  return Status::ok();
}

Status write_checkpoint(const std::string& dir, const std::vector<OwnedTensor>& tensors, uint64_t max_shard_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return resource_error("{}: cannot create directory: {}", dir, ec.message());
  std::vector<std::vector<const OwnedTensor*>> shards(1);
  uint64_t in_shard = 0, total = 0;
  for (const OwnedTensor& t : tensors) {
    if (max_shard_bytes > 0 && in_shard > 0 && in_shard + t.size() > max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&t);
    in_shard += t.size();
    total += t.size();
  }
  if (shards.size() == 1) return write_safetensors((fs::path(dir) / "model.safetensors").string(), shards[0]);
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::ordered_json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string name = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    OG_TRY(write_safetensors((fs::path(dir) / name).string(), shards[i]));
    for (const OwnedTensor* t : shards[i]) index["weight_map"][t->name] = name;
  }
  std::ofstream out(fs::path(dir) / "model.safetensors.index.json");
  out << index.dump(2) << "\n";
  if (!out) return resource_error("{}: cannot write model.safetensors.index.json", dir);
  return Status::ok();
}

}  // namespace og::hf
