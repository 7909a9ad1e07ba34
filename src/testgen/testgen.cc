#include "testgen/testgen.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "base/check.h"
#include "base/half.h"
#include "hf/safetensors_writer.h"
#include "testgen/family.h"
#include "testgen/random_fill.h"

namespace og::testgen {
namespace {

namespace fs = std::filesystem;

// Far above any tiny model and large enough for the full-size shapes of benchmarks and
// tests (Llama-3.2-1B: 1.24e9; gemma-4-E2B without its per-layer table: 2.2e9, see
// zero_tensors_from);
// keeps a mistyped override from filling the disk.
constexpr int64_t kMaxTotalElements = int64_t{1} << 32;

const FamilyDef* find_family(const std::string& name) {
  for (const FamilyDef& def : all_families())
    if (name == def.name) return &def;
  return nullptr;
}

Status unknown_family(const std::string& name) {
  return bad_input("testgen: unknown family '{}' (known: {})", name, fmt::join(generator_families(), ", "));
}

const char* torch_dtype_name(DType t) {
  switch (t) {
    case DType::kBF16: return "bfloat16";
    case DType::kF16: return "float16";
    default: return "float32";
  }
}

// The tiny config with its dtype field set, in both places for wrappers that carry it twice.
Json config_with_dtype(const FamilyDef& def, DType dtype) {
  Json cfg = def.tiny_config();
  cfg[def.dtype_key] = torch_dtype_name(dtype);
  if (def.wrapped && cfg["text_config"].contains(def.dtype_key))
    cfg["text_config"][def.dtype_key] = torch_dtype_name(dtype);
  return cfg;
}

// Removes the files of an earlier checkpoint, so that a stale index or shard cannot shadow
// the new one.
Status clear_old_checkpoint(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::ok();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool shard = name.rfind("model-", 0) == 0 && name.size() > 12 &&
                       name.compare(name.size() - 12, 12, ".safetensors") == 0;
    if (shard || name == "model.safetensors" || name == "model.safetensors.index.json") {
      fs::remove(entry.path(), ec);
      if (ec) return resource_error("{}: cannot remove: {}", entry.path().string(), ec.message());
    }
  }
  if (ec) return resource_error("{}: cannot list: {}", dir.string(), ec.message());
  return Status::ok();
}

// The float8_e4m3fn code nearest to x (ties to the even code), saturating at +-448; x finite.
uint8_t float_to_fp8_e4m3(float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const float a = std::fabs(x);
  uint8_t best = 0;
  float best_err = INFINITY;
  for (uint8_t code = 0; code < 0x7f; ++code) {  // 0x7f is NaN
    const float err = std::fabs(fp8_e4m3_to_float(code) - a);
    if (err < best_err || (err == best_err && (code & 1) == 0)) best = code, best_err = err;
  }
  return sign | best;
}

// A layer's linear weight, stored as FP8 in the published FP8 checkpoints (routers stay float).
bool fp8_weight(const TensorSpec& spec) {
  const std::string& n = spec.name;
  return spec.shape.size() == 2 && !spec.bytes && n.find("layers.") != std::string::npos && n.ends_with(".weight") &&
         !n.ends_with(".gate.weight") && !n.ends_with("router.weight");
}

// values [R, C] as F8_E4M3 codes with a float32 scale per block x block block: the block's
// max |v| / 448 (1 for an all-zero block), each code the nearest to v / scale.
std::pair<hf::OwnedTensor, hf::OwnedTensor> fp8_blocks(const TensorSpec& spec, const std::vector<float>& values, int64_t block) {
  const int64_t R = spec.shape[0], C = spec.shape[1], SR = (R + block - 1) / block, SC = (C + block - 1) / block;
  std::vector<float> scale(static_cast<size_t>(SR * SC), 0.0f);  // [SR, SC]
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      float& s = scale[static_cast<size_t>(r / block * SC + c / block)];
      s = std::max(s, std::fabs(values[static_cast<size_t>(r * C + c)]));
    }
  for (float& s : scale) s = s > 0 ? s / 448.0f : 1.0f;
  std::vector<uint8_t> codes(static_cast<size_t>(R * C));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      codes[static_cast<size_t>(r * C + c)] =
          float_to_fp8_e4m3(values[static_cast<size_t>(r * C + c)] / scale[static_cast<size_t>(r / block * SC + c / block)]);
  return {hf::OwnedTensor{spec.name, DType::kF8E4M3, spec.shape, std::move(codes)},
          hf::OwnedTensor{spec.name + "_scale_inv", DType::kF32, {SR, SC}, encode_values(scale, DType::kF32)}};
}

