#include "program/program_file.h"

#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include "program/validator.h"

namespace og::program {

// The program's DType values are the storage types' program codes (append-only both).
static_assert(storage_info(StorageType::kF32).program_code == static_cast<uint8_t>(fb::DType::F32));
static_assert(storage_info(StorageType::kF16).program_code == static_cast<uint8_t>(fb::DType::F16));
static_assert(storage_info(StorageType::kBF16).program_code == static_cast<uint8_t>(fb::DType::BF16));
static_assert(storage_info(StorageType::kQ8).program_code == static_cast<uint8_t>(fb::DType::Q8));
static_assert(storage_info(StorageType::kQ4).program_code == static_cast<uint8_t>(fb::DType::Q4));

std::optional<StorageType> storage_type_of(fb::DType t) {
  for (const StorageTypeInfo& i : kStorageTypes)
    if (i.program_code == static_cast<uint8_t>(t)) return i.type;
  return std::nullopt;
}

fb::DType program_dtype(StorageType t) { return static_cast<fb::DType>(storage_info(t).program_code); }

size_t fb_dtype_size(fb::DType t) {
  if (t == fb::DType::I32) return 4;
  const std::optional<StorageType> s = storage_type_of(t);
  if (!s) return 0;
  return storage_info(*s).bits / 8;  // Q4: 0, half a byte (see storage_bytes)
}

std::optional<uint64_t> storage_bytes(fb::DType t, uint64_t numel) {
  if (t == fb::DType::Q4) {
    if (numel % 2 != 0) return std::nullopt;
    return numel / 2;
  }
  const uint64_t size = fb_dtype_size(t);
  uint64_t n = 0;
  if (size == 0 || __builtin_mul_overflow(numel, size, &n)) return std::nullopt;
  return n;
}

bool is_quantized(fb::DType t) {
  const std::optional<StorageType> s = storage_type_of(t);
  return s && og::is_quantized(*s);
}

Result<std::unique_ptr<ProgramWriter>> ProgramWriter::create(const std::string& path) {
  auto w = std::unique_ptr<ProgramWriter>(new ProgramWriter());
  w->path_ = path;
  w->f_ = std::fopen(path.c_str(), "wb");
  if (w->f_ == nullptr) return resource_error("{}: cannot create: {}", path, std::strerror(errno));
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  w->hash_state_ = st;
  Preamble zero{};
  OG_TRY(w->write(&zero, sizeof zero));
  return w;
}

ProgramWriter::~ProgramWriter() {
  if (f_ != nullptr) std::fclose(f_);
  if (hash_state_ != nullptr) XXH3_freeState(static_cast<XXH3_state_t*>(hash_state_));
}

Status ProgramWriter::write(const void* p, size_t n) {
  if (n == 0) return Status::ok();
  if (std::fwrite(p, 1, n, f_) != n) return resource_error("{}: write failed: {}", path_, std::strerror(errno));
  return Status::ok();
}

Result<int32_t> ProgramWriter::add_tensor(fb::ProgramT& program, const std::string& name, fb::DType dtype,
                                          std::vector<int64_t> shape, std::span<const uint8_t> bytes) {
  auto t = std::make_unique<fb::TensorT>();
  t->name = name;
  t->dtype = dtype;
  t->shape = std::move(shape);
  OG_TRY(write_tensor_data(*t, bytes));
  program.tensors.push_back(std::move(t));
  return static_cast<int32_t>(program.tensors.size() - 1);
}

Status ProgramWriter::write_tensor_data(fb::TensorT& t, std::span<const uint8_t> bytes) {
  OG_TRY(begin_tensor_data(t));
  OG_TRY(append_tensor_data(bytes));
  end_tensor_data(t);
  return Status::ok();
}

Status ProgramWriter::begin_tensor_data(fb::TensorT& t) {
  static const uint8_t kZeros[kTensorAlignment] = {};
  size_t pad = (kTensorAlignment - data_size_ % kTensorAlignment) % kTensorAlignment;
  OG_TRY(write(kZeros, pad));
  XXH3_64bits_update(static_cast<XXH3_state_t*>(hash_state_), kZeros, pad);
  data_size_ += pad;
  t.offset = data_size_;
  t.nbytes = 0;
  return Status::ok();
}

Status ProgramWriter::append_tensor_data(std::span<const uint8_t> bytes) {
  OG_TRY(write(bytes.data(), bytes.size()));
  XXH3_64bits_update(static_cast<XXH3_state_t*>(hash_state_), bytes.data(), bytes.size());
  data_size_ += bytes.size();
  return Status::ok();
}

uint32_t required_format_version(const fb::ProgramT& program) {
  for (const auto& op : program.ops)
    if (op->attrs.AsEmbeddingAttrs() != nullptr && !op->inputs.empty() && op->inputs[0] == program.positions) return 11;
  for (const auto& op : program.ops) {
    if (op->attrs.AsHeadLinearAttrs() != nullptr || op->attrs.AsXieluAttrs() != nullptr) return 10;
    const fb::ActAttrsT* act = op->attrs.AsActAttrs();
    const fb::MoeAttrsT* moe = op->attrs.AsMoeAttrs();
    if ((act != nullptr && act->activation == fb::Activation::Relu2) || (moe != nullptr && moe->activation == fb::Activation::Relu2))
      return 10;
    if (const fb::ConcatAttrsT* a = op->attrs.AsConcatAttrs(); a != nullptr && a->groups != 1) return 10;
  }
  for (const auto& op : program.ops)
    if (const fb::MoeAttrsT* a = op->attrs.AsMoeAttrs())
      if (a->group_top != 2 || a->masked_key != 0.0f || (a->scoring == fb::RouterScoring::SoftmaxTopK && a->n_group != 1))
        return 9;
  for (const auto& op : program.ops)
    if (const fb::MoeAttrsT* a = op->attrs.AsMoeAttrs())
      if (a->scoring == fb::RouterScoring::SigmoidTopK || a->choice_bias >= 0 || a->n_group != 1 || a->topk_group != 1)
        return 8;
  for (const auto& op : program.ops) {
    if (op->attrs.AsLayerNormAttrs() != nullptr) return 7;
    const fb::ActAttrsT* act = op->attrs.AsActAttrs();
    const fb::MoeAttrsT* moe = op->attrs.AsMoeAttrs();
    if ((act != nullptr && act->activation == fb::Activation::Gelu) || (moe != nullptr && moe->activation == fb::Activation::Gelu))
      return 7;
  }
  for (const auto& op : program.ops)
    if (const fb::RopeAttrsT* a = op->attrs.AsRopeAttrs(); a != nullptr && a->long_inv_freq >= 0) return 6;
  for (const auto& op : program.ops)
    if (const fb::LinearAttrsT* a = op->attrs.AsLinearAttrs(); a != nullptr && a->bf16_activations) return 5;
  for (const auto& t : program.tensors)
    if (t->row_block != 0) return 4;
  for (const auto& op : program.ops)
    if (const fb::MoeAttrsT* a = op->attrs.AsMoeAttrs())
      if (a->expert_scale >= 0 || a->gate_bias >= 0 || a->up_bias >= 0 || a->down_bias >= 0 ||
          a->activation == fb::Activation::ClampedSwiglu)
        return 3;
  return 2;
}

Status ProgramWriter::finish(const fb::ProgramT& program) {
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  fbb.Finish(fb::Program::Pack(fbb, &program));
  static const uint8_t kZeros[8] = {};
  size_t pad = (8 - data_size_ % 8) % 8;  // FlatBuffers wants its buffer 8-aligned
  OG_TRY(write(kZeros, pad));
  XXH3_64bits_update(static_cast<XXH3_state_t*>(hash_state_), kZeros, pad);
  OG_TRY(write(fbb.GetBufferPointer(), fbb.GetSize()));
  XXH3_64bits_update(static_cast<XXH3_state_t*>(hash_state_), fbb.GetBufferPointer(), fbb.GetSize());
  Preamble p{};
  std::memcpy(p.magic, kMagic, 8);
  p.format_version = required_format_version(program);
  p.data_offset = kPreambleSize;
  p.data_size = data_size_;
  p.header_offset = kPreambleSize + data_size_ + pad;
  p.header_size = fbb.GetSize();
  p.checksum = XXH3_64bits_digest(static_cast<XXH3_state_t*>(hash_state_));
  p.header_checksum = XXH3_64bits(fbb.GetBufferPointer(), fbb.GetSize());
  if (std::fseek(f_, 0, SEEK_SET) != 0) return resource_error("{}: seek failed", path_);
  OG_TRY(write(&p, sizeof p));
  if (std::fclose(f_) != 0) {
    f_ = nullptr;
    return resource_error("{}: close failed: {}", path_, std::strerror(errno));
  }
  f_ = nullptr;
  return Status::ok();
}

Result<std::shared_ptr<ProgramFile>> ProgramFile::open(const std::string& path, Verify verify, Residency residency) {
  auto pf = std::shared_ptr<ProgramFile>(new ProgramFile());
  OG_ASSIGN_OR_RETURN(pf->file_, MappedFile::open(path, residency));
  const size_t size = pf->file_->size();
  if (size < kPreambleSize) return bad_input("{}: {} bytes, too short to be an offgraph program", path, size);
  Preamble p;
  std::memcpy(&p, pf->file_->data(), sizeof p);
  if (std::memcmp(p.magic, kMagic, 8) != 0) return bad_input("{}: not an offgraph program (bad magic)", path);
  if (p.format_version < kOldestReadableVersion || p.format_version > kFormatVersion)
    return bad_input("{}: program format version {} is not supported (this offgraph reads versions {} to {}); re-export it",
                     path, p.format_version, kOldestReadableVersion, kFormatVersion);
  if (p.data_offset != kPreambleSize || p.data_size > size - kPreambleSize || p.header_offset < kPreambleSize + p.data_size ||
      p.header_offset > size || p.header_size > size - p.header_offset || p.header_offset % 8 != 0)
    return bad_input("{}: segment offsets in the preamble are out of bounds (file is {} bytes); the file is truncated or corrupt",
                     path, size);
  if (p.header_offset + p.header_size != size)
    return bad_input("{}: file is {} bytes but the preamble describes {}; the file is truncated or corrupt", path, size,
                     p.header_offset + p.header_size);
  if (p.format_version >= 2) {
    const uint64_t hsum = XXH3_64bits(pf->file_->data() + p.header_offset, p.header_size);
    if (hsum != p.header_checksum)
      return bad_input("{}: header checksum mismatch (stored {:016x}, computed {:016x}); the file is corrupt", path,
                       p.header_checksum, hsum);
  }
  if (verify == Verify::kFull || p.format_version < 2) {
    const uint64_t sum = XXH3_64bits(pf->file_->data() + kPreambleSize, size - kPreambleSize);
    if (sum != p.checksum)
      return bad_input("{}: checksum mismatch (stored {:016x}, computed {:016x}); the file is corrupt", path, p.checksum, sum);
  }
  const uint64_t sum = p.checksum;
  const uint8_t* header = pf->file_->data() + p.header_offset;
  flatbuffers::Verifier verifier(header, p.header_size, 64, 10'000'000);
  if (!fb::VerifyProgramBuffer(verifier)) return bad_input("{}: program header fails FlatBuffers verification", path);
  pf->program_ = fb::GetProgram(header);
  pf->checksum_ = sum;
  pf->format_version_ = p.format_version;
  pf->data_ = pf->file_->data() + p.data_offset;
  pf->data_size_ = p.data_size;
  OG_TRY(validate_program(*pf->program_, pf->data_size_).with_context(path));
  return pf;
}

const uint8_t* ProgramFile::tensor_data(int32_t i) const {
  return data_ + program_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i))->offset();
}

}  // namespace og::program
