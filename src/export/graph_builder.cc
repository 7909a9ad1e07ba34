#include "export/graph_builder.h"

#include <cstdio>
#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "base/thread_pool.h"
#include "export/interleave.h"
#include "export/mxfp4.h"

namespace og::exporter {

GraphBuilder::GraphBuilder(program::ProgramWriter& writer, fb::ProgramT& program, fb::DType weight_dtype,
                           bool show_progress, size_t expected_tensors, QuantOptions quant)
    : quant_(quant), writer_(writer), program_(program), weight_dtype_(weight_dtype), show_progress_(show_progress),
      expected_tensors_(expected_tensors), start_(std::chrono::steady_clock::now()) {
  ids_ = new_value(1, fb::DType::I32);
  positions_ = new_value(1, fb::DType::I32);
  program_.input_ids = ids_;
  program_.positions = positions_;
}

ValueId GraphBuilder::new_value(int32_t width, fb::DType dtype) {
  auto v = std::make_unique<fb::ValueT>();
  v->width = width;
  v->dtype = dtype;
  v->name = "v" + std::to_string(program_.values.size());
  program_.values.push_back(std::move(v));
  return static_cast<ValueId>(program_.values.size() - 1);
}

Result<WeightId> GraphBuilder::write(const std::string& name, fb::DType dtype, std::vector<int64_t> shape,
                                     std::span<const uint8_t> bytes) {
  OG_ASSIGN_OR_RETURN(WeightId id, writer_.add_tensor(program_, name, dtype, std::move(shape), bytes));
  show_progress();
  return id;
}

Status GraphBuilder::write_data(WeightId id, std::span<const uint8_t> bytes) {
  OG_TRY(writer_.write_tensor_data(*program_.tensors[static_cast<size_t>(id)], bytes));
  show_progress();
  return Status::ok();
}

void GraphBuilder::show_progress() {
  if (on_progress_)
    on_progress_(static_cast<int64_t>(program_.tensors.size()), static_cast<int64_t>(expected_tensors_),
                 writer_.bytes_written());
  if (!show_progress_) return;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double mb = static_cast<double>(writer_.bytes_written()) / 1e6;
  std::fprintf(stderr, "\rexport: %zu/%zu tensors, %.1f MB, %.1f MB/s   ", program_.tensors.size(), expected_tensors_, mb,
               secs > 0 ? mb / secs : 0.0);
}

void GraphBuilder::finish_progress() {
  if (show_progress_) std::fprintf(stderr, "\n");
}

namespace {
int64_t rec_shape_cols(const std::vector<int64_t>& shape) { return shape.size() == 2 ? shape[1] : 0; }
}  // namespace

Result<WeightId> GraphBuilder::weight(const hf::TensorView& t, const WeightOptions& o) {
  if (!is_float_dtype(t.dtype))
    return bad_input("{}: tensor '{}' has dtype {}, expected a float dtype", t.file, t.name, dtype_name(t.dtype));
  // The matrix read: the tensor itself, or one expert's of a 3-D tensor; transposed if asked.
  std::vector<int64_t> shape = t.shape;
  if (o.expert >= 0) {
    if (shape.size() != 3 || o.expert >= shape[0])
      return bad_input("{}: tensor '{}' {} has no expert {} (expected [experts, rows, cols])", t.file, t.name,
                       t.shape_str(), o.expert);
    shape.erase(shape.begin());
  }
  if (o.transpose) {
    if (shape.size() != 2) return bad_input("{}: tensor '{}' {} is not a matrix to transpose", t.file, t.name, t.shape_str());
    std::swap(shape[0], shape[1]);
  }
  return record(t, o, std::move(shape), std::nullopt);
}

Result<WeightId> GraphBuilder::weight_made(const std::string& name, std::vector<int64_t> shape,
                                           std::function<Result<std::vector<float>>()> make) {
  if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1) return bad_input("made weight '{}': not a matrix", name);
  // A view with no data yet (write_pending fills it from `make`); named as no checkpoint tensor is.
  const hf::TensorView view{.name = name, .dtype = DType::kF32, .shape = shape, .data = nullptr,
                            .nbytes = static_cast<size_t>(shape[0] * shape[1]) * sizeof(float), .file = "(made at export)"};
  OG_ASSIGN_OR_RETURN(WeightId id, record(view, {}, shape, std::nullopt));
  pending_.at(id).make = std::move(make);
  return id;
}

