// Program files that are corrupt, truncated or from another format version are refused on
// load; checkpoints that disagree with their config are refused at export.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include <xxhash.h>

#include "e2e_support.h"
#include "hf/json_fields.h"
#include "program/ops.h"
#include "program/program_file.h"
#include "runtime/op_binders.h"
#include "testgen/testgen.h"

namespace og {
namespace {

using namespace og::testing;

class ProgramFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gen_ = generate({.family = "llama", .seed = 3});
    path_ = export_to(*gen_, "p.ogp", "fp32");
    bytes_ = read_file(path_);
  }
  std::string load_error(const std::string& bytes) {
    write_file(gen_->dir.file("bad.ogp"), bytes);
    auto m = runtime::Model::load(gen_->dir.file("bad.ogp"));
    EXPECT_FALSE(m.is_ok());
    return m.is_ok() ? "" : m.status().message();
  }
  std::unique_ptr<Generated> gen_;
  std::string path_, bytes_;
};

// What loads is what the exporter was given: the config's vocabulary, the layout the
// float64 reference reads from the same config, and every checkpoint tensor under its name
// with its shape and 4 bytes an element (an fp32 export); the only other tensors are the
// rope tables the exporter computes.
TEST_F(ProgramFileTest, ValidProgramLoadsWithWhatTheExporterWasGiven) {
  auto m = runtime::Model::load(path_);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ((*m)->vocab_size(), gen_->config.vocab_size);
  expect_layout_matches_reference((*m)->layout(), gen_->config);
  auto ck = hf::Checkpoint::open(gen_->model_dir());
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  std::map<std::string, const fb::Tensor*> in_program;
  for (const fb::Tensor* t : *(*m)->program().tensors()) in_program[t->name()->str()] = t;
  for (const std::string& name : ck->names()) {
    auto want = ck->get(name);
    ASSERT_TRUE(want.is_ok()) << name;
    auto it = in_program.find(name);
    ASSERT_NE(it, in_program.end()) << name << " is not in the program";
    const fb::Tensor& t = *it->second;
    EXPECT_EQ(std::vector<int64_t>(t.shape()->begin(), t.shape()->end()), (*want)->shape) << name;
    EXPECT_EQ(t.nbytes(), 4 * static_cast<uint64_t>((*want)->numel())) << name;
    in_program.erase(it);
  }
  for (const auto& [name, t] : in_program) EXPECT_NE(name.find(".rope."), std::string::npos) << name << " comes from nowhere";
  EXPECT_EQ(in_program.size(), static_cast<size_t>(gen_->config.num_hidden_layers));
}

TEST_F(ProgramFileTest, AFlippedHeaderByteFailsTheHeaderChecksumAtLoad) {
  for (size_t at : {bytes_.size() - 5, bytes_.size() - 200}) {
    std::string b = bytes_;
    b[at] ^= 0x20;
    EXPECT_NE(load_error(b).find("header checksum mismatch"), std::string::npos) << "byte " << at;
  }
}

TEST_F(ProgramFileTest, AFlippedWeightByteFailsFullVerificationAndOnlyChangesNumbersOtherwise) {
  for (size_t at : {size_t{100}, bytes_.size() / 2}) {
    std::string b = bytes_;
    b[at] ^= 0x20;
    write_file(gen_->dir.file("w.ogp"), b);
    auto full = program::ProgramFile::open(gen_->dir.file("w.ogp"), program::ProgramFile::Verify::kFull);
    ASSERT_FALSE(full.is_ok()) << "byte " << at;
    EXPECT_NE(full.status().message().find("checksum mismatch"), std::string::npos);
    // Default load: the structure is intact, so it loads and runs (to finite or non-finite
    // numbers; never out of bounds).
    auto m = runtime::Model::load(gen_->dir.file("w.ogp"));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    EXPECT_EQ(run_program(*m, {1, 2, 3}, 3).size(), 3u * static_cast<size_t>((*m)->vocab_size()));
  }
}

