// Cache layouts resolved from config.json (DESIGN.md §3): the real configs of the target
// models are pinned to the layouts their model cards and transformers imply, and
// hand-made configs cover every derivation rule and rejection.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "export/exporter.h"
#include "export/family.h"
#include "export/layout_resolver.h"
#include "export/rope.h"
#include "hf/json_fields.h"
#include "hf/model_config.h"
#include "hf/safetensors_writer.h"

namespace og {
namespace {

using nlohmann::json;

program::CacheLayout layout_of_file(const std::string& name) {
  auto c = exporter::load_model_config(std::string(OG_TEST_DATA) + "/configs/" + name);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  auto l = exporter::resolve_layout(*c);
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return *l;
}

Result<program::CacheLayout> layout_of(const json& j) {
  OG_ASSIGN_OR_RETURN(hf::ModelConfig c, exporter::parse_model_config(j.dump(), "config.json"));
  return exporter::resolve_layout(c);
}

std::vector<int32_t> iota(int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(RealConfigs, Llama32_1B_Has16FullCachesOf8x64) {
  auto l = layout_of_file("Llama-3.2-1B-Instruct.json");
  EXPECT_EQ(l.n_layers, 16);
  EXPECT_EQ(l.n_caches(), 16);
  EXPECT_EQ(l.layer_to_cache, iota(16));
  EXPECT_EQ(l.kv_heads, std::vector<int32_t>(16, 8));
  EXPECT_EQ(l.head_dims, std::vector<int32_t>(16, 64));
  EXPECT_EQ(l.windows, std::vector<int32_t>(16, 0));
}

TEST(RealConfigs, Qwen3_06B_Has28FullCachesOf8x128) {
  auto l = layout_of_file("Qwen3-0.6B.json");
  EXPECT_EQ(l.n_caches(), 28);
  EXPECT_EQ(l.kv_heads, std::vector<int32_t>(28, 8));
  EXPECT_EQ(l.head_dims, std::vector<int32_t>(28, 128));
  EXPECT_EQ(l.windows, std::vector<int32_t>(28, 0));
}

TEST(RealConfigs, Gemma3_1B_FullAt5_11_17_23AndWindow512Elsewhere) {
  auto l = layout_of_file("gemma-3-1b-it.json");
  EXPECT_EQ(l.n_layers, 26);
  EXPECT_EQ(l.n_caches(), 26);
  for (int32_t i = 0; i < 26; ++i) {
    const bool full = i == 5 || i == 11 || i == 17 || i == 23;
    EXPECT_EQ(l.windows[i], full ? 0 : 512) << "layer " << i;
    EXPECT_EQ(l.kv_heads[i], 1);
    EXPECT_EQ(l.head_dims[i], 256);
  }
}

TEST(RealConfigs, Gemma3n_E2B_Has20CachesFor30Layers) {
  auto l = layout_of_file("gemma-3n-E2B.json");
  EXPECT_EQ(l.n_layers, 30);
  EXPECT_EQ(l.n_caches(), 20);
  for (int32_t i = 0; i < 20; ++i) EXPECT_EQ(l.layer_to_cache[i], i);
  // Shared layers 20..29 read cache 18 (sliding, layer 18) or 19 (full, layer 19).
  for (int32_t i = 20; i < 30; ++i) EXPECT_EQ(l.layer_to_cache[i], (i + 1) % 5 == 0 ? 19 : 18) << "layer " << i;
  EXPECT_EQ(l.windows[18], 512);
  EXPECT_EQ(l.windows[19], 0);
  EXPECT_EQ(l.kv_heads, std::vector<int32_t>(20, 2));
}

TEST(RealConfigs, Gemma4_E2B_Has15CachesFor35Layers) {
  auto l = layout_of_file("gemma-4-E2B-it.json");
  EXPECT_EQ(l.n_layers, 35);
  EXPECT_EQ(l.n_caches(), 15);
  int sliding = 0, full = 0;
  for (int32_t c = 0; c < 15; ++c) {
    if (l.windows[c] == 512) {
      ++sliding;
      EXPECT_EQ(l.head_dims[c], 256);
    } else {
      ++full;
      EXPECT_EQ(l.windows[c], 0);
      EXPECT_EQ(l.head_dims[c], 512);
    }
    EXPECT_EQ(l.kv_heads[c], 1);
  }
  EXPECT_EQ(sliding, 12);
  EXPECT_EQ(full, 3);
  for (int32_t i = 15; i < 35; ++i) EXPECT_EQ(l.layer_to_cache[i], (i + 1) % 5 == 0 ? 14 : 13) << "layer " << i;
}

TEST(RealConfigs, Gemma4_26B_A4B_Has30CachesAndItsMoeFieldsParse) {
  // layer_types: full at 5/11/17/23/29 (k = v, 2 global kv heads x 512), sliding 1024
  // elsewhere (8 kv heads x 256); no KV sharing.
  auto l = layout_of_file("gemma-4-26B-A4B-it.json");
  EXPECT_EQ(l.n_layers, 30);
  EXPECT_EQ(l.n_caches(), 30);
  EXPECT_EQ(l.layer_to_cache, iota(30));
  for (int32_t i = 0; i < 30; ++i) {
    const bool full = (i + 1) % 6 == 0;
    EXPECT_EQ(l.kv_heads[i], full ? 2 : 8) << "layer " << i;
    EXPECT_EQ(l.head_dims[i], full ? 512 : 256) << "layer " << i;
    EXPECT_EQ(l.windows[i], full ? 0 : 1024) << "layer " << i;
  }
  auto c = exporter::load_model_config(std::string(OG_TEST_DATA) + "/configs/gemma-4-26B-A4B-it.json");
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->hidden_size, 2816);
  EXPECT_EQ(c->intermediate_size[0], 2112);
  const hf::JsonFields t = c->text_fields();
  EXPECT_TRUE(*t.get_bool("enable_moe_block", false));
  EXPECT_EQ(*t.get_int("num_experts"), 128);
  EXPECT_EQ(*t.get_int("top_k_experts"), 8);
  EXPECT_EQ(*t.get_int("moe_intermediate_size"), 704);
}

TEST(RealConfigs, SmolLM3_3B_Has36FullCachesOf4x128) {
  // No head_dim field: 2048 / 16. Explicit layer_types, all full (use_sliding_window false).
  auto l = layout_of_file("SmolLM3-3B.json");
  EXPECT_EQ(l.n_layers, 36);
  EXPECT_EQ(l.n_caches(), 36);
  EXPECT_EQ(l.layer_to_cache, iota(36));
  EXPECT_EQ(l.kv_heads, std::vector<int32_t>(36, 4));
  EXPECT_EQ(l.head_dims, std::vector<int32_t>(36, 128));
  EXPECT_EQ(l.windows, std::vector<int32_t>(36, 0));
}

TEST(RealConfigs, GptOss20bHas24CachesAlternatingSlidingAndFullAndYarnRope) {
  // Explicit layer_types: sliding (128) at even layers, full at odd ones; 8 kv heads x 64.
  auto l = layout_of_file("gpt-oss-20b.json");
  EXPECT_EQ(l.n_layers, 24);
  EXPECT_EQ(l.n_caches(), 24);
  EXPECT_EQ(l.layer_to_cache, iota(24));
  EXPECT_EQ(l.kv_heads, std::vector<int32_t>(24, 8));
  EXPECT_EQ(l.head_dims, std::vector<int32_t>(24, 64));
  for (int32_t i = 0; i < 24; ++i) EXPECT_EQ(l.windows[i], i % 2 == 0 ? 128 : 0) << "layer " << i;
  // Its yarn rope (factor 32, original 4096, theta 1.5e5, beta 32/1, truncate false), against
  // the values of reference_test RopeInvFreq.Yarn*, computed by hand from the formulas.
  auto c = exporter::load_model_config(std::string(OG_TEST_DATA) + "/configs/gpt-oss-20b.json");
  ASSERT_TRUE(c.is_ok());
  for (const char* type : {"sliding_attention", "full_attention"}) {
    auto r = exporter::rope_for_layer(*c, type, 64);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(r->rotary_dim, 64);
    EXPECT_EQ(r->attention_factor, static_cast<float>(0.1 * std::log(32.0) + 1));
    EXPECT_EQ(r->inv_freq[0], 1.0f);
    EXPECT_EQ(r->inv_freq[8], static_cast<float>(0.050813274815461475));
    EXPECT_EQ(r->inv_freq[9], static_cast<float>(0.03170569618466377));
    EXPECT_EQ(r->inv_freq[17], static_cast<float>(0.0001293187012450632));
    EXPECT_EQ(r->inv_freq[31], static_cast<float>(3.0235114281192144e-07));
  }
}

// gpt_oss export reads the config (defaults, layer types), builds layer 0's attention
// (biases, sinks, yarn rope) from the checkpoint, then its experts: a checkpoint without the
// expert tensors is refused naming the first one missing; a wrong sinks tensor is caught
// before that; bad expert fields are refused naming the field.
TEST(GptOss, ExportNamesTheMissingExpertTensorAndEveryBadExpertField) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("offgraph-gptoss-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const int64_t V = 32, H = 16, Hq = 4, Hkv = 2, D = 8, E = 4;
  auto write = [&](int64_t sinks_len, const json& overrides) {
    json cfg = {{"model_type", "gpt_oss"}, {"architectures", {"GptOssForCausalLM"}}, {"vocab_size", V},
                {"hidden_size", H}, {"intermediate_size", 8}, {"num_hidden_layers", 2}, {"num_attention_heads", Hq},
                {"num_key_value_heads", Hkv}, {"head_dim", D}, {"num_local_experts", E}, {"num_experts_per_tok", 2},
                {"sliding_window", 4}, {"max_position_embeddings", 256},
                {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 64},
                                  {"beta_fast", 32.0}, {"beta_slow", 1.0}, {"truncate", false}}}};
    cfg.merge_patch(overrides);
    std::ofstream(dir / "config.json") << cfg.dump();
    std::vector<hf::OwnedTensor> t;
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      t.push_back({.name = name, .dtype = DType::kF32, .shape = shape, .bytes = std::vector<uint8_t>(n * 4, 0)});
    };
    add("model.embed_tokens.weight", {V, H});
    add("lm_head.weight", {V, H});
    add("model.norm.weight", {H});
    for (int l = 0; l < 2; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      add(p + "input_layernorm.weight", {H});
      add(p + "post_attention_layernorm.weight", {H});
      for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
        const int64_t out = proj[0] == 'q' ? Hq * D : Hkv * D;
        add(p + "self_attn." + proj + ".weight", {out, H});
        add(p + "self_attn." + proj + ".bias", {out});
      }
      add(p + "self_attn.o_proj.weight", {H, Hq * D});
      add(p + "self_attn.o_proj.bias", {H});
      add(p + "self_attn.sinks", {sinks_len});
      add(p + "mlp.router.weight", {E, H});
      add(p + "mlp.router.bias", {E});
    }
    ASSERT_TRUE(hf::write_checkpoint(dir.string(), t).is_ok());
  };
  auto export_error = [&]() {
    exporter::ExportOptions o;
    o.model = dir.string();
    o.output = (dir / "p.ogp").string();
    auto r = exporter::export_program(o);
    EXPECT_FALSE(r.is_ok());
    EXPECT_FALSE(std::filesystem::exists(o.output));
    return r.is_ok() ? std::string() : r.status().message();
  };
  write(Hq, json::object());
  std::string e = export_error();
  EXPECT_NE(e.find("'model.layers.0.mlp.experts.gate_up_proj_bias' not found"), std::string::npos) << e;
  write(Hq + 1, json::object());
  e = export_error();
  EXPECT_NE(e.find("model.layers.0.self_attn.sinks"), std::string::npos) << e;
  const std::pair<json, std::string> bad_fields[] = {
      {{{"num_experts_per_tok", 5}}, "'num_experts_per_tok'"},
      {{{"num_experts_per_tok", 0}}, "'num_experts_per_tok'"},
      {{{"num_local_experts", 0}}, "'num_local_experts'"},
      {{{"swiglu_limit", -1.0}}, "'swiglu_limit'"},
      {{{"swiglu_limit", 0.0}}, "'swiglu_limit'"},
      {{{"quantization_config", {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}}}}, "'quantization_config.quant_method'"},
      // (an fp8 quantization_config is read with the checkpoint: its block size first)
      {{{"quantization_config", {{"quant_method", "fp8"}}}}, "'quantization_config.weight_block_size'"},
      {{{"quantization_config", {{"quant_method", "mxfp4"}}}}, "'hidden_size'"},  // 16: not a multiple of 32
  };
  for (const auto& [overrides, field] : bad_fields) {
    write(Hq, overrides);
    e = export_error();
    EXPECT_NE(e.find(field), std::string::npos) << overrides.dump() << ": " << e;
  }
  std::filesystem::remove_all(dir);
}