Result<WeightId> GraphBuilder::weight_mxfp4(const hf::TensorView& blocks, const hf::TensorView& scales,
                                            const WeightOptions& o) {
  const auto& b = blocks.shape;
  if (blocks.dtype != DType::kU8 || scales.dtype != DType::kU8 || b.size() != 4 || b[3] != 16 ||
      scales.shape != std::vector<int64_t>{b[0], b[1], b[2]})
    return bad_input("{}: MXFP4 tensors '{}' {} {} and '{}' {} {}: expected U8 blocks [E, R, G, 16] and U8 scales "
                     "[E, R, G]", blocks.file, blocks.name, dtype_name(blocks.dtype), blocks.shape_str(), scales.name,
                     dtype_name(scales.dtype), scales.shape_str());
  if (o.expert < 0 || o.expert >= b[0] || o.transpose)
    return bad_input("{}: MXFP4 tensor '{}' {}: expert {} out of range (or a transpose asked)", blocks.file,
                     blocks.name, blocks.shape_str(), o.expert);
  for (size_t i = 0; i < scales.nbytes; ++i)
    if (scales.data[i] == kMxfp4NanScale)
      return bad_input("{}: MXFP4 scales '{}' hold byte 0xFF (NaN in e8m0) at element {}", scales.file, scales.name, i);
  used_.insert(scales.name);
  return record(blocks, o, {b[1], 32 * b[2]}, scales);
}

Result<WeightId> GraphBuilder::record(const hf::TensorView& t, const WeightOptions& o, std::vector<int64_t> shape,
                                      std::optional<hf::TensorView> mxfp4_scales) {
  used_.insert(t.name);
  if (o.flatten) {
    if (o.row_end >= 0 || o.expert >= 0 || o.transpose || mxfp4_scales.has_value())
      return bad_input("{}: tensor '{}' {} cannot be flattened and sliced", t.file, t.name, t.shape_str());
    shape = {t.numel()};
  }
  if (o.row_end >= 0) {
    const int64_t starts = o.row_step < 1 ? 0 : (o.row_end - o.row_begin + o.row_step - 1) / o.row_step;
    if (shape.empty() || shape.size() > 2 || o.row_begin < 0 || o.row_end > shape[0] || o.row_begin >= o.row_end ||
        o.row_step < 1 || o.row_run < 1 || (o.row_run > 1 && (o.row_run > o.row_step || mxfp4_scales.has_value() ||
                                                            o.row_begin + (starts - 1) * o.row_step + o.row_run > o.row_end)))
      return bad_input("{}: tensor '{}' {} cannot be sliced to rows [{}, {}) step {} run {}", t.file, t.name,
                       t.shape_str(), o.row_begin, o.row_end, o.row_step, o.row_run);
    shape[0] = starts * o.row_run;
  }
  if (o.pairs_block > 0 &&
      (shape.empty() || shape.size() > 2 || shape[0] % o.pairs_block != 0 || o.pairs_width <= 0 ||
       o.pairs_width % 2 != 0 || o.pairs_width > o.pairs_block || o.transpose || mxfp4_scales.has_value()))
    return bad_input("{}: tensor '{}' {} cannot have its rows paired in blocks of {} (width {})", t.file, t.name,
                     t.shape_str(), o.pairs_block, o.pairs_width);
  // Recorded now, written by write_weights() once every use is known.
  auto rec = std::make_unique<fb::TensorT>();
  rec->name = t.name;  // the slice in the name: ...gate_up_proj[3][1:5760:2].T
  if (o.expert >= 0) rec->name += "[" + std::to_string(o.expert) + "]";
  if (o.row_end >= 0)
    rec->name += "[" + std::to_string(o.row_begin) + ":" + std::to_string(o.row_end) +
                 (o.row_step != 1 ? ":" + std::to_string(o.row_step) : "") +
                 (o.row_run != 1 ? "x" + std::to_string(o.row_run) : "") + "]";
  if (o.transpose) rec->name += ".T";
  if (o.flatten) rec->name += ".flat";
  if (o.pairs_block > 0) rec->name += ".pairs(" + std::to_string(o.pairs_block) + "," + std::to_string(o.pairs_width) + ")";
  rec->dtype = o.keep_f32 ? fb::DType::F32 : weight_dtype_;
  rec->shape = std::move(shape);
  program_.tensors.push_back(std::move(rec));
  const WeightId id = static_cast<WeightId>(program_.tensors.size() - 1);
  Pending p{t, o, {}, std::move(mxfp4_scales)};
  if (o.col_scale != nullptr) {  // the caller's array need not outlive this call
    if (rec_shape_cols(program_.tensors.back()->shape) == 0)
      return bad_input("{}: tensor '{}' {} is not a matrix; its columns cannot be scaled", t.file, t.name, t.shape_str());
    p.col_scale.assign(o.col_scale, o.col_scale + program_.tensors.back()->shape[1]);
    p.options.col_scale = nullptr;
  }
  pending_.emplace(id, std::move(p));
  return id;
}