TEST_F(ProgramFileTest, VersionOneFilesAreStillReadAndVerifiedInFull) {
  // Version 1 had no header checksum: its whole-file checksum is verified at every load.
  std::string b = bytes_;
  const uint32_t v1 = 1;
  std::memcpy(b.data() + 8, &v1, 4);
  std::memset(b.data() + 56, 0, 8);  // version 1 wrote zeros where header_checksum is
  write_file(gen_->dir.file("v1.ogp"), b);
  EXPECT_TRUE(runtime::Model::load(gen_->dir.file("v1.ogp")).is_ok());
  b[100] ^= 0x20;
  EXPECT_NE(load_error(b).find("checksum mismatch"), std::string::npos);
}

TEST_F(ProgramFileTest, TruncatedFilesAreRefused) {
  EXPECT_NE(load_error(bytes_.substr(0, bytes_.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(load_error(bytes_.substr(0, 64)).find("truncated"), std::string::npos);
  EXPECT_NE(load_error(bytes_.substr(0, 10)).find("too short"), std::string::npos);
  EXPECT_NE(load_error("").find("too short"), std::string::npos);
}

TEST_F(ProgramFileTest, OtherFormatVersionsAndMagicsAreRefused) {
  std::string b = bytes_;
  uint32_t v = program::kFormatVersion + 1;
  std::memcpy(b.data() + 8, &v, 4);
  EXPECT_NE(load_error(b).find(fmt::format("format version {} is not supported", v)), std::string::npos);
  b = bytes_;
  b[0] = 'X';
  EXPECT_NE(load_error(b).find("bad magic"), std::string::npos);
  EXPECT_NE(load_error(read_file(gen_->model_dir() + "/config.json")).find("not an offgraph program"), std::string::npos);
}

// A program is written as the oldest format that expresses it: version 3 only when a moe op
// uses a version-3 field (a version-2 reader would skip it silently and run another model).
TEST(ProgramFormat, Version3OnlyWhenAMoeOpUsesAVersion3Field) {
  auto version_of = [](const std::string& path) {
    program::Preamble p{};
    std::memcpy(&p, read_file(path).data(), sizeof p);
    return p.format_version;
  };
  auto moe_program = [](auto set) {
    fb::ProgramT program;
    auto op = std::make_unique<fb::OpT>();
    fb::MoeAttrsT a;
    set(a);
    op->attrs.Set(std::move(a));
    program.ops.push_back(std::move(op));
    return program::required_format_version(program);
  };
  EXPECT_EQ(moe_program([](fb::MoeAttrsT&) {}), 2u);
  EXPECT_EQ(moe_program([](fb::MoeAttrsT& a) { a.expert_scale = 0; }), 3u);
  EXPECT_EQ(moe_program([](fb::MoeAttrsT& a) { a.gate_bias = 0; }), 3u);
  EXPECT_EQ(moe_program([](fb::MoeAttrsT& a) { a.up_bias = 0; }), 3u);
  EXPECT_EQ(moe_program([](fb::MoeAttrsT& a) { a.down_bias = 0; }), 3u);
  EXPECT_EQ(moe_program([](fb::MoeAttrsT& a) { a.activation = fb::Activation::ClampedSwiglu; }), 3u);
  auto gpt_oss = generate({.family = "gpt_oss", .seed = 3});
  auto qwen3_moe = generate({.family = "qwen3_moe", .seed = 3});
  // Row-major: interleaved matrices would make both version 4 (Version4OnlyWhenATensorIsInterleaved).
  EXPECT_EQ(version_of(export_with(*gpt_oss, "p.ogp", {.layout = "row-major"})), 3u);
  EXPECT_EQ(version_of(export_with(*qwen3_moe, "p.ogp", {.layout = "row-major"})), 2u);
}

// Version 4 only when a tensor is interleaved (Tensor::row_block): a version-3 reader would
// read its codes and scales as row-major and run another model, so it must refuse the file.
TEST(ProgramFormat, Version4OnlyWhenATensorIsInterleaved) {
  auto version_of = [](const std::string& path) {
    program::Preamble p{};
    std::memcpy(&p, read_file(path).data(), sizeof p);
    return p.format_version;
  };
  auto program_with = [](int32_t row_block, bool version3_field) {
    fb::ProgramT program;
    auto t = std::make_unique<fb::TensorT>();
    t->row_block = row_block;
    program.tensors.push_back(std::move(t));
    auto op = std::make_unique<fb::OpT>();
    fb::MoeAttrsT a;
    if (version3_field) a.expert_scale = 0;
    op->attrs.Set(std::move(a));
    program.ops.push_back(std::move(op));
    return program::required_format_version(program);
  };
  EXPECT_EQ(program_with(0, false), 2u);
  EXPECT_EQ(program_with(0, true), 3u);
  EXPECT_EQ(program_with(program::kRowBlock, false), 4u);
  EXPECT_EQ(program_with(program::kRowBlock, true), 4u);
  EXPECT_EQ(program::kFormatVersion, 11u);
  {  // version 11: an embedding of the positions value (a version-10 reader would embed the ids)
    for (const bool of_positions : {false, true}) {
      fb::ProgramT program;
      program.input_ids = 0;
      program.positions = 1;
      auto op = std::make_unique<fb::OpT>();
      op->attrs.Set(fb::EmbeddingAttrsT{});
      op->inputs = {of_positions ? program.positions : program.input_ids};
      program.ops.push_back(std::move(op));
      EXPECT_EQ(program::required_format_version(program), of_positions ? 11u : 2u);
    }
  }
  {  // version 10: a head_linear op, a concat by groups or the Relu2 activation (a version-9
     // reader would refuse the op or the activation, or join whole rows)
    auto with = [](fb::OpAttrsUnion attrs) {
      fb::ProgramT program;
      auto op = std::make_unique<fb::OpT>();
      op->attrs = std::move(attrs);
      program.ops.push_back(std::move(op));
      return program::required_format_version(program);
    };
    fb::OpAttrsUnion head, grouped, plain, relu2, xielu;
    head.Set(fb::HeadLinearAttrsT{});
    xielu.Set(fb::XieluAttrsT{});
    EXPECT_EQ(with(std::move(xielu)), 10u);
    fb::ActAttrsT act;
    act.activation = fb::Activation::Relu2;
    relu2.Set(act);
    EXPECT_EQ(with(std::move(relu2)), 10u);
    fb::ConcatAttrsT c;
    plain.Set(c);
    c.groups = 4;
    grouped.Set(c);
    EXPECT_EQ(with(std::move(head)), 10u);
    EXPECT_EQ(with(std::move(grouped)), 10u);
    EXPECT_EQ(with(std::move(plain)), 2u);
  }
  {  // version 8: a sigmoid-routed mixture, or one with a choice bias or expert groups (a
     // version-7 reader would ignore the bias and the groups and pick other experts)
    auto with = [](auto set) {
      fb::ProgramT program;
      auto op = std::make_unique<fb::OpT>();
      fb::MoeAttrsT m;
      set(m);
      op->attrs.Set(std::move(m));
      program.ops.push_back(std::move(op));
      return program::required_format_version(program);
    };
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.scoring = fb::RouterScoring::SigmoidTopK; }), 8u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.choice_bias = 3; }), 8u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.topk_group = 2; }), 8u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.scoring = fb::RouterScoring::TopKSoftmax; }), 2u);
    // version 9: groups under a softmax router, or a group score of other than two experts (a
    // version-8 reader would not group the softmax router, or would sum two)
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.n_group = 4; m.topk_group = 2; }), 9u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.scoring = fb::RouterScoring::SigmoidTopK; m.n_group = 4; }), 8u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.scoring = fb::RouterScoring::SigmoidTopK; m.group_top = 1; }), 9u);
    EXPECT_EQ(with([](fb::MoeAttrsT& m) { m.scoring = fb::RouterScoring::SigmoidTopK; m.masked_key = -INFINITY; }), 9u);
  }
  {  // version 7: a layer_norm op, or the exact Gelu in an activation or a mixture's experts
    auto with = [](fb::OpAttrsUnion attrs) {
      fb::ProgramT program;
      auto op = std::make_unique<fb::OpT>();
      op->attrs = std::move(attrs);
      program.ops.push_back(std::move(op));
      return program::required_format_version(program);
    };
    fb::OpAttrsUnion ln, gelu, tanh_act, moe;
    ln.Set(fb::LayerNormAttrsT{});
    fb::ActAttrsT act;
    act.activation = fb::Activation::Gelu;
    gelu.Set(act);
    act.activation = fb::Activation::GeluTanh;
    tanh_act.Set(act);
    fb::MoeAttrsT m;
    m.activation = fb::Activation::Gelu;
    moe.Set(m);
    EXPECT_EQ(with(std::move(ln)), 7u);
    EXPECT_EQ(with(std::move(gelu)), 7u);
    EXPECT_EQ(with(std::move(moe)), 7u);
    EXPECT_EQ(with(std::move(tanh_act)), 2u);
  }
  {  // version 6: a rope with a second frequency table (a version-5 reader would ignore it)
    fb::ProgramT program;
    auto op = std::make_unique<fb::OpT>();
    fb::RopeAttrsT a;
    a.long_inv_freq = 1;
    a.long_from = 8;
    op->attrs.Set(std::move(a));
    program.ops.push_back(std::move(op));
    EXPECT_EQ(program::required_format_version(program), 6u);
    program.ops[0]->attrs.AsRopeAttrs()->long_inv_freq = -1;
    EXPECT_EQ(program::required_format_version(program), 2u);
  }
  {  // version 5: a linear taking bf16 activations (a version-4 reader would compute in f32)
    fb::ProgramT program;
    auto op = std::make_unique<fb::OpT>();
    fb::LinearAttrsT a;
    a.bf16_activations = true;
    op->attrs.Set(std::move(a));
    program.ops.push_back(std::move(op));
    EXPECT_EQ(program::required_format_version(program), 5u);
    program.ops[0]->attrs.AsLinearAttrs()->bf16_activations = false;
    EXPECT_EQ(program::required_format_version(program), 2u);
  }
  // Exports: float matrices (by default) and 4w / 8w with int8 activations are interleaved;
  // --layout row-major interleaves none, and quantized ones with f32 activations are not.
  // The embedding table stays float: only --layout decides there.
  auto g = generate({.family = "llama", .seed = 3, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  auto version = [&](const std::string& qlinear, const std::string& qactivations, const std::string& layout) {
    const std::string path = export_with(*g, qlinear + qactivations + layout + ".ogp",
                                         {.qlinear = qlinear, .qactivations = qactivations, .layout = layout});
    auto m = runtime::Model::load(path);  // and it loads
    EXPECT_TRUE(m.is_ok()) << m.status().message();
    return version_of(path);
  };
  EXPECT_EQ(version("", "int8", "interleaved"), 4u);
  EXPECT_EQ(version("", "int8", "row-major"), 2u);
  EXPECT_EQ(version("4w", "int8", "interleaved"), 4u);
  EXPECT_EQ(version("4w", "int8", "row-major"), 2u);
  EXPECT_EQ(version("8w", "int8", "row-major"), 2u);
  EXPECT_EQ(version("4w", "f32", "row-major"), 2u);
  EXPECT_EQ(version("8w", "f32", "interleaved"), 4u);  // the float table
}

// Rewrites config.json of the generated model with a patch.
void patch_config(const Generated& g, const nlohmann::json& patch) {
  auto j = hf::parse_json(read_file(g.model_dir() + "/config.json"), "config.json");
  ASSERT_TRUE(j.is_ok());
  j->merge_patch(patch);
  write_file(g.model_dir() + "/config.json", j->dump(2));
}

std::string export_error(const Generated& g) {
  exporter::ExportOptions o{.model = g.model_dir(), .output = g.dir.file("x.ogp")};
  auto s = exporter::export_program(o);
  EXPECT_FALSE(s.is_ok());
  EXPECT_FALSE(std::filesystem::exists(o.output)) << "a failed export leaves no file";
  EXPECT_FALSE(std::filesystem::exists(o.output + ".partial"));
  return s.is_ok() ? "" : s.status().message();
}

// Programs fuzz_program found undefined behaviour in (UBSan), kept in its corpus, with the
// checksum fixed up as the fuzzer does: each is now bad input naming the op.
TEST_F(ProgramFileTest, FuzzFoundProgramsAreRefusedNamingTheOp) {
  const std::string corpus = std::string(OG_TEST_DATA) + "/../../fuzz/corpus/fuzz_program/";
  for (const auto& [file, needle] : {std::pair{"regress-op-attrs-missing.ogp", "attributes are missing"},
                                     std::pair{"regress-attend-heads-overflow.ogp", "disagree with heads"},
                                     std::pair{"regress-shape-misaligned.ogp", "shape is misaligned"}}) {
    std::string b = read_file(corpus + file);
    ASSERT_GE(b.size(), program::kPreambleSize) << file;
    const uint64_t sum = XXH3_64bits(b.data() + 64, b.size() - 64);
    std::memcpy(b.data() + 48, &sum, 8);  // Preamble::checksum
    EXPECT_NE(load_error(b).find(needle), std::string::npos) << file << ": " << load_error(b);
  }
}

// Each op kind of program.fbs has one entry (program/ops.h) under a name of its own, and the
// runtime a binder for it.
TEST(OpSpecs, EveryUnionMemberHasOneEntryAndOneBinder) {
  EXPECT_EQ(program::op_spec(fb::OpAttrs::NONE), nullptr);
  EXPECT_EQ(runtime::op_binder(fb::OpAttrs::NONE), nullptr);
  EXPECT_STREQ(program::op_name(fb::OpAttrs::NONE), "unknown");
  std::set<std::string> names;
  for (int k = 1; k <= static_cast<int>(fb::OpAttrs::MAX); ++k) {
    const auto kind = static_cast<fb::OpAttrs>(k);
    const program::OpSpec* spec = program::op_spec(kind);
    ASSERT_NE(spec, nullptr) << fb::EnumNameOpAttrs(kind);
    EXPECT_EQ(spec->attrs, kind);
    EXPECT_TRUE(names.insert(spec->name).second) << spec->name << " names two ops";
    EXPECT_LE(spec->min_inputs, spec->max_inputs) << spec->name;
    EXPECT_NE(runtime::op_binder(kind), nullptr) << spec->name << " has no binder";
  }
  EXPECT_EQ(program::op_specs().size(), names.size());
  EXPECT_EQ(program::op_spec(static_cast<fb::OpAttrs>(static_cast<int>(fb::OpAttrs::MAX) + 1)), nullptr);
}

// The tensors each entry lists are the tensors its op reads: in every family's program, fp32
// and 4-bit (both interleaved), every tensor is some op's or a quantized tensor's scales, and each quantized
// or interleaved tensor is read as a matrix only (what the validator then enforces).
TEST(OpSpecs, EveryTensorOfEveryFamilysProgramIsListedByTheOpsThatReadIt) {
  for (const std::string& family : testgen::generator_families()) {
    auto gen = generate({.family = family, .seed = 5});
    for (const char* quant : {"", "4w"}) {
      SCOPED_TRACE(family + " " + quant);
      exporter::ExportOptions o;
      o.qlinear = o.qembedding = quant;
      auto m = runtime::Model::load(export_with(*gen, std::string("p") + quant + ".ogp", std::move(o)));
      ASSERT_TRUE(m.is_ok()) << m.status().message();
      const fb::Program& p = (*m)->program();
      std::vector<int> reads(p.tensors()->size(), 0);  // [n_tensors] listed by an op or as scales
      for (const fb::Tensor* t : *p.tensors())
        if (t->scales() >= 0) ++reads[static_cast<size_t>(t->scales())];
      for (const fb::Op* op : *p.ops())
        for (const program::TensorUse& u : program::op_tensors(*op)) {
          ASSERT_LT(static_cast<size_t>(u.tensor), reads.size());
          ++reads[static_cast<size_t>(u.tensor)];
          const fb::Tensor* t = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(u.tensor));
          if (program::is_quantized(t->dtype()) || t->row_block() != 0)
            EXPECT_EQ(u.read, program::TensorRead::kMatrix) << t->name()->str() << " read by " << program::op_name(op->attrs_type());
        }
      for (size_t t = 0; t < reads.size(); ++t)
        EXPECT_GT(reads[t], 0) << p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t))->name()->str()
                               << " is read by no op's entry";
    }
  }
}