json base(const std::string& model_type, int layers = 6) {
  return json{{"model_type", model_type}, {"vocab_size", 32}, {"hidden_size", 16}, {"intermediate_size", 32},
              {"num_hidden_layers", layers}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}};
}

std::vector<int32_t> windows_of(const json& j) {
  auto l = layout_of(j);
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return l.is_ok() ? l->windows : std::vector<int32_t>{};
}

TEST(Rules, LlamaIsAllFullAndHeadDimDefaultsToHiddenOverHeads) {
  auto l = layout_of(base("llama"));
  ASSERT_TRUE(l.is_ok());
  EXPECT_EQ(l->windows, std::vector<int32_t>(6, 0));
  EXPECT_EQ(l->head_dims, std::vector<int32_t>(6, 4));
}

TEST(Rules, MistralAndPhi3SlideOnEveryLayerWhenWindowIsSet) {
  for (const char* t : {"mistral", "phi3"}) {
    json j = base(t);
    j["sliding_window"] = 7;
    EXPECT_EQ(windows_of(j), std::vector<int32_t>(6, 7)) << t;
    j["sliding_window"] = nullptr;
    EXPECT_EQ(windows_of(j), std::vector<int32_t>(6, 0)) << t;
  }
}

TEST(Rules, QwenSlidesFromMaxWindowLayersOnlyWithUseSlidingWindow) {
  for (const char* t : {"qwen2", "qwen3"}) {
    json j = base(t);
    j["sliding_window"] = 5;
    j["max_window_layers"] = 4;
    j["use_sliding_window"] = false;
    EXPECT_EQ(windows_of(j), std::vector<int32_t>(6, 0)) << t;
    j["use_sliding_window"] = true;
    EXPECT_EQ(windows_of(j), (std::vector<int32_t>{0, 0, 0, 0, 5, 5})) << t;
  }
}

