// The program file: a fixed preamble, the weight data segment, then the FlatBuffers header.
//
//   [0, 64)    preamble: magic "OFFGRAPH", format version, segment offsets and sizes,
//              XXH3-64 checksum of every byte from 64 to the end of the file (the
//              program's identity), XXH3-64 of the header segment alone (version 2)
//   [64, ...)  data segment: tensors, each 64-byte aligned (zero-copy mmap)
//   [...]      FlatBuffers `og.fb.Program` header (program.fbs)
//
// Weights are streamed to disk as they are produced; the header comes last so its size
// need not be known in advance. Loading verifies magic, version, bounds, the header's
// checksum, the FlatBuffers structure and every rule of the validator before anything is
// read. The whole-file checksum is verified on request (Verify::kFull, `inspect
// --verify`): reading every weight page at load would make a 10 GB program take seconds to
// load and hold all of it resident, while a corrupt weight byte can only change numbers
// (every offset and size is validated; no value in the weight segment is an index).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/mapped_file.h"
#include "base/status.h"
#include "base/storage_type.h"
#include "program/program_generated.h"

namespace og::program {

inline constexpr char kMagic[8] = {'O', 'F', 'F', 'G', 'R', 'A', 'P', 'H'};
// The newest version this build reads and writes. A program is written as the oldest version
// that can express it (required_format_version): 11 with an embedding of the positions (a learned
// position table), 10 with a head_linear or xielu op, a grouped
// concat or the Relu2 activation,
// 9 with grouped softmax routing, a group
// score of other than two experts or another masked key, 8 with a sigmoid-routed mixture of experts,
// else 7 with a layer_norm op or the exact Gelu, else 6 when a rope has a second frequency
// table, else 5 when a linear takes bf16 activations, else
// 4 when a tensor is interleaved, else 3 when
// an op uses a version-3 field, else 2. FlatBuffers lets an older reader skip unknown fields
// silently, so their presence must be announced by the version, which such a reader refuses.
// Version 3: MoeAttrs expert_scale, gate/up/down_bias, ClampedSwiglu.
// Version 4: Tensor row_block (F32 / BF16 / F16 values and Q4 / Q8 codes and scales
// interleaved by blocks of 16 rows; a reader that ignored it would read them as row-major).
// Version 5: LinearAttrs bf16_activations (a reader that ignored it would compute in f32).
// Version 6: RopeAttrs long_inv_freq / long_from (a reader that ignored them would rotate
// positions past long_from with the other table).
// Version 7: the layer_norm op and the Gelu activation (an older reader's op table and
// activation switch would refuse or misread them).
// Version 8: MoeAttrs scoring SigmoidTopK, choice_bias, n_group / topk_group (a reader that
// ignored the bias or the groups would pick other experts).
// Version 9: MoeAttrs group_top and masked_key, and expert groups under SoftmaxTopK (a version-8
// reader would score groups by their two best experts, read a left-out group's experts as 0, or
// not group a softmax router at all).
// Version 10: the head_linear and xielu ops, ConcatAttrs groups and the Relu2 activation (an
// older reader's op table would refuse the ops, one that ignored the groups would join whole
// rows, and its activation check would refuse Relu2).
// Version 11: an embedding op of the positions value (a learned position table, GPT-2's wpe; an
// older reader embedded the token ids whatever the op's input).
inline constexpr uint32_t kFormatVersion = 11;
inline constexpr uint32_t kOldestReadableVersion = 1;  // version 1: no header checksum; verified in full
inline constexpr size_t kPreambleSize = 64;
inline constexpr size_t kTensorAlignment = 64;

struct Preamble {
  char magic[8];
  uint32_t format_version;
  uint32_t reserved0;
  uint64_t data_offset;
  uint64_t data_size;
  uint64_t header_offset;
  uint64_t header_size;
  uint64_t checksum;         // XXH3-64 of bytes [64, file end)
  uint64_t header_checksum;  // XXH3-64 of the header segment (version 2; 0 in version 1)
};
static_assert(sizeof(Preamble) == kPreambleSize);

// The oldest format version that expresses `program` (2 to 11; see kFormatVersion).
uint32_t required_format_version(const fb::ProgramT& program);

// Tensor::row_block of an interleaved matrix (program.fbs; kernels::kRowBlock).
inline constexpr int32_t kRowBlock = 16;
// Values of one row in a 32-bit word of an interleaved float matrix (program.fbs): F32 1,
// BF16 / F16 2, so its columns are a multiple of it; 0 for other dtypes (Q4 / Q8 interleave
// by groups instead).
inline int64_t interleaved_lane_values(fb::DType t) {
  return t == fb::DType::F32 ? 1 : t == fb::DType::BF16 || t == fb::DType::F16 ? 2 : 0;
}
// Rows a matrix of `rows` rows stores with `row_block` (0: row-major, all its rows; else
// whole blocks, the last one padded).
inline int64_t stored_rows(int64_t rows, int32_t row_block) {
  return row_block == 0 ? rows : (rows + row_block - 1) / row_block * row_block;
}

// The storage type a tensor DType is (base/storage_type.h: its program_code is the DType's
// value), or nullopt for I32, which only values and token tensors use.
std::optional<StorageType> storage_type_of(fb::DType t);
fb::DType program_dtype(StorageType t);
// Bytes per element of an unquantized dtype (Q8: 1; Q4: 0, it packs two per byte).
size_t fb_dtype_size(fb::DType t);
// Bytes of numel elements stored as t (Q4: two per byte); nullopt if they cannot be.
std::optional<uint64_t> storage_bytes(fb::DType t, uint64_t numel);
// Q8 or Q4: group-quantized, with a scales tensor.
bool is_quantized(fb::DType t);

// Streams tensors to a new program file, then the header.
class ProgramWriter {
 public:
  static Result<std::unique_ptr<ProgramWriter>> create(const std::string& path);
  ~ProgramWriter();

