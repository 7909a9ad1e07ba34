// Interleaved float matrices (program.fbs, row_block 16) at export, in the validator and at
// binding. The layout is checked against the element index of kernels.h, transcribed here:
//   (row 16b + i, column k) is element ((b * cols / P + k / P) * 16 + i) * P + k % P,
// P = 4 / element bytes, padding rows zero. What the interleaved kernels compute from these
// bytes is kernels_test's business; here the bytes themselves, and who may read them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>

#include "e2e_support.h"
#include "export/interleave.h"
#include "program/program_file.h"
#include "program/validator.h"
#include "runtime/model.h"
#include "runtime/program_info.h"

namespace og {
namespace {

using namespace og::testing;

// Element index of (r, k) in an interleaved matrix of `cols` columns, P values per lane.
int64_t interleaved_index(int64_t r, int64_t k, int64_t cols, int64_t P) {
  const int64_t b = r / 16, i = r % 16;
  return ((b * cols / P + k / P) * 16 + i) * P + k % P;
}

// For f32, bf16 and f16 element sizes and row counts around whole blocks: every value of a
// random row-major matrix is at its formula index, every padding element is zero, the size
// is the padded rows', and converting in pieces of whole blocks (as the exporter streams a
// large matrix) gives the same bytes as converting at once.
TEST(InterleaveFloat, EveryValueLandsAtTheElementIndexOfKernelsH) {
  std::mt19937 rng(5);
  for (const int64_t esize : {4, 2}) {
    const int64_t P = 4 / esize;
    for (const int64_t rows : {1, 7, 15, 16, 17, 33, 40})
      for (const int64_t cols : {P, 3 * P, int64_t{64}, int64_t{66}}) {
        SCOPED_TRACE(::testing::Message() << "element bytes " << esize << ", " << rows << " x " << cols);
        std::vector<uint8_t> in(static_cast<size_t>(rows * cols * esize));
        for (uint8_t& b : in) b = static_cast<uint8_t>(rng() | 1);  // no zero byte: padding is told apart
        const std::vector<uint8_t> out = exporter::interleave_float_rows(in, rows, cols, esize);
        const int64_t stored = (rows + 15) / 16 * 16;
        ASSERT_EQ(out.size(), static_cast<size_t>(stored * cols * esize));
        for (int64_t r = 0; r < stored; ++r)
          for (int64_t k = 0; k < cols; ++k) {
            const uint8_t* got = &out[static_cast<size_t>(interleaved_index(r, k, cols, P) * esize)];
            for (int64_t j = 0; j < esize; ++j)
              ASSERT_EQ(got[j], r < rows ? in[static_cast<size_t>((r * cols + k) * esize + j)] : 0)
                  << "row " << r << " col " << k << " byte " << j;
          }
        if (rows > 16) {  // the first block, then the rest
          const size_t split = static_cast<size_t>(16 * cols * esize);
          std::vector<uint8_t> pieces = exporter::interleave_float_rows({in.data(), split}, 16, cols, esize);
          const std::vector<uint8_t> rest =
              exporter::interleave_float_rows({in.data() + split, in.size() - split}, rows - 16, cols, esize);
          pieces.insert(pieces.end(), rest.begin(), rest.end());
          EXPECT_EQ(pieces, out);
        }
      }
  }
}

int64_t element_bytes(fb::DType t) { return t == fb::DType::F32 ? 4 : 2; }

// Exports of the same checkpoint, by default (interleaved) and with --layout row-major, for
// each float dtype: every 2-D weight is interleaved in the first (this llama reads all its
// matrices through linear and embedding), holds exactly the row-major export's bytes at the
// formula's index, and zeros in its padding rows; 1-D weights are the same bytes in both. The
// intermediate size (200) and vocabulary (328) end gate/up and the head in a partial block.
// The row-major file is format version 2 with no row_block; the interleaved one version 4,
// and the runtime binds each matrix with its row_block.
TEST(InterleavedExport, FloatMatricesHoldTheRowMajorValuesPaddedWithZeros) {
  auto g = generate({.family = "llama", .dtype = DType::kBF16, .seed = 4, .tie_word_embeddings = false,
                     .overrides = {{"hidden_size", 128}, {"intermediate_size", 200}, {"vocab_size", 328}}});
  for (const char* dtype : {"bf16", "fp32", "fp16"}) {
    SCOPED_TRACE(dtype);
    const std::string a_path = export_with(*g, std::string(dtype) + "-i.ogp", {.dtype = dtype});
    const std::string r_path = export_with(*g, std::string(dtype) + "-r.ogp", {.dtype = dtype, .layout = "row-major"});
    auto a = program::ProgramFile::open(a_path);
    auto r = program::ProgramFile::open(r_path);
    ASSERT_TRUE(a.is_ok() && r.is_ok());
    EXPECT_EQ((*a)->format_version(), 4u);
    EXPECT_EQ((*r)->format_version(), 2u);
    const auto& ta = *(*a)->program().tensors();
    const auto& tr = *(*r)->program().tensors();
    ASSERT_EQ(ta.size(), tr.size());
    int interleaved = 0;
    int64_t padding_rows = 0;
    for (uint32_t i = 0; i < ta.size(); ++i) {
      const fb::Tensor* t = ta.Get(i);
      SCOPED_TRACE(t->name()->str());
      ASSERT_EQ(tr.Get(i)->name()->str(), t->name()->str());
      ASSERT_EQ(tr.Get(i)->dtype(), t->dtype());
      EXPECT_EQ(tr.Get(i)->row_block(), 0);
      const uint8_t* pa = (*a)->tensor_data(static_cast<int32_t>(i));
      const uint8_t* pr = (*r)->tensor_data(static_cast<int32_t>(i));
      if (t->shape()->size() != 2) {
        EXPECT_EQ(t->row_block(), 0);
        ASSERT_EQ(t->nbytes(), tr.Get(i)->nbytes());
        EXPECT_EQ(std::memcmp(pa, pr, t->nbytes()), 0);
        continue;
      }
      ASSERT_EQ(t->row_block(), 16);
      ++interleaved;
      const int64_t rows = t->shape()->Get(0), cols = t->shape()->Get(1), stored = (rows + 15) / 16 * 16;
      const int64_t esize = element_bytes(t->dtype()), P = 4 / esize;
      ASSERT_EQ(t->nbytes(), static_cast<uint64_t>(stored * cols * esize));
      for (int64_t row = 0; row < stored; ++row)
        for (int64_t k = 0; k < cols; ++k) {
          const uint8_t* got = pa + interleaved_index(row, k, cols, P) * esize;
          static const uint8_t kZero[4] = {};
          const uint8_t* want = row < rows ? pr + (row * cols + k) * esize : kZero;
          ASSERT_EQ(std::memcmp(got, want, static_cast<size_t>(esize)), 0) << "row " << row << " col " << k;
        }
      padding_rows += stored - rows;
    }
    EXPECT_EQ(interleaved, 2 + 7 * 4);  // table, head, and q/k/v/o/gate/up/down of 4 layers
    EXPECT_GT(padding_rows, 0);
    // Bound with the layout the file names.
    auto ma = runtime::Model::load(a_path);
    auto mr = runtime::Model::load(r_path);
    ASSERT_TRUE(ma.is_ok() && mr.is_ok()) << (ma.is_ok() ? mr.status().message() : ma.status().message());
    int bound = 0;
    for (size_t k = 0; k < (*ma)->ops().size(); ++k) {
      const runtime::BoundOp& op = (*ma)->ops()[k];
      if (op.kind != runtime::OpKind::kLinear && op.kind != runtime::OpKind::kEmbedding) continue;
      EXPECT_EQ(op.matrix.row_block, 16) << "op " << k;
      EXPECT_EQ((*mr)->ops()[k].matrix.row_block, 0) << "op " << k;
      ++bound;
    }
    EXPECT_EQ(bound, interleaved);
    // inspect reports them (and the format version).
    const auto info = runtime::program_info_json(**a, false);
    EXPECT_EQ(info["interleaved_tensors"].get<int>(), interleaved);
    EXPECT_EQ(info["format_version"].get<uint32_t>(), 4u);
    EXPECT_EQ(runtime::program_info_json(**r, false)["interleaved_tensors"].get<int>(), 0);
  }
}

// The exporter streams a matrix in pieces of at most 16 MB; interleaved, a piece is whole
// 16-row blocks. A [4200, 1000] table (16.8 MB in f32; 1000 columns, so 16 MB is not whole
// rows) and head are written in two pieces, the second ending in a partial block: copied as
// they are (an f32 checkpoint exported as fp32) or converted (as bf16), they hold the
// row-major export's values at the formula's index.
TEST(InterleavedExport, MatricesLargerThanOneWritePieceAreInterleavedWhole) {
  auto g = generate({.family = "llama", .seed = 8, .tie_word_embeddings = false,
                     .overrides = {{"hidden_size", 1000}, {"intermediate_size", 64}, {"vocab_size", 4200},
                                   {"num_hidden_layers", 1}}});
  for (const char* dtype : {"fp32", "bf16"}) {
    SCOPED_TRACE(dtype);
    auto a = program::ProgramFile::open(export_with(*g, std::string(dtype) + "-i.ogp", {.dtype = dtype}));
    auto r = program::ProgramFile::open(export_with(*g, std::string(dtype) + "-r.ogp", {.dtype = dtype, .layout = "row-major"}));
    ASSERT_TRUE(a.is_ok() && r.is_ok());
    int checked = 0;
    for (uint32_t i = 0; i < (*a)->program().tensors()->size(); ++i) {
      const fb::Tensor* t = (*a)->program().tensors()->Get(i);
      if (t->shape()->size() != 2 || t->shape()->Get(0) != 4200) continue;
      SCOPED_TRACE(t->name()->str());
      ASSERT_EQ(t->row_block(), 16);
      const int64_t esize = element_bytes(t->dtype()), P = 4 / esize, cols = 1000;
      const uint8_t* pa = (*a)->tensor_data(static_cast<int32_t>(i));
      const uint8_t* pr = (*r)->tensor_data(static_cast<int32_t>(i));
      ASSERT_EQ(t->nbytes(), static_cast<uint64_t>(4208 * cols * esize));
      for (int64_t row = 0; row < 4208; ++row)
        for (int64_t k = 0; k < cols; ++k) {
          static const uint8_t kZero[4] = {};
          const uint8_t* want = row < 4200 ? pr + (row * cols + k) * esize : kZero;
          ASSERT_EQ(std::memcmp(pa + interleaved_index(row, k, cols, P) * esize, want, static_cast<size_t>(esize)), 0)
              << "row " << row << " col " << k;
        }
      ++checked;
    }
    EXPECT_EQ(checked, 2);  // table and head
  }
}

// --layout row-major keeps quantized matrices row-major too, still with int8 activations;
// the default interleaves them (and the float table beside them).
TEST(InterleavedExport, RowMajorLayoutKeepsQuantizedMatricesRowMajor) {
  auto g = generate({.family = "llama", .seed = 2, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  for (const char* layout : {"interleaved", "row-major"}) {
    SCOPED_TRACE(layout);
    const std::string path = export_with(*g, std::string(layout) + ".ogp", {.qlinear = "4w", .layout = layout});
    auto pf = program::ProgramFile::open(path);
    ASSERT_TRUE(pf.is_ok()) << pf.status().message();
    const bool interleaved = std::string(layout) == "interleaved";
    EXPECT_EQ(pf.value()->format_version(), interleaved ? 4u : 2u);
    int quantized = 0, int8 = 0;
    for (const fb::Tensor* t : *(*pf)->program().tensors()) {
      if (!program::is_quantized(t->dtype())) continue;
      ++quantized;
      EXPECT_EQ(t->row_block(), interleaved ? 16 : 0) << t->name()->str();
    }
    for (const fb::Op* op : *(*pf)->program().ops())
      if (const fb::LinearAttrs* a = op->attrs_as_LinearAttrs(); a != nullptr) int8 += a->int8_activations();
    EXPECT_GT(quantized, 0);
    EXPECT_EQ(int8, quantized);  // every quantized matrix is a linear's (the table stays fp32)
  }
}

// Which matrices each family's default export interleaves: only those linear, embedding and
// moe read (the validator refuses any other reader, so every export loads), never the moe's
// biases, its shared expert's one-row gate or an embedding overlay, which are read row-major.
TEST(InterleavedExport, EveryFamilyLoadsWithOnlyMatrixReadersOnInterleavedTensors) {
  std::vector<std::string> families = testgen::generator_families();
  if (std::find(families.begin(), families.end(), "gpt_oss") == families.end()) families.push_back("gpt_oss");
  for (const std::string& family : families) {
    SCOPED_TRACE(family);
    auto g = generate({.family = family, .seed = 6});
    const std::string path = export_with(*g, "p.ogp", {.dtype = "bf16"});
    auto m = runtime::Model::load(path);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    const fb::Program& p = (*m)->program();
    std::vector<int> matrix_reads(p.tensors()->size(), 0);  // [n_tensors] slots of linear / embedding / moe matrices
    auto read = [&](int32_t t) {
      if (t >= 0) ++matrix_reads[static_cast<size_t>(t)];
    };
    for (const fb::Op* op : *p.ops()) {
      if (auto a = op->attrs_as_LinearAttrs()) read(a->weight());
      if (auto a = op->attrs_as_EmbeddingAttrs()) read(a->table());
      if (auto a = op->attrs_as_HeadLinearAttrs()) {  // interleaved only in whole blocks per group
        read(a->weight());
        const fb::Tensor* w = p.tensors()->Get(static_cast<uint32_t>(a->weight()));
        if (w->row_block() != 0) {
          EXPECT_EQ(w->shape()->Get(0) / a->groups() % 16, 0) << w->name()->str();
        }
      }
      if (auto a = op->attrs_as_MoeAttrs()) {
        for (const auto* v : {a->gate(), a->up(), a->down()})
          for (int32_t t : *v) read(t);
        for (int32_t t : {a->shared_gate(), a->shared_up(), a->shared_down()}) read(t);
        // Read row-major by pointer, or refused interleaved by the validator:
        for (int32_t t : {a->shared_expert_gate(), a->expert_scale(), a->gate_bias(), a->up_bias(), a->down_bias()})
          if (t >= 0) {
            EXPECT_EQ(p.tensors()->Get(static_cast<uint32_t>(t))->row_block(), 0) << t;
          }
      }
      if (auto a = op->attrs_as_EmbeddingOverlayAttrs()) {
        EXPECT_EQ(p.tensors()->Get(static_cast<uint32_t>(a->table()))->row_block(), 0);
      }
    }
    int interleaved = 0;
    for (uint32_t i = 0; i < p.tensors()->size(); ++i)
      if (p.tensors()->Get(i)->row_block() != 0) {
        ++interleaved;
        EXPECT_GT(matrix_reads[i], 0) << p.tensors()->Get(i)->name()->str();
      }
    EXPECT_GT(interleaved, 0);
    // The bound matrices carry the tensor's row_block, experts included.
    for (const runtime::BoundOp& op : (*m)->ops())
      if (op.kind == runtime::OpKind::kMoe) {
        const kernels::MoeParams& mp = (*m)->moe(op.moe);
        EXPECT_EQ(mp.gate[0].row_block, 16);
        EXPECT_EQ(mp.down[mp.n_experts - 1].row_block, 16);
      }
  }
}

TEST(InterleavedExport, AnUnknownLayoutIsAUsageError) {
  auto g = generate({.family = "llama", .seed = 1});
  exporter::ExportOptions o{.model = g->model_dir(), .output = g->dir.file("x.ogp"), .layout = "blocked"};
  auto s = exporter::export_program(o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kUsage);
  EXPECT_NE(s.status().message().find("--layout 'blocked': expected interleaved or row-major"), std::string::npos)
      << s.status().message();
  EXPECT_FALSE(std::filesystem::exists(o.output));
}

// ------------------------------------------------------------------------------ validator

// The validator's verdict on pf's program after `edit` (repacked): a refusal with `expect`
// in its message, which it returns.
std::string refusal(const program::ProgramFile& pf, const std::function<void(fb::ProgramT&)>& edit,
                    const std::string& expect) {
  fb::ProgramT p;
  pf.program().UnPackTo(&p);
  edit(p);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::Program::Pack(fbb, &p));
  const Status s = program::validate_program(*fb::GetProgram(fbb.GetBufferPointer()), pf.file_size());
  EXPECT_FALSE(s.is_ok()) << expect;
  EXPECT_NE(s.message().find(expect), std::string::npos) << s.message();
  return s.message();
}

int32_t tensor_named(const fb::ProgramT& p, const std::function<bool(const fb::TensorT&)>& pred) {
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (pred(*p.tensors[i])) return static_cast<int32_t>(i);
  return -1;
}

// Interleaved float tensors the validator refuses, each error naming the tensor: a 1-D one,
// a BF16 matrix of odd width (a 32-bit lane holds two values of a row), bytes of the
// unpadded rows, I32 storage; and an interleaved matrix where a reader takes row-major floats
// by pointer (a moe's expert bias) names the op and the tensor.
TEST(InterleavedValidator, BadFloatInterleavingIsRefusedNamingTheTensor) {
  auto g = generate({.family = "llama", .seed = 2, .tie_word_embeddings = false,
                     .overrides = {{"hidden_size", 128}, {"intermediate_size", 200}}});
  auto pf = program::ProgramFile::open(export_with(*g, "b.ogp", {.dtype = "bf16"}));
  ASSERT_TRUE(pf.is_ok()) << pf.status().message();
  fb::ProgramT base;
  (*pf)->program().UnPackTo(&base);
  const int32_t gate = tensor_named(base, [](const fb::TensorT& t) { return t.name.ends_with("gate_proj.weight"); });
  const int32_t norm = tensor_named(base, [](const fb::TensorT& t) { return t.shape.size() == 1; });
  ASSERT_TRUE(gate >= 0 && norm >= 0);
  ASSERT_EQ(base.tensors[gate]->dtype, fb::DType::BF16);
  ASSERT_EQ(base.tensors[gate]->row_block, 16);
  ASSERT_EQ(base.tensors[gate]->shape, (std::vector<int64_t>{200, 128}));
  auto check = [&](const program::ProgramFile& f, const fb::ProgramT& b, int32_t tensor,
                   const std::function<void(fb::ProgramT&)>& edit, const std::string& expect) {
    const std::string message = refusal(f, edit, expect);
    EXPECT_NE(message.find(fmt::format("tensor {} '{}'", tensor, b.tensors[tensor]->name)), std::string::npos) << message;
  };
  check(**pf, base, norm, [&](fb::ProgramT& p) { p.tensors[norm]->row_block = 16; }, "interleaved but not a matrix");
  check(**pf, base, gate, [&](fb::ProgramT& p) {
    p.tensors[gate]->shape = {200, 127};
    p.tensors[gate]->nbytes = 208 * 127 * 2;
  }, "interleaved BF16 with 127 columns, not a multiple of 2");
  check(**pf, base, gate, [&](fb::ProgramT& p) { p.tensors[gate]->nbytes = 200 * 128 * 2; },
        "51200 bytes for an interleaved shape needing 53248 (its 200 rows padded to 208)");
  check(**pf, base, gate, [&](fb::ProgramT& p) { p.tensors[gate]->dtype = fb::DType::I32; },
        "row_block 16 on I32 storage; only F32, BF16, F16, Q4 and Q8 are interleaved");
  check(**pf, base, gate, [&](fb::ProgramT& p) { p.tensors[gate]->row_block = 0; }, "53248 bytes for a shape needing 51200");

  // gpt_oss's expert biases [E, I] are matrices read by pointer: interleaving one (bytes
  // padded consistently) passes the tensor checks and is refused at its reader.
  auto moe = generate({.family = "gpt_oss", .seed = 3, .overrides = {{"hidden_size", 64}, {"intermediate_size", 96}}});
  auto mf = program::ProgramFile::open(export_with(*moe, "m.ogp", {}));
  ASSERT_TRUE(mf.is_ok()) << mf.status().message();
  fb::ProgramT mb;
  (*mf)->program().UnPackTo(&mb);
  int32_t moe_op = -1, bias = -1;
  for (size_t i = 0; i < mb.ops.size() && moe_op < 0; ++i)
    if (const fb::MoeAttrsT* a = mb.ops[i]->attrs.AsMoeAttrs(); a != nullptr && a->gate_bias >= 0) {
      moe_op = static_cast<int32_t>(i);
      bias = a->gate_bias;
    }
  ASSERT_GE(bias, 0);
  ASSERT_EQ(mb.tensors[bias]->row_block, 0);
  const std::vector<int64_t> shape = mb.tensors[bias]->shape;
  ASSERT_EQ(shape.size(), 2u);
  const std::string message = refusal(**mf, [&](fb::ProgramT& p) {
    p.tensors[bias]->row_block = 16;
    p.tensors[bias]->nbytes = static_cast<uint64_t>(program::stored_rows(shape[0], 16) * shape[1] * 4);
  }, fmt::format("op {} (moe): weight tensor {} '{}' is interleaved (row_block 16)", moe_op, bias, mb.tensors[bias]->name));
  EXPECT_NE(message.find("only the matrices of linear, embedding, moe and head_linear may be"), std::string::npos) << message;
}

// Latent attention's per-head matrices (head_linear): the exporter interleaves one whose groups
// are whole blocks of 16 rows (W_UK^T: kv_lora_rank 32 rows a head) and keeps the other
// row-major (W_UV with v_head_dim 24); the validator refuses an interleaved one whose groups
// are not, widths the groups and stride disagree with, and a concat whose
// groups do not divide its inputs, each naming the op.
TEST(InterleavedValidator, HeadLinearAndGroupedConcatAreChecked) {
  auto g = generate({.family = "deepseek_v3", .seed = 4, .overrides = {{"v_head_dim", 24}}});
  auto pf = program::ProgramFile::open(export_with(*g, "h.ogp", {}));
  ASSERT_TRUE(pf.is_ok()) << pf.status().message();
  fb::ProgramT base;
  (*pf)->program().UnPackTo(&base);
  int32_t uk = -1, uv = -1, concat = -1;  // the first layer's ops
  for (size_t i = 0; i < base.ops.size(); ++i) {
    if (base.ops[i]->attrs.AsHeadLinearAttrs() != nullptr) {
      if (uk < 0) uk = static_cast<int32_t>(i);
      else if (uv < 0) uv = static_cast<int32_t>(i);
    }
    if (const fb::ConcatAttrsT* a = base.ops[i]->attrs.AsConcatAttrs(); a != nullptr && a->groups > 1 && concat < 0)
      concat = static_cast<int32_t>(i);
  }
  ASSERT_TRUE(uk >= 0 && uv >= 0 && concat >= 0);
  const int32_t wuk = base.ops[uk]->attrs.AsHeadLinearAttrs()->weight, wuv = base.ops[uv]->attrs.AsHeadLinearAttrs()->weight;
  EXPECT_EQ(base.tensors[wuk]->row_block, 16) << base.tensors[wuk]->name;
  EXPECT_EQ(base.tensors[wuk]->shape, (std::vector<int64_t>{4 * 32, 16}));
  EXPECT_EQ(base.tensors[wuv]->row_block, 0) << base.tensors[wuv]->name;
  EXPECT_EQ(base.tensors[wuv]->shape, (std::vector<int64_t>{4 * 24, 32}));
  EXPECT_EQ(base.ops[uv]->attrs.AsHeadLinearAttrs()->in_stride, 32 + 8);  // [ckv | k_pe] per head
  EXPECT_EQ(base.ops[concat]->attrs.AsConcatAttrs()->groups, 4);
  refusal(**pf, [&](fb::ProgramT& p) { p.tensors[wuv]->row_block = 16; },  // 96 rows: no padding
          fmt::format("op {} (head_linear): weight {} is interleaved but a group's 24 rows are not whole blocks of 16", uv, wuv));
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[uv]->attrs.AsHeadLinearAttrs()->groups = 3; },
          fmt::format("op {} (head_linear): weight [96, 32] in 3 groups", uv));
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[uv]->attrs.AsHeadLinearAttrs()->in_stride = 31; },
          fmt::format("op {} (head_linear): weight [96, 32] in 4 groups of stride 31", uv));
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[concat]->attrs.AsConcatAttrs()->groups = 3; },
          fmt::format("op {} (concat): 3 groups do not divide the widths", concat));
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[concat]->attrs.AsConcatAttrs()->groups = 0; },
          fmt::format("op {} (concat): 0 groups", concat));
  // The latent's caches keep v as k: an attention writing another value as v is refused.
  std::vector<int32_t> attends;
  for (size_t i = 0; i < base.ops.size(); ++i)
    if (base.ops[i]->attrs.AsAttendAttrs() != nullptr) attends.push_back(static_cast<int32_t>(i));
  ASSERT_GE(attends.size(), 2u);
  ASSERT_EQ(base.ops[attends[0]]->inputs[1], base.ops[attends[0]]->inputs[2]);
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[attends[1]]->inputs[2] = p.ops[attends[0]]->inputs[1]; },
          fmt::format("op {} (update_and_attend): cache 1 keeps its v as its k, but k and v are different values", attends[1]));
}

// xielu's coefficients must be finite: an infinite one is refused naming the op.
TEST(InterleavedValidator, XieluWithANonFiniteCoefficientIsRefused) {
  auto g = generate({.family = "apertus", .seed = 4});
  auto pf = program::ProgramFile::open(export_with(*g, "x.ogp", {}));
  ASSERT_TRUE(pf.is_ok()) << pf.status().message();
  fb::ProgramT base;
  (*pf)->program().UnPackTo(&base);
  int32_t op = -1;
  for (size_t i = 0; i < base.ops.size() && op < 0; ++i)
    if (base.ops[i]->attrs.AsXieluAttrs() != nullptr) op = static_cast<int32_t>(i);
  ASSERT_GE(op, 0);
  refusal(**pf, [&](fb::ProgramT& p) { p.ops[op]->attrs.AsXieluAttrs()->alpha_n = INFINITY; },
          fmt::format("op {} (xielu): coefficients", op));
}

}  // namespace
}  // namespace og