TEST(Rules, SmolLM3SlidesOnNoPELayersOnlyWithUseSlidingWindow) {
  json j = base("smollm3", 8);
  j["sliding_window"] = 5;
  EXPECT_EQ(windows_of(j), std::vector<int32_t>(8, 0));  // use_sliding_window defaults to false
  j["use_sliding_window"] = true;
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{0, 0, 0, 5, 0, 0, 0, 5}));  // NoPE every 4th layer
  j["no_rope_layer_interval"] = 3;
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{0, 0, 5, 0, 0, 5, 0, 0}));
  j["no_rope_layers"] = {0, 1, 1, 1, 1, 1, 1, 0, 1};  // the list wins over the interval; extra entries are ignored
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{5, 0, 0, 0, 0, 0, 0, 5}));
  j["sliding_window"] = nullptr;
  EXPECT_EQ(windows_of(j), std::vector<int32_t>(8, 0));
}

TEST(Rejections, SmolLM3FieldsItCannotHonourAreNamed) {
  struct Case { json patch; std::string needle; };
  std::vector<Case> cases = {
      // A sliding layer without use_sliding_window: transformers' attention implementations disagree.
      {{{"sliding_window", 4}, {"layer_types", {"full_attention", "sliding_attention", "full_attention", "full_attention"}}},
       "use_sliding_window"},
      {{{"no_rope_layers", {1, 1, 0}}}, "no_rope_layers"},
      {{{"no_rope_layers", {1, 1, 2, 1}}}, "no_rope_layers"},
      {{{"no_rope_layers", 1}}, "no_rope_layers"},
      {{{"no_rope_layer_interval", 0}}, "no_rope_layer_interval"},
      {{{"use_sliding_window", true}, {"layer_types", {"full_attention", "sliding_attention", "full_attention", "full_attention"}}},
       "sliding_window"},
  };
  for (const Case& c : cases) {
    json j = base("smollm3", 4);
    j.merge_patch(c.patch);
    auto l = layout_of(j);
    ASSERT_FALSE(l.is_ok()) << c.patch.dump();
    EXPECT_NE(l.status().message().find(c.needle), std::string::npos) << l.status().message();
  }
}

