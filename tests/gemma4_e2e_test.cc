// Gemma-4 end to end: KV-sharing layers read their donor's cache, so an E2B-shaped
// program holds 15 caches for 35 layers; decode equals prefill across ring wraps.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include <filesystem>

#include "export/layout_resolver.h"
#include "hf/safetensors_writer.h"
#include "hf/json_fields.h"
#include "program/program_file.h"
#include "program/validator.h"

namespace og {
namespace {

using namespace og::testing;

// E2B's layer pattern (full every 5th layer, 20 KV-shared layers) at tiny width.
nlohmann::json e2b_shape() {
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 35; ++i) types.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
  return {{"num_hidden_layers", 35}, {"layer_types", types}, {"num_kv_shared_layers", 20}, {"sliding_window", 6}};
}

TEST(Gemma4, E2BShapedProgramAllocates15CachesOfTheLayoutsBytes) {
  auto g = generate({.family = "gemma4", .seed = 21, .overrides = e2b_shape()});
  auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 8, 256));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const program::CacheLayout& l = (*model)->layout();
  EXPECT_EQ(l.n_layers, 35);
  ASSERT_EQ(l.n_caches(), 15);
  for (int32_t i = 15; i < 35; ++i) EXPECT_EQ(l.layer_to_cache[i], (i + 1) % 5 == 0 ? 14 : 13) << "layer " << i;
  auto s = runtime::Session::create(*model);
  ASSERT_TRUE(s.is_ok());
  // Bytes the layout implies: K and V of every cache, flat (max_ctx) or ring (window + chunk - 1).
  uint64_t expected = 0;
  for (int32_t c = 0; c < l.n_caches(); ++c) {
    const uint64_t slots = l.windows[c] > 0 ? l.windows[c] + 8 - 1 : 256;
    expected += 2 * slots * l.kv_heads[c] * l.head_dims[c] * sizeof(float);
  }
  EXPECT_EQ((*s)->cache_bytes(), expected);
  EXPECT_EQ((*s)->cache_policies().size(), 15u);
  // It runs, and token-by-token decode equals prefill in chunks.
  const auto ids = test_tokens(30, g->config.vocab_size);
  EXPECT_EQ(run_program(*model, ids, 1), run_program(*model, ids, 8));
}

