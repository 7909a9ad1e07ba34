#include "hf/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/half.h"
#include "hf/json_fields.h"

namespace og::hf {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // safetensors' own limit is 100 MB

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorView::shape_str() const { return shape_to_string(shape); }

double TensorView::get(int64_t i) const {
  const uint8_t* p = data + static_cast<size_t>(i) * dtype_size(dtype);
  if (scale_inv != nullptr) {
    const int64_t cols = shape[1], r = i / cols, c = i % cols;
    const int64_t scale_cols = scale_inv->shape[1];
    return static_cast<double>(fp8_e4m3_to_float(*p)) * scale_inv->get(r / block_rows * scale_cols + c / block_cols);
  }
  switch (dtype) {
    case DType::kF8E4M3: return fp8_e4m3_to_float(*p);
    case DType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::kF64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::kBF16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_to_float(v); }
    case DType::kF16: { uint16_t v; std::memcpy(&v, p, 2); return fp16_to_float(v); }
    case DType::kI8: return static_cast<int8_t>(*p);
    case DType::kU8: case DType::kBool: return *p;
    case DType::kI16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kI64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
  }
  return 0;
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::string& path) {
  auto f = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  OG_ASSIGN_OR_RETURN(f->file_, MappedFile::open(path));
  const size_t size = f->file_->size();
  if (size < 8) return bad_input("{}: file is {} bytes, too short for a safetensors header", path, size);
  uint64_t header_len;
  std::memcpy(&header_len, f->file_->data(), 8);
  if (header_len > size - 8)
    return bad_input("{}: header length {} runs past the end of the file ({} bytes)", path, header_len, size);
  if (header_len > kMaxHeaderBytes) return bad_input("{}: header length {} exceeds 100 MB", path, header_len);
  if (header_len == 0) return bad_input("{}: header is empty", path);
  std::string header(reinterpret_cast<const char*>(f->file_->data() + 8), header_len);
  OG_ASSIGN_OR_RETURN(Json j, parse_json(header, path + " (header)"));
  if (!j.is_object()) return bad_input("{}: header is not a JSON object", path);

  const uint8_t* base = f->file_->data() + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  struct Range { uint64_t begin, end; const std::string* name; };
  std::vector<Range> ranges;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    const Json& e = it.value();
    if (name == "__metadata__") {
      if (!e.is_object()) return bad_input("{}: __metadata__ is not an object", path);
      for (auto m = e.begin(); m != e.end(); ++m)
        if (m.value().is_string()) f->metadata_[m.key()] = m.value().get<std::string>();
      continue;
    }
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      return bad_input("{}: tensor '{}': header entry needs dtype, shape and data_offsets", path, name);
    TensorView t;
    t.name = name;
    t.file = path;
    if (!e["dtype"].is_string()) return bad_input("{}: tensor '{}': dtype is not a string", path, name);
    auto dt = dtype_from_name(e["dtype"].get<std::string>());
    if (!dt) return bad_input("{}: tensor '{}': unknown dtype '{}'", path, name, e["dtype"].get<std::string>());
    t.dtype = *dt;
    if (!e["shape"].is_array()) return bad_input("{}: tensor '{}': shape is not a list", path, name);
    uint64_t numel = 1;
    for (const Json& d : e["shape"]) {
      if (!d.is_number_unsigned()) return bad_input("{}: tensor '{}': shape has a non-integer or negative dimension", path, name);
      uint64_t dim = d.get<uint64_t>();
      if (dim > (1ull << 40) || mul_overflows(numel, dim, &numel))
        return bad_input("{}: tensor '{}': shape {} is too large", path, name, e["shape"].dump());
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const Json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return bad_input("{}: tensor '{}': data_offsets must be two non-negative integers", path, name);
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) return bad_input("{}: tensor '{}': data_offsets [{}, {}] are reversed", path, name, begin, end);
    if (end > data_size)
      return bad_input("{}: tensor '{}': data_offsets [{}, {}] run past the end of the data ({} bytes)", path, name,
                       begin, end, data_size);
    uint64_t expected;
    if (mul_overflows(numel, dtype_size(t.dtype), &expected) || expected != end - begin)
      return bad_input("{}: tensor '{}': {} bytes at data_offsets [{}, {}], but shape {} x {} needs {}", path, name,
                       end - begin, begin, end, t.shape_str(), dtype_name(t.dtype), numel * dtype_size(t.dtype));
    t.data = base + begin;
    t.nbytes = end - begin;
    auto [pos, inserted] = f->tensors_.emplace(name, std::move(t));
    ranges.push_back({begin, end, &pos->first});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end && ranges[i].begin != ranges[i].end && ranges[i - 1].begin != ranges[i - 1].end)
      return bad_input("{}: tensors '{}' and '{}' overlap (data_offsets {}..{} and {}..{})", path, *ranges[i - 1].name,
                       *ranges[i].name, ranges[i - 1].begin, ranges[i - 1].end, ranges[i].begin, ranges[i].end);
  }
  return f;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Result<Checkpoint> Checkpoint::open(const std::string& model_dir) {
  namespace fs = std::filesystem;
  Checkpoint ck;
  ck.dir_ = model_dir;
  const fs::path dir(model_dir);
  const fs::path index_path = dir / "model.safetensors.index.json";
  const fs::path single_path = dir / "model.safetensors";
  std::error_code ec;
  if (fs::exists(index_path, ec)) {
    OG_ASSIGN_OR_RETURN(std::string text, read_text_file(index_path.string()));
    OG_ASSIGN_OR_RETURN(Json idx, parse_json(text, index_path.string()));
    if (!idx.is_object() || !idx.contains("weight_map") || !idx["weight_map"].is_object())
      return bad_input("{}: expected an object with a 'weight_map' object", index_path.string());
    std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
    for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
      if (!it.value().is_string())
        return bad_input("{}: weight_map entry for '{}' is not a file name", index_path.string(), it.key());
      std::string shard = it.value().get<std::string>();
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "..")
        return bad_input("{}: weight_map entry for '{}' names '{}', not a file in the directory", index_path.string(),
                         it.key(), shard);
      auto s = shards.find(shard);
      if (s == shards.end()) {
        fs::path shard_path = dir / shard;
        if (!fs::exists(shard_path, ec))
          return bad_input("{}: shard '{}' named by the index (for tensor '{}') is missing", index_path.string(),
                           shard_path.string(), it.key());
        OG_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(shard_path.string()));
        s = shards.emplace(shard, std::shared_ptr<SafetensorsFile>(std::move(file))).first;
        ck.files_.push_back(s->second);
      }
      const TensorView* t = s->second->find(it.key());
      if (t == nullptr)
        return bad_input("{}: tensor '{}' is named by the index but missing from the shard", s->second->path(), it.key());
      ck.index_[it.key()] = t;
    }
  } else if (fs::exists(single_path, ec)) {
    OG_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(single_path.string()));
    ck.files_.push_back(std::shared_ptr<SafetensorsFile>(std::move(file)));
    for (const auto& [name, t] : ck.files_.back()->tensors()) ck.index_[name] = &t;
  } else {
    return bad_input("{}: no model.safetensors or model.safetensors.index.json", model_dir);
  }
  OG_TRY(ck.attach_block_scales());
  return ck;
}