TEST(Rules, OmittedGemmaFieldsTakeTransformersDefaults) {
  json t{{"model_type", "gemma3_text"}, {"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 6}};
  json j{{"model_type", "gemma3"}, {"text_config", t}};
  auto l = layout_of(j);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->kv_heads, std::vector<int32_t>(6, 4));
  EXPECT_EQ(l->head_dims, std::vector<int32_t>(6, 256));
  EXPECT_EQ(l->windows, (std::vector<int32_t>{4096, 4096, 4096, 4096, 4096, 0}));
}

TEST(Rules, Gemma2AlternatesSlidingFirst) {
  json j = base("gemma2");
  j["sliding_window"] = 8;
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{8, 0, 8, 0, 8, 0}));
}

TEST(Rules, Gemma3UsesSlidingWindowPattern) {
  json j = base("gemma3_text");
  j["sliding_window"] = 4;
  j["sliding_window_pattern"] = 3;
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{4, 4, 0, 4, 4, 0}));
  json w{{"model_type", "gemma3"}, {"text_config", j}};
  w["text_config"]["model_type"] = "gemma3_text";
  EXPECT_EQ(windows_of(w), (std::vector<int32_t>{4, 4, 0, 4, 4, 0}));
}

TEST(Rules, LayerTypesOverrideTheFamilyRule) {
  json j = base("gemma3_text", 4);
  j["sliding_window"] = 3;
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  EXPECT_EQ(windows_of(j), (std::vector<int32_t>{0, 3, 0, 3}));
}