Result<std::vector<hf::OwnedTensor>> make_tensors(const std::vector<TensorSpec>& specs, const GenOptions& options,
                                                  const std::string& what) {
  int64_t total = 0;
  std::set<std::string> names;
  auto is_zero = [&](const TensorSpec& spec) {
    int64_t numel = 1;
    for (int64_t dim : spec.shape) numel = dim > 0 && numel <= (int64_t{1} << 50) / dim ? numel * dim : (int64_t{1} << 50);
    return !spec.bytes && options.zero_tensors_from > 0 && numel >= options.zero_tensors_from;
  };
  for (const TensorSpec& spec : specs) {
    OG_CHECK(names.insert(spec.name).second);  // a family listed a tensor twice
    int64_t numel = 1;
    for (int64_t dim : spec.shape) {
      if (dim <= 0) return bad_input("{}: tensor '{}' would have a dimension of {}", what, spec.name, dim);
      if (numel > kMaxTotalElements / dim) numel = kMaxTotalElements + 1;
      else numel *= dim;
    }
    if (is_zero(spec)) continue;
    total += numel;
    if (total > kMaxTotalElements)
      return bad_input("{}: the checkpoint would exceed {} elements (at tensor '{}'); this generator is for tiny models",
                       what, kMaxTotalElements, spec.name);
  }
  std::vector<hf::OwnedTensor> tensors;
  tensors.reserve(specs.size());
  for (const TensorSpec& spec : specs) {
    size_t numel = 1;
    for (int64_t dim : spec.shape) numel *= static_cast<size_t>(dim);
    if (is_zero(spec)) {
      tensors.push_back({spec.name, options.dtype, spec.shape, {}, numel * dtype_size(options.dtype)});
      continue;
    }
    if (spec.bytes) {
      tensors.push_back({spec.name, DType::kU8, spec.shape, random_bytes(options.seed, spec.name, numel, *spec.bytes)});
      continue;
    }
    std::vector<float> values = random_values(options.seed, spec.name, numel, spec.init);
    if (options.fp8_block > 0 && fp8_weight(spec)) {
      auto [codes, scales] = fp8_blocks(spec, values, options.fp8_block);
      tensors.push_back(std::move(codes));
      tensors.push_back(std::move(scales));
      continue;
    }
    tensors.push_back({spec.name, options.dtype, spec.shape, encode_values(values, options.dtype)});
  }
  return tensors;
}

}  // namespace

std::vector<std::string> generator_families() {
  std::vector<std::string> names;
  for (const FamilyDef& def : all_families()) names.emplace_back(def.name);
  return names;
}

Result<nlohmann::json> tiny_config(const std::string& family) {
  const FamilyDef* def = find_family(family);
  if (def == nullptr) return unknown_family(family);
  return config_with_dtype(*def, DType::kF32);
}

Status generate_checkpoint(const GenOptions& options) {
  const FamilyDef* def = find_family(options.family);
  if (def == nullptr) return unknown_family(options.family);
  if (options.dtype != DType::kF32 && options.dtype != DType::kBF16 && options.dtype != DType::kF16)
    return bad_input("testgen: weights can be F32, BF16 or F16, not {}", dtype_name(options.dtype));
  if (!options.overrides.is_object())
    return bad_input("testgen: overrides must be a JSON object, got {}", options.overrides.dump());
  if (options.out_dir.empty()) return bad_input("testgen: no output directory given");
  if (options.fp8_block < 0) return bad_input("testgen: fp8_block {} must be >= 0", options.fp8_block);

  Json config = config_with_dtype(*def, options.dtype);
  Json& text = def->wrapped ? config["text_config"] : config;
  text.merge_patch(options.overrides);
  if (options.tie_word_embeddings) text["tie_word_embeddings"] = *options.tie_word_embeddings;
  if (def->wrapped && text.contains("tie_word_embeddings")) config["tie_word_embeddings"] = text["tie_word_embeddings"];
  if (options.fp8_block > 0)  // transformers' FineGrainedFP8Config, as the FP8 hub checkpoints carry it
    config["quantization_config"] = {{"activation_scheme", "dynamic"},
                                     {"fmt", "e4m3"},
                                     {"quant_method", "fp8"},
                                     {"weight_block_size", {options.fp8_block, options.fp8_block}}};

  FamilyContext ctx{.family = def->name,
                    .what = fmt::format("testgen {} config{}", def->name, def->wrapped ? " (text_config)" : ""),
                    .tie_default = def->tie_default,
                    .head_dim_default = def->head_dim_default,
                    .kv_heads_default = def->kv_heads_default,
                    .hub_layout = options.hub_layout};
  if (def->derive != nullptr) OG_TRY(def->derive(text, options.overrides, ctx));
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> specs, def->tensors(text, ctx));
  OG_ASSIGN_OR_RETURN(std::vector<hf::OwnedTensor> tensors, make_tensors(specs, options, ctx.what));

  const fs::path dir(options.out_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return resource_error("{}: cannot create directory: {}", options.out_dir, ec.message());
  OG_TRY(clear_old_checkpoint(dir));
  {
    const fs::path path = dir / "config.json";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) return resource_error("{}: cannot write", path.string());
  }
  return hf::write_checkpoint(options.out_dir, tensors, options.max_shard_bytes);
}

}  // namespace og::testgen
