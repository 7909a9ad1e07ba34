// Gemma-4 end to end: KV-sharing layers read their donor's cache, so an E2B-shaped
// program holds 15 caches for 35 layers; decode equals prefill across ring wraps.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include "export/layout_resolver.h"
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

TEST(Gemma4, MixtureOfExpertsIsRefusedNamingTheField) {
  auto g = generate({.family = "gemma4", .seed = 23});
  auto j = hf::parse_json(read_file(g->model_dir() + "/config.json"), "config.json");
  (*j)["text_config"]["enable_moe_block"] = true;
  write_file(g->model_dir() + "/config.json", j->dump());
  exporter::ExportOptions o{.model = g->model_dir(), .output = g->dir.file("x.ogp")};
  auto s = exporter::export_program(o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("text_config.enable_moe_block"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace og