TEST(ExportErrors, TensorShapeDisagreeingWithConfigNamesTheTensor) {
  auto g = generate({.family = "llama", .seed = 1});
  patch_config(*g, {{"intermediate_size", 96}});
  const std::string e = export_error(*g);
  EXPECT_NE(e.find("model.layers.0.mlp.gate_proj.weight' has shape [128, 64]; config implies [96, 64]"), std::string::npos)
      << e;
}

TEST(ExportErrors, BiasesTheConfigDoesNotDeclareAreRefused) {
  auto g = generate({.family = "qwen2", .seed = 1});
  patch_config(*g, {{"model_type", "llama"}, {"architectures", {"LlamaForCausalLM"}}});
  EXPECT_NE(export_error(*g).find("q_proj.bias"), std::string::npos);
}

TEST(ExportErrors, UnimplementedRopeTypeNamesTheField) {
  auto g = generate({.family = "llama", .seed = 1});
  patch_config(*g, {{"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 4.0}}}});
  const std::string e = export_error(*g);
  EXPECT_NE(e.find("rope_scaling.rope_type"), std::string::npos) << e;
  EXPECT_NE(e.find("dynamic"), std::string::npos);
}

TEST(ExportErrors, UnsupportedActivationNamesTheField) {
  auto g = generate({.family = "llama", .seed = 1});
  patch_config(*g, {{"hidden_act", "xielu"}});
  EXPECT_NE(export_error(*g).find("hidden_act"), std::string::npos);
}

TEST(ExportErrors, MissingTensorIsNamed) {
  auto g = generate({.family = "qwen3", .seed = 1});
  patch_config(*g, {{"attention_bias", true}});
  EXPECT_NE(export_error(*g).find("q_proj.bias' not found"), std::string::npos);
}

TEST(ExportErrors, BadOptionsAreUsageErrors) {
  auto g = generate({.family = "llama", .seed = 1});
  exporter::ExportOptions o{.model = g->model_dir(), .output = g->dir.file("x.ogp"), .dtype = "int3"};
  EXPECT_EQ(exporter::export_program(o).status().code(), ErrorCode::kUsage);
  o.dtype = "fp32";
  o.max_ctx_len = 16;
  o.prefill_chunk_size = 17;
  EXPECT_EQ(exporter::export_program(o).status().code(), ErrorCode::kUsage);
  o.prefill_chunk_size = 16;
  EXPECT_TRUE(exporter::export_program(o).is_ok());
}

}  // namespace
}  // namespace og