Status GraphBuilder::write_weights() {
  // The graph is complete: every reader of every tensor is known (interleave.h).
  matrix_only_ = read_only_as_matrices(program_);
  for (const auto& [id, p] : pending_) OG_TRY(write_pending(id));
  pending_.clear();
  // Linears whose weight ended up quantized take int8 activations (--qactivations int8).
  auto quantized = [&](WeightId w) {
    const fb::DType dt = program_.tensors[static_cast<size_t>(w)]->dtype;
    return dt == fb::DType::Q8 || dt == fb::DType::Q4;
  };
  if (quant_.int8_activations)
    for (auto& op : program_.ops) {
      if (auto* a = op->attrs.AsLinearAttrs()) a->int8_activations = quantized(a->weight);
      if (auto* a = op->attrs.AsMoeAttrs())
        a->int8_activations = std::any_of(a->down.begin(), a->down.end(), quantized) ||
                              std::any_of(a->gate.begin(), a->gate.end(), quantized);
    }
  // And interleaved BF16 ones bf16 activations (--qactivations bf16; MoE experts keep f32).
  if (quant_.bf16_activations)
    for (auto& op : program_.ops)
      if (auto* a = op->attrs.AsLinearAttrs()) {
        const fb::TensorT& w = *program_.tensors[static_cast<size_t>(a->weight)];
        a->bf16_activations = w.dtype == fb::DType::BF16 && w.row_block != 0;
      }
  return Status::ok();
}