  // Appends a tensor's bytes; records it in `program.tensors` and returns its index.
  Result<int32_t> add_tensor(fb::ProgramT& program, const std::string& name, fb::DType dtype,
                             std::vector<int64_t> shape, std::span<const uint8_t> bytes);
  // Appends the bytes of a tensor already recorded (name, dtype, shape set): fills its
  // offset and nbytes.
  Status write_tensor_data(fb::TensorT& tensor, std::span<const uint8_t> bytes);
  // The same in pieces: begin (sets offset), append any number of times, end (sets nbytes).
  Status begin_tensor_data(fb::TensorT& tensor);
  Status append_tensor_data(std::span<const uint8_t> bytes);
  void end_tensor_data(fb::TensorT& tensor) { tensor.nbytes = data_size_ - tensor.offset; }
  uint64_t bytes_written() const { return data_size_; }
  // Writes the header and the preamble; the file is complete after this.
  Status finish(const fb::ProgramT& program);

 private:
  ProgramWriter() = default;
  Status write(const void* p, size_t n);
  std::string path_;
  std::FILE* f_ = nullptr;
  uint64_t data_size_ = 0;
  void* hash_state_ = nullptr;  // XXH3_state_t
};

// A loaded, verified program: the mapping plus typed access to the header.
class ProgramFile {
 public:
  enum class Verify { kHeader, kFull };
  // residency: the file mapped in place (inspect, export checks) or read into huge pages
  // (what runs it: base/mapped_file.h).
  static Result<std::shared_ptr<ProgramFile>> open(const std::string& path, Verify verify = Verify::kHeader,
                                                   Residency residency = Residency::kMapped);

  const fb::Program& program() const { return *program_; }
  const std::string& path() const { return file_->path(); }
  uint64_t file_size() const { return file_->size(); }
  Residency residency() const { return file_->residency(); }
  // The verified XXH3-64 of the program: its identity (cache files are tied to it).
  uint64_t checksum() const { return checksum_; }
  // The preamble's format version (kOldestReadableVersion .. kFormatVersion).
  uint32_t format_version() const { return format_version_; }
  // Start of tensor i's bytes in the mapping (bounds verified at load).
  const uint8_t* tensor_data(int32_t i) const;

 private:
  std::shared_ptr<MappedFile> file_;
  const fb::Program* program_ = nullptr;
  const uint8_t* data_ = nullptr;
  uint64_t data_size_ = 0;
  uint64_t checksum_ = 0;
  uint32_t format_version_ = 0;
};

}  // namespace og::program