TEST(Rules, Gemma4ForcesLastLayerFullAndUsesGlobalHeadDim) {
  json t = base("gemma4_text", 5);
  t["sliding_window"] = 4;
  t["head_dim"] = 8;
  t["global_head_dim"] = 16;
  t["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention"};
  auto l = layout_of(t);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->windows, (std::vector<int32_t>{4, 0, 4, 4, 0}));
  EXPECT_EQ(l->head_dims, (std::vector<int32_t>{8, 16, 8, 8, 16}));
  // num_global_key_value_heads counts only with attention_k_eq_v (transformers' rule).
  t["num_global_key_value_heads"] = 1;
  EXPECT_EQ(layout_of(t)->kv_heads, (std::vector<int32_t>{2, 2, 2, 2, 2}));
  t["attention_k_eq_v"] = true;
  EXPECT_EQ(layout_of(t)->kv_heads, (std::vector<int32_t>{2, 1, 2, 2, 1}));
}

TEST(Rules, Gemma4PerLayerConfigGivesFullLayerGeometry) {
  json t = base("gemma4_text", 3);
  t["sliding_window"] = 4;
  t["head_dim"] = 8;
  t["layer_types"] = {"sliding_attention", "full_attention", "full_attention"};
  t["per_layer_config"] = {{"1", {{"head_dim", 32}, {"num_key_value_heads", 1}}}, {"2", {{"head_dim", 32}}}};
  auto l = layout_of(t);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->head_dims, (std::vector<int32_t>{8, 32, 32}));
  EXPECT_EQ(l->kv_heads, (std::vector<int32_t>{2, 1, 2}));
}