Status Checkpoint::attach_block_scales() {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir_) / "config.json";
  std::error_code ec;
  if (!fs::exists(config_path, ec)) return Status::ok();
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(config_path.string()));
  OG_ASSIGN_OR_RETURN(Json config, parse_json(text, config_path.string()));
  if (!config.is_object() || !config.contains("quantization_config") || !config["quantization_config"].is_object())
    return Status::ok();
  const JsonFields q(config["quantization_config"], config_path.string(), "quantization_config.");
  OG_ASSIGN_OR_RETURN(const std::string method, q.get_string("quant_method", ""));
  if (method != "fp8") return Status::ok();  // another scheme (mxfp4): its family reads it
  OG_ASSIGN_OR_RETURN(const std::string fmt, q.get_string("fmt", "e4m3"));
  if (fmt != "e4m3") return q.invalid("fmt", "\"e4m3\" (float8_e4m3fn weights)");
  OG_ASSIGN_OR_RETURN(const std::string scheme, q.get_string("activation_scheme", "dynamic"));
  if (scheme != "dynamic")
    return unsupported("{}: field 'quantization_config.activation_scheme' is \"{}\": offgraph dequantizes the FP8 "
                       "weights and reads no static activation scales",
                       config_path.string(), scheme);
  const Json block = config["quantization_config"].value("weight_block_size", Json());
  if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() || !block[1].is_number_integer() ||
      block[0].get<int64_t>() < 1 || block[1].get<int64_t>() < 1)
    return q.invalid("weight_block_size", "two positive integers (rows, columns of a scale's block)");
  const int64_t br = block[0].get<int64_t>(), bc = block[1].get<int64_t>();
  scaled_ = std::make_shared<std::deque<TensorView>>();
  std::vector<std::string> scales;
  for (const auto& [name, t] : index_) {
    if (t->dtype != DType::kF8E4M3) continue;
    const std::string scale_name = name + "_scale_inv";
    const TensorView* s = find(scale_name);
    if (s == nullptr)
      return bad_input("{}: FP8 tensor '{}' has no '{}' (quantization_config is fp8 with {} x {} blocks)", t->file, name,
                       scale_name, br, bc);
    if (t->shape.size() != 2)
      return bad_input("{}: FP8 tensor '{}' has shape {}; block scales need a matrix", t->file, name, t->shape_str());
    const std::vector<int64_t> want = {(t->shape[0] + br - 1) / br, (t->shape[1] + bc - 1) / bc};
    if (s->shape != want || !is_float_dtype(s->dtype) || s->dtype == DType::kF8E4M3)
      return bad_input("{}: '{}' is {} {}; {} x {} blocks of '{}' {} need a float {}", s->file, scale_name,
                       dtype_name(s->dtype), s->shape_str(), br, bc, name, t->shape_str(), shape_to_string(want));
    TensorView v = *t;
    v.scale_inv = s;
    v.block_rows = br;
    v.block_cols = bc;
    scaled_->push_back(std::move(v));
    scales.push_back(scale_name);
  }
  for (const std::string& s : scales) index_.erase(s);
  for (TensorView& v : *scaled_) index_[v.name] = &v;
  return Status::ok();
}

const TensorView* Checkpoint::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

Result<const TensorView*> Checkpoint::get(const std::string& name) const {
  const TensorView* t = find(name);
  if (t == nullptr) return bad_input("{}: tensor '{}' not found in the checkpoint", dir_, name);
  return t;
}

Result<const TensorView*> Checkpoint::get(const std::string& name, const std::vector<int64_t>& shape) const {
  OG_ASSIGN_OR_RETURN(const TensorView* t, get(name));
  if (t->shape != shape)
    return bad_input("{}: tensor '{}' has shape {}; config implies {}", t->file, name, t->shape_str(),
                     shape_to_string(shape));
  if (!is_float_dtype(t->dtype))
    return bad_input("{}: tensor '{}' has dtype {}; expected a float dtype", t->file, name, dtype_name(t->dtype));
  return t;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : index_) out.push_back(name);
  return out;
}

std::vector<double> to_f64(const TensorView& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.get(i);
  return out;
}

std::vector<float> to_f32(const TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = static_cast<float>(t.get(i));
  return out;
}

}  // namespace og::hf
