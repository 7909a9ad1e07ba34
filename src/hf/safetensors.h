// safetensors checkpoints, read in place from memory-mapped files.
//
// Every header is validated before any tensor is handed out: header length within the
// file, JSON well-formed, known dtypes, offsets in bounds, non-overlapping, and sized
// exactly shape x dtype. A sharded checkpoint (model.safetensors.index.json) must have
// every tensor its index names in the shard the index names.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/mapped_file.h"
#include "base/status.h"

namespace og::hf {

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // points into the mapping
  size_t nbytes = 0;
  std::string file;               // the shard it lives in, for messages
  // Block-scaled FP8 weights (Checkpoint::open, for a config.json whose quantization_config is
  // {"quant_method": "fp8", "weight_block_size": [br, bc]}): element (r, c) of this [R, C]
  // tensor is its stored value times scale_inv[r / br, c / bc] of the sibling
  // NAME_scale_inv [ceil(R / br), ceil(C / bc)], as transformers' FP8 dequantization computes.
  const TensorView* scale_inv = nullptr;
  int64_t block_rows = 0, block_cols = 0;

  int64_t numel() const;
  std::string shape_str() const;  // "[512, 2048]"
  // Element i converted to double / float (F32, F16, BF16, F64, F8_E4M3, integer types), times
  // its block's scale when the tensor has one.
  double get(int64_t i) const;
};

class SafetensorsFile {
 public:
  static Result<std::unique_ptr<SafetensorsFile>> open(const std::string& path);
  const std::string& path() const { return file_->path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model directory: model.safetensors, or the shards named by
// model.safetensors.index.json.
class Checkpoint {
 public:
  static Result<Checkpoint> open(const std::string& model_dir);
  const TensorView* find(const std::string& name) const;
  // The tensor or an error naming it and the checkpoint.
  Result<const TensorView*> get(const std::string& name) const;
  // get() plus a shape check; the error names the tensor, its shape and the expected one.
  Result<const TensorView*> get(const std::string& name, const std::vector<int64_t>& shape) const;
  std::vector<std::string> names() const;
  const std::string& dir() const { return dir_; }

 private:
  // Pairs each FP8 weight with its NAME_scale_inv (TensorView::scale_inv) when config.json says
  // the checkpoint is block-quantized; the scales then leave the index.
  Status attach_block_scales();

  std::string dir_;
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> index_;
  std::shared_ptr<std::deque<TensorView>> scaled_;  // the weights with their scales (stable addresses)
};

// Copies a tensor to double / float (any float dtype).
std::vector<double> to_f64(const TensorView& t);
std::vector<float> to_f32(const TensorView& t);

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace og::hf
