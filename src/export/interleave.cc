#include "export/interleave.h"

#include <cstring>

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
  for (const auto& op : program.ops) {
    const fb::OpAttrsUnion& u = op->attrs;
    // Every op kind is listed (no default): a new op's tensors must be classified here.
    switch (u.type) {
      case fb::OpAttrs::EmbeddingAttrs: mark(matrix, u.AsEmbeddingAttrs()->table); break;
      case fb::OpAttrs::LinearAttrs:
        mark(matrix, u.AsLinearAttrs()->weight);
        mark(other, u.AsLinearAttrs()->bias);
        break;
      case fb::OpAttrs::MoeAttrs: {
        const fb::MoeAttrsT& a = *u.AsMoeAttrs();
        for (const auto* ws : {&a.gate, &a.up, &a.down})
          for (int32_t w : *ws) mark(matrix, w);
        for (int32_t w : {a.shared_gate, a.shared_up, a.shared_down}) mark(matrix, w);
        for (int32_t w : {a.shared_expert_gate, a.expert_scale, a.gate_bias, a.up_bias, a.down_bias}) mark(other, w);
        break;
      }
      case fb::OpAttrs::RmsNormAttrs: mark(other, u.AsRmsNormAttrs()->weight); break;
      case fb::OpAttrs::RopeAttrs: mark(other, u.AsRopeAttrs()->inv_freq); break;
      case fb::OpAttrs::AttendAttrs: mark(other, u.AsAttendAttrs()->sinks); break;
      case fb::OpAttrs::StreamMixAttrs: mark(other, u.AsStreamMixAttrs()->coefs); break;
      case fb::OpAttrs::EmbeddingOverlayAttrs: mark(other, u.AsEmbeddingOverlayAttrs()->table); break;
      case fb::OpAttrs::NONE:
      case fb::OpAttrs::AddAttrs:
      case fb::OpAttrs::MulAttrs:
      case fb::OpAttrs::ScaleAttrs:
      case fb::OpAttrs::ActAttrs:
      case fb::OpAttrs::SoftcapAttrs:
      case fb::OpAttrs::SliceAttrs:
      case fb::OpAttrs::ConcatAttrs:
      case fb::OpAttrs::RmsMatchAttrs:
      case fb::OpAttrs::GaussianTopKAttrs: break;  // no tensors
    }
  }
  std::vector<bool> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = matrix[i] && !other[i];
  return out;
}

}  // namespace og::exporter
