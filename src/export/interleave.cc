#include "export/interleave.h"

#include <cstring>

#include "program/ops.h"

namespace og::exporter {

std::vector<uint8_t> interleave_float_rows(std::span<const uint8_t> row_major, int64_t rows, int64_t cols,
                                           int64_t elem_bytes) {
  constexpr int64_t B = program::kRowBlock;
  const int64_t P = 4 / elem_bytes, steps = cols / P, row_bytes = cols * elem_bytes;
  std::vector<uint8_t> out(static_cast<size_t>(program::stored_rows(rows, B) * row_bytes), 0);  // padding: zeros
  // Row 16b + i's column step p (P values, 4 bytes) is word i of the 64 bytes at
  // (b * steps + p) * 64 (program.fbs).
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / B, i = r % B;
    const uint8_t* src = row_major.data() + r * row_bytes;
    uint8_t* dst = out.data() + b * steps * 64 + i * 4;
    for (int64_t p = 0; p < steps; ++p) std::memcpy(dst + p * 64, src + p * 4, 4);
  }
  return out;
}

std::vector<bool> read_only_as_matrices(const fb::ProgramT& program) {
  const size_t n = program.tensors.size();
  std::vector<bool> matrix(n, false), other(n, false);  // [n_tensors] read as a matrix / otherwise
  auto mark = [&](std::vector<bool>& v, int32_t t) {
    if (t >= 0 && static_cast<size_t>(t) < n) v[static_cast<size_t>(t)] = true;
  };
  for (const auto& t : program.tensors) mark(other, t->scales);
  // Each op's tensors as its OpSpec lists them (program/ops.h), read from the op packed alone.
  flatbuffers::FlatBufferBuilder builder;
  for (const auto& op : program.ops) {
    builder.Clear();
    builder.Finish(fb::Op::Pack(builder, op.get()));
    for (const program::TensorUse& u : program::op_tensors(*flatbuffers::GetRoot<fb::Op>(builder.GetBufferPointer())))
      mark(u.read == program::TensorRead::kMatrix ? matrix : other, u.tensor);
  }
  // A head_linear's groups are whole 16-row blocks only when its rows per group divide by 16.
  for (const auto& op : program.ops)
    if (const fb::HeadLinearAttrsT* a = op->attrs.AsHeadLinearAttrs(); a != nullptr && a->weight >= 0 &&
                                                                        static_cast<size_t>(a->weight) < n) {
      const auto& shape = program.tensors[static_cast<size_t>(a->weight)]->shape;
      if (a->groups < 1 || shape.empty() || (shape[0] / a->groups) % 16 != 0) mark(other, a->weight);
    }
  std::vector<bool> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = matrix[i] && !other[i];
  return out;
}

}  // namespace og::exporter