// Donors that are not simply the last two layers before the shared block: full layers at
// 1 and 3, sliding at 0, 2, 4 and 5; layers 6 and 7 share (donors 5 and 3).
nlohmann::json scattered_donors() {
  return {{"num_hidden_layers", 8},
          {"layer_types", {"sliding_attention", "full_attention", "sliding_attention", "full_attention",
                           "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}},
          {"num_kv_shared_layers", 2},
          {"sliding_window", 5}};
}

TEST(Gemma4, LogitsMatchTheReferenceForEveryChunkSize) {
  for (const nlohmann::json& shape : {nlohmann::json::object(), scattered_donors()}) {
    auto g = generate({.family = "gemma4", .seed = 24, .overrides = shape});
    auto ids = test_tokens(26, g->config.vocab_size, 4);
    ids[5] = 378;  // testgen's image_token_id: embedded as padding by the wrapper
    ids[9] = 379;  // audio_token_id
    const auto want = reference_logits(*g, ids);
    for (int64_t program_chunk : {int64_t{0}, int64_t{3}}) {
      auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", program_chunk));
      ASSERT_TRUE(model.is_ok()) << model.status().message();
      for (int64_t step : {int64_t{1}, int64_t{3}, int64_t{(*model)->prefill_chunk_size()}}) {
        Diff d = compare(run_program(*model, ids, step), want, g->config.vocab_size);
        EXPECT_LE(d.relative(), 1e-4) << shape.dump() << " chunk " << program_chunk << " step " << step << ": "
                                      << d.max_abs << " of " << d.max_ref;
      }
    }
  }
}

TEST(Gemma4, KvSharedLayersWriteNoCache) {
  auto g = generate({.family = "gemma4", .seed = 22});
  auto pf = program::ProgramFile::open(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(pf.is_ok());
  const program::CacheLayout l = program::layout_from_fb(*(*pf)->program().layout());
  expect_layout_matches_reference(l, g->config);
  int32_t layer = 0;
  for (const fb::Op* op : *(*pf)->program().ops()) {
    if (op->attrs_type() != fb::OpAttrs::AttendAttrs) continue;
    const bool shared = layer >= l.n_layers - g->config.num_kv_shared_layers;
    EXPECT_EQ(op->attrs_as_AttendAttrs()->writes_cache(), !shared) << "layer " << layer;
    EXPECT_EQ(op->inputs()->size(), shared ? 2u : 4u);
    ++layer;
  }
}

// Mixture-of-experts layers (enable_moe_block, google/gemma-4-26B-A4B; docs/moe_families.md §1).
nlohmann::json moe_fields() {
  return {{"enable_moe_block", true}, {"num_experts", 8}, {"top_k_experts", 2}, {"moe_intermediate_size", 16}};
}
// The tiny E2B-like config (per-layer inputs, KV sharing, double-wide MLPs) with experts, and
// the 26B-A4B's own shape: no per-layer inputs, no KV sharing, k = v on full layers with one
// global kv head. Both with sliding_window 8 (rings wrap over the 30-token sequences).
std::vector<nlohmann::json> moe_shapes() {
  nlohmann::json a26b = moe_fields();
  a26b.update({{"hidden_size_per_layer_input", 0}, {"num_kv_shared_layers", 0}, {"use_double_wide_mlp", false},
               {"attention_k_eq_v", true}, {"num_global_key_value_heads", 1}});
  return {moe_fields(), a26b};
}

int moe_ops(const std::string& program) {
  auto pf = program::ProgramFile::open(program);
  EXPECT_TRUE(pf.is_ok());
  int n = 0;
  for (const fb::Op* op : *(*pf)->program().ops()) n += op->attrs_type() == fb::OpAttrs::MoeAttrs;
  return n;
}

TEST(Gemma4, MoeLogitsMatchTheReferenceForEveryStepAndChunkSize) {
  uint64_t seed = 31;
  for (const nlohmann::json& shape : moe_shapes()) {
    auto g = generate({.family = "gemma4", .seed = seed++, .overrides = shape});
    const int64_t w = *g->config.sliding_window;
    const auto ids = test_tokens(std::max<int64_t>(30, 3 * w), g->config.vocab_size, 4);
    const auto want = reference_logits(*g, ids);
    for (int64_t program_chunk : {int64_t{0}, int64_t{3}}) {
      const std::string path = export_to(*g, "p.ogp", "fp32", program_chunk);
      EXPECT_EQ(moe_ops(path), g->config.num_hidden_layers);  // one moe op per layer
      auto model = runtime::Model::load(path);
      ASSERT_TRUE(model.is_ok()) << model.status().message();
      for (int64_t step : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{(*model)->prefill_chunk_size()}}) {
        if (step > (*model)->prefill_chunk_size()) continue;
        Diff d = compare(run_program(*model, ids, step), want, g->config.vocab_size);
        EXPECT_LE(d.relative(), 1e-4) << shape.dump() << " chunk " << program_chunk << " step " << step << ": "
                                      << d.max_abs << " of " << d.max_ref;
      }
    }
    // Chunks of w - 1, w + 1 and 2w + 1 start and end at every offset relative to the window.
    for (int64_t chunk : {w - 1, w + 1, 2 * w + 1}) {
      auto model = runtime::Model::load(export_to(*g, "c.ogp", "fp32", chunk));
      ASSERT_TRUE(model.is_ok());
      Diff d = compare(run_program(*model, ids, chunk), want, g->config.vocab_size);
      EXPECT_LE(d.relative(), 1e-4) << shape.dump() << " chunk " << chunk;
    }
  }
}

// A routed model groups a prefill's rows by expert; each row's sum stays in its top-k order,
// so token-by-token decode gives the bits of one-shot prefill (the rings wrap: 30 > window 8).
TEST(Gemma4, MoeDecodeEqualsPrefillBitForBit) {
  for (const nlohmann::json& shape : moe_shapes()) {
    auto g = generate({.family = "gemma4", .seed = 41, .overrides = shape});
    const auto ids = test_tokens(30, g->config.vocab_size, 5);
    auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32"));
    ASSERT_TRUE(model.is_ok());
    Diff d = compare(run_program(*model, ids, 1), run_program(*model, ids, static_cast<int64_t>(ids.size())),
                     g->config.vocab_size);
    EXPECT_EQ(d.max_abs, 0.0) << shape.dump();
  }
}

// bf16 weights are exact in an fp32 program, and the router stays f32 in a bf16 one: both
// match the reference on the bf16 checkpoint.
TEST(Gemma4, MoeBf16CheckpointMatchesTheReference) {
  auto g = generate({.family = "gemma4", .dtype = DType::kBF16, .seed = 43, .overrides = moe_shapes()[1]});
  const auto ids = test_tokens(30, g->config.vocab_size, 3);
  const auto want = reference_logits(*g, ids);
  for (const char* dtype : {"fp32", "bf16"}) {
    auto model = runtime::Model::load(export_to(*g, "p.ogp", dtype, 4));
    ASSERT_TRUE(model.is_ok());
    Diff d = compare(run_program(*model, ids, 3), want, g->config.vocab_size);
    EXPECT_LE(d.relative(), 1e-4) << dtype;
    EXPECT_GE(d.argmax_agreement, 0.99) << dtype;
  }
}

Status export_with_text(const Generated& g, const nlohmann::json& patch) {
  auto j = hf::parse_json(read_file(g.model_dir() + "/config.json"), "config.json");
  EXPECT_TRUE(j.is_ok());
  (*j)["text_config"].merge_patch(patch);
  write_file(g.model_dir() + "/config.json", j->dump());
  exporter::ExportOptions o{.model = g.model_dir(), .output = g.dir.file("x.ogp")};
  return exporter::export_program(o).status();
}

TEST(Gemma4, MoeConfigErrorsNameTheField) {
  auto g = generate({.family = "gemma4", .seed = 23, .overrides = moe_fields()});
  const std::pair<const char*, nlohmann::json> bad[] = {
      {"num_experts", {{"num_experts", 0}}},
      {"num_experts", {{"num_experts", nullptr}}},
      {"top_k_experts", {{"top_k_experts", 0}}},
      {"top_k_experts", {{"top_k_experts", 9}}},                       // more than num_experts
      {"top_k_experts", {{"num_experts", 100}, {"top_k_experts", 65}}},  // more than 64
      {"top_k_experts", {{"top_k_experts", nullptr}}},
      {"moe_intermediate_size", {{"moe_intermediate_size", 0}}},
      {"moe_intermediate_size", {{"moe_intermediate_size", nullptr}}},
  };
  for (const auto& [field, patch] : bad) {
    nlohmann::json p = moe_fields();
    p.update(patch);
    Status s = export_with_text(*g, p);
    ASSERT_FALSE(s.is_ok()) << patch.dump();
    EXPECT_NE(s.message().find(std::string("text_config.") + field), std::string::npos) << s.message();
  }
  ASSERT_TRUE(export_with_text(*g, moe_fields()).is_ok());
}

// Only the fused 3-D experts exist for Gemma-4: a per-expert 2-D tensor is refused by name.
TEST(Gemma4, MoePerExpertTensorsAreRefusedNamingTheTensor) {
  auto g = generate({.family = "gemma4", .seed = 24, .overrides = moe_fields()});
  auto ck = hf::Checkpoint::open(g->model_dir());
  ASSERT_TRUE(ck.is_ok());
  std::vector<hf::OwnedTensor> out;
  for (const std::string& name : ck->names()) {
    const hf::TensorView* t = *ck->get(name);
    out.push_back({.name = name, .dtype = t->dtype, .shape = t->shape, .bytes = {t->data, t->data + t->nbytes}});
  }
  const std::string extra = "model.language_model.layers.0.experts.0.gate_proj.weight";
  out.push_back({.name = extra, .dtype = DType::kF32, .shape = {16, 64}, .bytes = std::vector<uint8_t>(16 * 64 * 4)});
  const std::filesystem::path dir = g->dir.file("per_expert");
  std::filesystem::create_directories(dir);
  for (const auto& f : std::filesystem::directory_iterator(g->model_dir()))  // config, tokenizer, ...
    if (f.path().extension() != ".safetensors") std::filesystem::copy(f.path(), dir / f.path().filename());
  ASSERT_TRUE(hf::write_checkpoint(dir.string(), out).is_ok());
  exporter::ExportOptions o{.model = dir.string(), .output = g->dir.file("x.ogp")};
  auto s = exporter::export_program(o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.status().message().find(extra), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace og