TEST(Rules, KvSharedLayersReadTheLastEarlierLayerOfTheirType) {
  json t = base("gemma3n_text", 8);
  t["sliding_window"] = 4;
  // Donors are not simply the last two layers before the shared block.
  t["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention",
                      "full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  t["num_kv_shared_layers"] = 3;
  auto l = layout_of(t);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->n_caches(), 5);
  EXPECT_EQ(l->layer_to_cache, (std::vector<int32_t>{0, 1, 2, 3, 4, 2, 4, 2}));
  t["num_kv_shared_layers"] = 0;
  EXPECT_EQ(layout_of(t)->n_caches(), 8);
}

TEST(Rejections, UnknownLayerTypeNamesLayerAndType) {
  json j = base("llama", 3);
  j["layer_types"] = {"full_attention", "chunked_attention", "full_attention"};
  auto l = layout_of(j);
  ASSERT_FALSE(l.is_ok());
  EXPECT_NE(l.status().message().find("layer 1"), std::string::npos);
  EXPECT_NE(l.status().message().find("chunked_attention"), std::string::npos);
  j["layer_types"] = {"full_attention", "linear_attention", "full_attention"};
  EXPECT_NE(layout_of(j).status().message().find("linear_attention"), std::string::npos);
}

TEST(Rejections, SlidingLayerWithoutWindow) {
  json j = base("gemma2", 2);
  j["sliding_window"] = nullptr;  // absent would mean Gemma2Config's default 4096
  auto l = layout_of(j);
  ASSERT_FALSE(l.is_ok());
  EXPECT_NE(l.status().message().find("sliding_window"), std::string::npos);
}

TEST(Rejections, SharedLayerWithoutDonorOfItsType) {
  json t = base("gemma3n_text", 4);
  t["sliding_window"] = 4;
  t["layer_types"] = {"sliding_attention", "sliding_attention", "sliding_attention", "full_attention"};
  t["num_kv_shared_layers"] = 1;
  auto l = layout_of(t);
  ASSERT_FALSE(l.is_ok());
  EXPECT_NE(l.status().message().find("layer 3"), std::string::npos);
}

TEST(Rejections, ConfigErrorsNameTheField) {
  struct Case { json patch; std::string needle; };
  std::vector<Case> cases = {
      {{{"model_type", "bert"}}, "unsupported model_type 'bert'"},
      {{{"num_hidden_layers", nullptr}}, "'num_hidden_layers' is missing"},
      {{{"hidden_size", "big"}}, "'hidden_size' must be an integer"},
      // fuzz_config: floats beyond int64 were converted before the range check (UB).
      {{{"hidden_size", 3.3e35}}, "'hidden_size' must be an integer"},
      {{{"num_hidden_layers", -1e300}}, "'num_hidden_layers' must be an integer"},
      {{{"num_key_value_heads", 3}}, "num_key_value_heads"},
      {{{"layer_types", {"full_attention"}}}, "layer_types"},
      {{{"num_kv_shared_layers", 6}}, "num_kv_shared_layers"},
      {{{"sliding_window", -1}}, "sliding_window"},
      {{{"intermediate_size", {1, 2}}}, "intermediate_size"},
  };
  for (const Case& c : cases) {
    json j = base("llama");
    j.merge_patch(c.patch);
    auto l = layout_of(j);
    ASSERT_FALSE(l.is_ok()) << c.patch.dump();
    EXPECT_NE(l.status().message().find(c.needle), std::string::npos) << l.status().message();
  }
  auto missing_text = exporter::parse_model_config(R"({"model_type": "gemma3"})", "config.json");
  ASSERT_FALSE(missing_text.is_ok());
  EXPECT_NE(missing_text.status().message().find("text_config"), std::string::npos);
  auto unsupported = exporter::parse_model_config(R"({"model_type": "bert"})", "config.json");
  EXPECT_NE(unsupported.status().message().find("llama, mistral"), std::string::npos);
}

}  // namespace
}  // namespace og
