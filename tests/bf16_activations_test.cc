// --qactivations bf16: linears over bf16 weights take x rounded to bf16 and sum pairs of
// columns as vdpbf16ps does (kernels::XQuant::kBF16; the kernel itself: kernels_test).
//
// End to end, such a program is checked against the float64 reference that rounds the
// inputs of the same linears to bf16 (ForwardOptions::bf16_linear_inputs, read from the
// program's ops), token by token. The program rounds x computed in float32, so where x lies
// within float32 error of a tie between two bf16 values it may take the other one; in these
// random-weight models one such flip moves a token's logits by up to a third of what the
// rounding itself moves (about 0.1-0.3 % of max|logit|, measured against the plain
// reference), and through more layers the flips compound (4 layers: up to all of it). So
// the models have one layer: all but at most 4 of 24 tokens must be within 1e-4 x
// max|logit| (the float path's tolerance) of the reference, and all within half the
// rounding's effect (over 18 seeds and 3 families: at most one token off, by up to 0.3 of
// it). Decode equals prefill bit for bit. The flag marks exactly the interleaved bf16
// linears, announces format version 5, and is refused where it cannot apply.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "e2e_support.h"
#include "program/program_file.h"
#include "program/validator.h"
#include "reference/reference.h"
#include "runtime/program_info.h"

namespace og {
namespace {

using testing::compare;

using testing::same_bits;

std::string export_bf16(const testing::Generated& g, const std::string& name, const std::string& qactivations,
                        const std::string& qlinear = "") {
  exporter::ExportOptions o;
  o.dtype = "bf16";
  o.qactivations = qactivations;
  o.qlinear = qlinear;
  return testing::export_with(g, name, std::move(o));
}

struct Family {
  const char* name;
  bool tie;
};

class BF16Activations : public ::testing::TestWithParam<Family> {};

TEST_P(BF16Activations, ProgramFollowsTheReferenceRoundingTheSameInputs) {
  const Family& f = GetParam();
  auto g = testing::generate({.family = f.name, .dtype = DType::kBF16, .seed = 5, .tie_word_embeddings = f.tie,
                              .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}, {"num_hidden_layers", 1}}});
  const std::string prog = export_bf16(*g, "b.ogp", "bf16");
  reference::ForwardOptions options;
  {
    auto pf = program::ProgramFile::open(prog);
    ASSERT_TRUE(pf.is_ok()) << pf.status().message();
    EXPECT_EQ((*pf)->format_version(), 5u);
    const fb::Program& p = (*pf)->program();
    int linears = 0;
    for (const fb::Op* op : *p.ops())
      if (const fb::LinearAttrs* a = op->attrs_as_LinearAttrs()) {
        const fb::Tensor* t = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(a->weight()));
        ++linears;
        // Every linear: the weights are bf16 and interleaved (the default layout).
        EXPECT_TRUE(a->bf16_activations()) << t->name()->str();
        EXPECT_FALSE(a->int8_activations());
        const std::string name = t->name()->str();
        options.bf16_linear_inputs.insert(name.substr(0, name.find('[')));
      }
    EXPECT_EQ(runtime::program_info_json(**pf, false)["linears_with_bf16_activations"].get<int>(), linears);
  }
  ASSERT_GT(options.bf16_linear_inputs.size(), 0u);
  auto ck = hf::Checkpoint::open(g->model_dir());
  ASSERT_TRUE(ck.is_ok());
  const auto ids = testing::test_tokens(24, g->config.vocab_size, 9);
  auto model = runtime::Model::load(prog);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const auto prefill = testing::run_program(*model, ids, 24), decode = testing::run_program(*model, ids, 1);
  auto rounded = reference::forward(g->config, *ck, ids, options);
  auto plain = reference::forward(g->config, *ck, ids);
  ASSERT_TRUE(rounded.is_ok() && plain.is_ok());
  const int64_t V = g->config.vocab_size, T = static_cast<int64_t>(ids.size());
  const testing::Diff to_rounded = compare(prefill, *rounded, V), rounding = compare(*plain, *rounded, V);
  int64_t close = 0;
  for (int64_t t = 0; t < T; ++t) {
    double worst = 0;
    for (int64_t v = 0; v < V; ++v) worst = std::max(worst, std::fabs(prefill[t * V + v] - (*rounded)[t * V + v]));
    close += worst <= 1e-4 * to_rounded.max_ref;
  }
  std::printf("%s bf16 x: %lld of %lld tokens within 1e-4 x max|logit| of the reference rounding x; max|program - it| "
              "%.3g, max|reference not rounding - it| %.3g, max|logit| %.3g\n", f.name, static_cast<long long>(close),
              static_cast<long long>(T), to_rounded.max_abs, rounding.max_abs, to_rounded.max_ref);
  EXPECT_GE(close, T - 4);
  EXPECT_LE(to_rounded.max_abs, 0.5 * rounding.max_abs);
  EXPECT_GT(rounding.relative(), 2e-4);  // the rounding shows
  EXPECT_TRUE(same_bits(prefill, decode));
}