Status GraphBuilder::write_pending(WeightId id) {
  Pending& p = pending_.at(id);
  std::vector<float> made;  // weight_made's values, alive while this tensor is written
  if (p.make) {
    OG_ASSIGN_OR_RETURN(made, p.make());
    if (made.size() * sizeof(float) != p.tensor.nbytes)
      return bad_input("made weight '{}': {} values for {}", p.tensor.name, made.size(), p.tensor.shape_str());
    p.tensor.data = reinterpret_cast<const uint8_t*>(made.data());
  }
  const hf::TensorView& t = p.tensor;
  const WeightOptions& o = p.options;
  fb::TensorT& rec = *program_.tensors[static_cast<size_t>(id)];
  const int64_t cols = rec.shape.size() == 2 ? rec.shape[1] : 0, rows = cols > 0 ? rec.shape[0] : 0;
  // Where element (r, c) of the stored matrix is in the checkpoint tensor: row r is row
  // row_begin + r * row_step of the matrix read (weight()); src_cols is that matrix's width
  // before a transpose, i.e. its row stride in the tensor.
  const bool mxfp4 = p.mxfp4_scales.has_value();
  const int64_t src_cols = mxfp4 ? cols : (t.shape.empty() ? 0 : t.shape.back());
  const int64_t expert_base = o.expert >= 0 && !mxfp4 ? o.expert * t.shape[1] * t.shape[2] : 0;
  const bool strided = mxfp4 || o.expert >= 0 || o.transpose || o.row_step != 1 || o.row_run != 1 || o.pairs_block > 0 ||
                       (cols == 0 && o.row_end >= 0);
  // Row r of the stored matrix (element r of a vector) as a row of the slice (WeightOptions::pairs_block).
  auto paired = [&](int64_t r) {
    if (o.pairs_block == 0) return r;
    const int64_t j = r % o.pairs_block, half = o.pairs_width / 2;
    if (j >= o.pairs_width) return r;
    return r - j + (j < half ? 2 * j : 2 * (j - half) + 1);
  };
  // A row of the slice as a row of the matrix read (element of a vector).
  auto sliced = [&](int64_t r) { return o.row_begin + r / o.row_run * o.row_step + r % o.row_run; };
  auto source_index = [&](int64_t i) {  // i in [0, rows * cols), or [0, length) of a vector
    if (cols == 0) return sliced(paired(i));
    const int64_t r = sliced(paired(i / cols)), c = i % cols;
    return o.transpose ? expert_base + c * src_cols + r : expert_base + r * src_cols + c;
  };
  const int64_t first = o.row_end >= 0 ? o.row_begin * cols : 0;
  const int64_t count = strided ? (cols > 0 ? rows * cols : rec.shape.empty() ? t.numel() : rec.shape[0])
                                : o.row_end >= 0 ? (o.row_end - o.row_begin) * cols : t.numel();

  // Storage by use (see the header comment).
  QuantBits bits = QuantBits::kNone;
  const auto it = uses_.find(id);
  const uint8_t use = it == uses_.end() ? 0 : it->second;
  if (!o.keep_f32 && cols > 0) {
    if ((use & kEmbeddingUse) && quant_.embedding != QuantBits::kNone) bits = quant_.embedding;
    else if ((use & kHeadUse) && quant_.head != QuantBits::kNone) bits = quant_.head;
    else if (use == kLinearUse) bits = quant_.linear;
  }
  if (bits != QuantBits::kNone && cols % quant_.group_size != 0) {
    ++n_not_quantizable_;
    bits = QuantBits::kNone;
  }

  // Float values, converted (and offset-folded, in f32 as transformers computes 1 + w) as
  // needed; a tensor already in its storage dtype is copied as it is.
  // Column scales (folded constants) multiply after the offset, also in f32.
  const std::vector<float>& col_scale = p.col_scale;
  const int64_t mx_rows = mxfp4 ? t.shape[1] : 0, mx_groups = mxfp4 ? t.shape[2] : 0;
  auto raw = [&](int64_t i) -> float {
    if (mxfp4)
      return mxfp4_value(t.data, p.mxfp4_scales->data, mx_rows, mx_groups, o.expert,
                         o.row_begin + (i / cols) * o.row_step, i % cols);
    return static_cast<float>(t.get(strided ? source_index(i) : first + i));
  };
  auto value = [&](int64_t i) {
    float v = raw(i) + o.add;
    if (o.mul != 1.0f) v *= o.mul;
    return col_scale.empty() ? v : v * col_scale[static_cast<size_t>(i % cols)];
  };
  if (bits == QuantBits::kNone) {
    // Converted and written in pieces of at most 16 MB: a 4.7 GB table needs no 4.7 GB buffer.
    const fb::DType dtype = rec.dtype;
    const size_t esize = program::fb_dtype_size(dtype);
    const bool same = o.add == 0.0f && o.mul == 1.0f && !strided && col_scale.empty() && ((t.dtype == DType::kF32 && dtype == fb::DType::F32) ||
                                                             (t.dtype == DType::kBF16 && dtype == fb::DType::BF16) ||
                                                             (t.dtype == DType::kF16 && dtype == fb::DType::F16));
    // A matrix only linear / embedding / moe read is interleaved (interleave.h), in pieces of
    // whole 16-row blocks (the last one padded).
    const int64_t lane = program::interleaved_lane_values(dtype);
    const bool interleave = quant_.interleave && cols > 0 && lane > 0 && cols % lane == 0 &&
                            matrix_only_[static_cast<size_t>(id)];
    int64_t piece = std::max<int64_t>(1, (int64_t{16} << 20) / static_cast<int64_t>(esize));
    if (interleave) {
      piece = std::max<int64_t>(1, piece / (cols * program::kRowBlock)) * cols * program::kRowBlock;
      rec.row_block = program::kRowBlock;
    }
    std::vector<uint8_t> bytes;
    OG_TRY(writer_.begin_tensor_data(rec));
    for (int64_t i0 = 0; i0 < count; i0 += piece) {
      const int64_t n = std::min(piece, count - i0);
      if (same) {
        const std::span<const uint8_t> src(t.data + (first + i0) * static_cast<int64_t>(esize), static_cast<size_t>(n) * esize);
        if (interleave) OG_TRY(writer_.append_tensor_data(interleave_float_rows(src, n / cols, cols, static_cast<int64_t>(esize))));
        else OG_TRY(writer_.append_tensor_data(src));
        continue;
      }
      bytes.resize(static_cast<size_t>(n) * esize);
      for (int64_t i = 0; i < n; ++i) {
        float v = value(i0 + i);
        switch (dtype) {
          case fb::DType::F32: std::memcpy(&bytes[i * 4], &v, 4); break;
          case fb::DType::BF16: { uint16_t h = float_to_bf16(v); std::memcpy(&bytes[i * 2], &h, 2); break; }
          case fb::DType::F16: { uint16_t h = float_to_fp16(v); std::memcpy(&bytes[i * 2], &h, 2); break; }
          default: return bad_input("weight dtype not supported");
        }
      }
      if (interleave) OG_TRY(writer_.append_tensor_data(interleave_float_rows(bytes, n / cols, cols, static_cast<int64_t>(esize))));
      else OG_TRY(writer_.append_tensor_data(bytes));
    }
    writer_.end_tensor_data(rec);
    show_progress();
    return Status::ok();
  }

  // Quantized: codes into this tensor, f16 scales into a new one.
  const int32_t G = quant_.group_size;
  const int64_t row_code_bytes = bits == QuantBits::k8 ? cols : cols / 2;
  std::vector<uint8_t> codes(static_cast<size_t>(rows * row_code_bytes));
  std::vector<uint16_t> scales(static_cast<size_t>(rows * (cols / G)));
  // Rows in blocks over the default pool (quantization is per group: the result does not
  // depend on the split).
  constexpr int64_t kBlock = 16;
  default_thread_pool()->run((rows + kBlock - 1) / kBlock, [&](int64_t task) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = task * kBlock; r < std::min(rows, (task + 1) * kBlock); ++r) {
      for (int64_t c = 0; c < cols; ++c) row[c] = value(r * cols + c);
      quantize_row(row.data(), cols, G, bits, quant_.method, &codes[r * row_code_bytes], &scales[r * (cols / G)]);
    }
  });
  rec.dtype = bits == QuantBits::k8 ? fb::DType::Q8 : fb::DType::Q4;
  rec.group_size = G;
  // Read with int8 activations: interleaved, the layout the int8 kernels stream (kernels.h).
  // f32 activations keep the row-major layout, as does --layout row-major.
  if (quant_.int8_activations && quant_.interleave) {
    Interleaved q = interleave_rows(bits, codes, scales, rows, cols, G);
    codes = std::move(q.codes);
    scales = std::move(q.scales);
    rec.row_block = program::kRowBlock;
  }
  OG_TRY(write_data(id, codes));
  OG_ASSIGN_OR_RETURN(WeightId sid, write(rec.name + ".scales", fb::DType::F16,
                                          {program::stored_rows(rows, rec.row_block), cols / G},
                                          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(scales.data()),
                                                                   scales.size() * 2)));
  rec.scales = sid;  // (rec is the pointee, which does not move with the vector)
  ++n_quantized_;
  return Status::ok();
}

Result<WeightId> GraphBuilder::weight_f32(const std::string& name, std::span<const float> data,
                                          std::vector<int64_t> shape) {
  return write(name, fb::DType::F32, std::move(shape),
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()));
}

}  // namespace og::exporter