INSTANTIATE_TEST_SUITE_P(Families, BF16Activations,
                         ::testing::Values(Family{"llama", false}, Family{"qwen3", true}, Family{"gemma3_text", true}),
                         [](const auto& info) { return std::string(info.param.name); });

// The math mode is a load-time choice over the same file (runtime/math_mode.h): a plain bf16
// program loaded fast computes what the file exported with --qactivations bf16 computes as
// exported, bit for bit (decode == prefill and batched == solo with it), and that file loaded
// exact computes what the plain one does; the two modes differ.
TEST(MathMode, FastAndExactAtLoadEqualTheExportTimeChoicesBitForBit) {
  auto g = testing::generate({.family = "qwen3", .dtype = DType::kBF16, .seed = 8,
                              .overrides = {{"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2}}});
  const std::string plain = export_bf16(*g, "plain.ogp", "f32"), rounded = export_bf16(*g, "rounded.ogp", "bf16");
  const auto ids = testing::test_tokens(20, g->config.vocab_size, 3);
  auto logits = [&](const std::string& path, runtime::MathMode math, const char* want, int64_t chunk) {
    auto m = runtime::Model::load(path, Residency::kHugePages, math);
    EXPECT_TRUE(m.is_ok()) << m.status().message();
    if (!m.is_ok()) return std::vector<float>{};
    EXPECT_STREQ((*m)->math_name(), want) << path;
    return testing::run_program(*m, ids, chunk);
  };
  using runtime::MathMode;
  const auto fast = logits(plain, MathMode::kFast, "fast", 20);
  EXPECT_TRUE(same_bits(fast, logits(rounded, MathMode::kAsExported, "fast", 20)));
  EXPECT_TRUE(same_bits(fast, logits(rounded, MathMode::kFast, "fast", 20)));
  EXPECT_TRUE(same_bits(fast, logits(plain, MathMode::kFast, "fast", 1))) << "decode == prefill in fast mode";
  const auto exact = logits(plain, MathMode::kAsExported, "exact", 20);
  EXPECT_TRUE(same_bits(exact, logits(rounded, MathMode::kExact, "exact", 20)));
  EXPECT_TRUE(same_bits(exact, logits(plain, MathMode::kExact, "exact", 7)));
  EXPECT_FALSE(same_bits(exact, fast));
  // An f32 program has nothing to round: fast runs it exact.
  auto f32 = runtime::Model::load(testing::export_to(*g, "f32.ogp", "fp32"), Residency::kHugePages, MathMode::kFast);
  ASSERT_TRUE(f32.is_ok());
  EXPECT_STREQ((*f32)->math_name(), "exact");
  EXPECT_FALSE(runtime::parse_math_mode("quick").is_ok());
  EXPECT_EQ(runtime::parse_math_mode("quick").status().code(), ErrorCode::kUsage);
}

// With --qlinear, quantized linears take int8 x as under --qactivations int8, and the
// bf16 ones (here the 96-column q/k/v/gate/up, whose width is not a multiple of group 64)
// bf16 x.
TEST(BF16ActivationsExport, QuantizedLinearsTakeInt8AndBF16OnesBF16) {
  auto g = testing::generate({.family = "llama", .dtype = DType::kBF16, .seed = 1, .tie_word_embeddings = false,
                              .overrides = {{"hidden_size", 96}, {"intermediate_size", 192}, {"num_attention_heads", 4},
                                            {"num_key_value_heads", 2}, {"head_dim", 16}}});
  exporter::ExportOptions o;
  o.dtype = "bf16";
  o.qactivations = "bf16";
  o.qlinear = "4w";
  o.qgroup_size = 64;
  const std::string prog = testing::export_with(*g, "q.ogp", std::move(o));
  auto pf = program::ProgramFile::open(prog);
  ASSERT_TRUE(pf.is_ok());
  const fb::Program& p = (*pf)->program();
  int int8 = 0, bf16 = 0;
  for (const fb::Op* op : *p.ops())
    if (const fb::LinearAttrs* a = op->attrs_as_LinearAttrs()) {
      const fb::DType dt = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(a->weight()))->dtype();
      EXPECT_EQ(a->int8_activations(), dt == fb::DType::Q4 || dt == fb::DType::Q8);
      EXPECT_EQ(a->bf16_activations(), dt == fb::DType::BF16);
      int8 += a->int8_activations();
      bf16 += a->bf16_activations();
    }
  EXPECT_GT(int8, 0);
  EXPECT_GT(bf16, 0);
}

TEST(BF16ActivationsExport, RefusedWithoutBF16WeightsOrInterleavedLayout) {
  auto g = testing::generate({.family = "llama", .seed = 1});
  struct Bad {
    std::string dtype, layout, expect;
  };
  for (const Bad& b : {Bad{"fp32", "interleaved", "--dtype bf16"}, Bad{"fp16", "interleaved", "--dtype bf16"},
                       Bad{"bf16", "row-major", "--layout interleaved"}}) {
    exporter::ExportOptions o{.model = g->model_dir(), .output = g->dir.file("x.ogp")};
    o.dtype = b.dtype;
    o.layout = b.layout;
    o.qactivations = "bf16";
    auto s = exporter::export_program(o);
    ASSERT_FALSE(s.is_ok());
    EXPECT_EQ(s.status().code(), ErrorCode::kUsage);
    EXPECT_NE(s.status().message().find(b.expect), std::string::npos) << s.status().message();
    EXPECT_FALSE(std::filesystem::exists(o.output));
  }
}

// The validator refuses bf16_activations on a weight the kernel cannot take it with.
TEST(BF16ActivationsValidator, OnlyInterleavedBF16WeightsMayTakeBF16Activations) {
  auto g = testing::generate({.family = "llama", .dtype = DType::kBF16, .seed = 2});
  for (const char* dtype : {"fp32", "bf16"}) {
    exporter::ExportOptions o;
    o.dtype = dtype;
    if (std::string(dtype) == "bf16") o.layout = "row-major";
    auto pf = program::ProgramFile::open(testing::export_with(*g, std::string(dtype) + ".ogp", std::move(o)));
    ASSERT_TRUE(pf.is_ok());
    fb::ProgramT p;
    (*pf)->program().UnPackTo(&p);
    for (auto& op : p.ops)
      if (auto* a = op->attrs.AsLinearAttrs()) a->bf16_activations = true;
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(fb::Program::Pack(fbb, &p));
    const Status s = program::validate_program(*fb::GetProgram(fbb.GetBufferPointer()), (*pf)->file_size());
    ASSERT_FALSE(s.is_ok()) << dtype;
    EXPECT_NE(s.message().find("bf16_activations needs an interleaved BF16 weight"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace og
