// Defaults for keys a config.json omits. The exporter (its family files) and the float64
// reference (its own family table) each fill transformers' configuration-class defaults;
// the two copies are written independently, and this test holds both to values copied here
// from transformers' configuration_*.py, then runs exported programs whose configs omit
// default-dependent fields against the reference.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "e2e_support.h"
#include "export/family.h"
#include "export/layout_resolver.h"
#include "reference/reference.h"

namespace og {
namespace {

using nlohmann::json;
using namespace og::testing;

// The shape fields every config needs here (none of them a default under test).
json shape(const std::string& model_type, int layers = 6, int heads = 4) {
  return {{"model_type", model_type}, {"hidden_size", 64},           {"intermediate_size", 128},
          {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"vocab_size", 256}};
}

// Both layers' readings of one config.json text; the test fails if either refuses it.
struct BothReadings {
  hf::ModelConfig exporter, reference;
};
BothReadings read_both(const json& j) {
  auto e = exporter::parse_model_config(j.dump(), "config.json");
  auto r = reference::parse_model_config(j.dump(), "config.json");
  EXPECT_TRUE(e.is_ok()) << e.status().message();
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return {e.is_ok() ? *e : hf::ModelConfig{}, r.is_ok() ? *r : hf::ModelConfig{}};
}

// A text-model key as each layer filled it, or null when neither the file nor a default has it.
json text_key(const hf::ModelConfig& c, const char* key) { return c.text.contains(key) ? c.text.at(key) : json(); }

struct Expected {
  const char* key;
  json value;  // transformers' class default
};

void expect_defaults(const json& config, const std::vector<Expected>& want) {
  const BothReadings both = read_both(config);
  for (const hf::ModelConfig* c : {&both.exporter, &both.reference}) {
    const char* who = c == &both.exporter ? "exporter" : "reference";
    for (const Expected& w : want) EXPECT_EQ(text_key(*c, w.key), w.value) << who << ": " << w.key;
  }
}

TEST(ConfigDefaults, BothLayersFillTransformersClassDefaults) {
  // Gemma2Config.__init__ defaults.
  expect_defaults(shape("gemma2"), {{"num_key_value_heads", 4}, {"head_dim", 256}, {"rope_theta", 10000.0},
                                    {"query_pre_attn_scalar", 256}, {"sliding_window", 4096},
                                    {"final_logit_softcapping", 30.0}, {"attn_logit_softcapping", 50.0},
                                    {"rms_norm_eps", 1e-6}, {"hidden_activation", "gelu_pytorch_tanh"}});
  // Gemma3TextConfig, inside the gemma3 wrapper's text_config.
  json gemma3 = {{"model_type", "gemma3"}, {"text_config", shape("gemma3_text")}};
  expect_defaults(gemma3, {{"num_key_value_heads", 4}, {"head_dim", 256}, {"rope_theta", 1000000.0},
                           {"rope_local_base_freq", 10000.0}, {"query_pre_attn_scalar", 256},
                           {"sliding_window", 4096}, {"sliding_window_pattern", 6}, {"final_logit_softcapping", nullptr}});
  // Gemma3nTextConfig and Gemma4TextConfig.
  expect_defaults({{"model_type", "gemma3n"}, {"text_config", shape("gemma3n_text", 20)}},
                  {{"head_dim", 256}, {"num_key_value_heads", 2}, {"num_kv_shared_layers", 15}, {"rms_norm_eps", 1e-6},
                   {"sliding_window", 512}});
  expect_defaults({{"model_type", "gemma4"}, {"text_config", shape("gemma4_text")}},
                  {{"sliding_window", 512}, {"head_dim", 256}, {"num_key_value_heads", 4},
                   {"hidden_size_per_layer_input", 256}, {"vocab_size_per_layer_input", 262144}});
  // MistralConfig, Qwen3Config (head_dim 128, not hidden / heads), Qwen2Config, Phi3Config.
  expect_defaults(shape("mistral", 6, 8), {{"num_key_value_heads", 8}, {"sliding_window", 4096}});
  expect_defaults(shape("qwen3"), {{"head_dim", 128}, {"sliding_window", 4096}});
  expect_defaults(shape("qwen2"), {{"sliding_window", 4096}});
  expect_defaults(shape("phi3"), {{"rms_norm_eps", 1e-5}});
  // SmolLM3Config (transformers models/smollm3/configuration_smollm3.py): rope_theta 2e6 (the
  // class's default_theta), a NoPE layer every 4th, sliding off, no biases.
  expect_defaults(shape("smollm3"), {{"num_key_value_heads", 4}, {"hidden_act", "silu"},
                                     {"max_position_embeddings", 32768}, {"rms_norm_eps", 1e-6},
                                     {"rope_theta", 2000000.0}, {"use_sliding_window", false},
                                     {"sliding_window", nullptr}, {"no_rope_layers", nullptr},
                                     {"no_rope_layer_interval", 4}, {"layer_types", nullptr},
                                     {"attention_bias", false}, {"mlp_bias", false}});
  // PhiConfig, StableLmConfig, Starcoder2Config (configuration_{phi,stablelm,starcoder2}.py).
  expect_defaults(shape("phi"), {{"hidden_act", "gelu_new"}, {"partial_rotary_factor", 0.5}, {"rope_theta", 10000.0}});
  expect_defaults(shape("stablelm"), {{"partial_rotary_factor", 0.25}, {"rope_theta", 10000.0}});
  expect_defaults(shape("starcoder2"), {{"hidden_act", "gelu_pytorch_tanh"}});
  expect_defaults(shape("cohere"), {{"rope_theta", 10000.0}});
  expect_defaults(shape("ernie4_5"), {{"rms_norm_eps", 1e-5}, {"rope_theta", 500000.0}, {"num_key_value_heads", 2},
                                      {"head_dim", 128}});
  // GPTNeoXConfig: rotary_pct and rotary_emb_base are what the exporter reads as
  // partial_rotary_factor and rope_theta (its own names, read by the reference).
  const BothReadings neox = read_both(shape("gpt_neox"));
  EXPECT_EQ(text_key(neox.exporter, "partial_rotary_factor"), 0.25);
  EXPECT_EQ(text_key(neox.exporter, "rope_theta"), 10000.0);
  EXPECT_EQ(text_key(neox.reference, "rotary_pct"), 0.25);
  EXPECT_EQ(neox.exporter.rms_norm_eps, 1e-5);
  for (const hf::ModelConfig* c : {&neox.exporter, &neox.reference}) EXPECT_EQ(text_key(*c, "hidden_act"), "gelu");
  for (const char* glm : {"glm", "glm4"})  // GlmConfig (Glm4Config's are the same)
    expect_defaults(shape(glm), {{"rms_norm_eps", 1.5625e-07}, {"partial_rotary_factor", 0.5}, {"rope_theta", 10000.0},
                                 {"num_key_value_heads", 2}, {"head_dim", 128}});
  expect_defaults(shape("cohere2"), {{"rope_theta", 10000.0}, {"sliding_window", 4096}});
  // Qwen3MoeConfig (no head_dim key: modeling's fallback is hidden_size / heads).
  json moe = shape("qwen3_moe");
  moe.erase("intermediate_size");
  expect_defaults(moe, {{"num_experts", 128}, {"num_experts_per_tok", 8}, {"moe_intermediate_size", 768},
                        {"norm_topk_prob", false}, {"decoder_sparse_step", 1}, {"intermediate_size", 6144},
                        {"sliding_window", 4096}, {"rms_norm_eps", 1e-6}, {"head_dim", nullptr}});
  const BothReadings m = read_both(moe);
  for (const hf::ModelConfig* c : {&m.exporter, &m.reference}) EXPECT_EQ(c->head_dim, 16);
}

TEST(ConfigDefaults, TypedFieldsAndTyingFollowTheDefaults) {
  json gemma3 = {{"model_type", "gemma3"}, {"text_config", shape("gemma3_text")}};
  const BothReadings g3 = read_both(gemma3);
  for (const hf::ModelConfig* c : {&g3.exporter, &g3.reference}) {
    EXPECT_EQ(c->sliding_window, 4096);
    EXPECT_EQ(c->head_dim, 256);
    EXPECT_EQ(c->num_key_value_heads, 4);
    EXPECT_TRUE(c->tie_word_embeddings);  // Gemma3TextConfig: tie_word_embeddings=True
  }
  const BothReadings q3 = read_both(shape("qwen3"));
  for (const hf::ModelConfig* c : {&q3.exporter, &q3.reference}) {
    EXPECT_EQ(c->head_dim, 128);
    EXPECT_FALSE(c->tie_word_embeddings);  // Qwen3Config: tie_word_embeddings=False
  }
  const BothReadings s3 = read_both(shape("smollm3"));
  for (const hf::ModelConfig* c : {&s3.exporter, &s3.reference}) {
    EXPECT_EQ(c->head_dim, 16);                 // SmolLM3Attention: hidden_size / num_attention_heads
    EXPECT_EQ(c->num_key_value_heads, 4);
    EXPECT_TRUE(c->tie_word_embeddings);        // SmolLM3Config: tie_word_embeddings=True
    EXPECT_FALSE(c->sliding_window.has_value());
  }
  // The LayerNorm families' eps under their own names: 1e-5 when absent; the exporter reads a
  // given norm_epsilon / layer_norm_eps as its norms' eps (the reference reads those fields itself).
  for (const auto& [type, key, tied] : {std::tuple{"starcoder2", "norm_epsilon", true}, std::tuple{"phi", "layer_norm_eps", false},
                                        std::tuple{"stablelm", "layer_norm_eps", false}, std::tuple{"cohere", "layer_norm_eps", true},
                                        std::tuple{"cohere2", "layer_norm_eps", true}}) {
    const BothReadings absent = read_both(shape(type));
    EXPECT_EQ(absent.exporter.rms_norm_eps, 1e-5) << type;
    EXPECT_EQ(text_key(absent.reference, key), 1e-5) << type;
    for (const hf::ModelConfig* c : {&absent.exporter, &absent.reference}) EXPECT_EQ(c->tie_word_embeddings, tied) << type;
    json given = shape(type);
    given[key] = 3e-4;
    EXPECT_EQ(read_both(given).exporter.rms_norm_eps, 3e-4) << type;
  }
  const BothReadings l = read_both(shape("llama"));
  for (const hf::ModelConfig* c : {&l.exporter, &l.reference}) {
    EXPECT_EQ(c->head_dim, 16);  // LlamaConfig: hidden_size / num_attention_heads
    EXPECT_FALSE(c->sliding_window.has_value());
  }
}

TEST(ConfigDefaults, OmittedGemma3PatternGivesTheSameWindowsInBothLayers) {
  json gemma3 = {{"model_type", "gemma3"}, {"text_config", shape("gemma3_text")}};
  const BothReadings both = read_both(gemma3);
  // sliding_window_pattern 6: layer 5 is full, the rest slide over 4096 positions.
  const std::vector<int64_t> want{4096, 4096, 4096, 4096, 4096, 0};
  auto layout = exporter::resolve_layout(both.exporter);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  EXPECT_EQ(std::vector<int64_t>(layout->windows.begin(), layout->windows.end()), want);
  auto windows = reference::layer_windows(both.reference);
  ASSERT_TRUE(windows.is_ok()) << windows.status().message();
  EXPECT_EQ(*windows, want);
}

TEST(ConfigDefaults, OmittedSmolLM3LayerTypesSlideOnTheNoPELayersInBothLayers) {
  // SmolLM3Config: no_rope_layers from no_rope_layer_interval 4 (layers 3 and 7 NoPE), then
  // layer_types sliding exactly there, and only with use_sliding_window.
  json j = shape("smollm3", 8);
  j["sliding_window"] = 3;
  for (bool use : {false, true}) {
    j["use_sliding_window"] = use;
    const BothReadings both = read_both(j);
    const std::vector<int64_t> want = use ? std::vector<int64_t>{0, 0, 0, 3, 0, 0, 0, 3} : std::vector<int64_t>(8, 0);
    auto layout = exporter::resolve_layout(both.exporter);
    ASSERT_TRUE(layout.is_ok()) << layout.status().message();
    EXPECT_EQ(std::vector<int64_t>(layout->windows.begin(), layout->windows.end()), want) << use;
    auto windows = reference::layer_windows(both.reference);
    ASSERT_TRUE(windows.is_ok()) << windows.status().message();
    EXPECT_EQ(*windows, want) << use;
  }
}

// Exports a checkpoint whose config omits `removed` (a merge patch of nulls on the text
// config; `added` merged too) and compares the fp32 program with the reference, which reads
// the same file.
void expect_program_matches_reference(const std::string& family, const json& removed, uint64_t seed,
                                      const json& added = json::object()) {
  json overrides = removed;
  overrides.merge_patch(added);
  auto g = generate({.family = family, .seed = seed, .overrides = overrides});
  // The file really lacks the keys (the test would prove nothing if the generator kept them).
  auto file = hf::parse_json(read_file(g->model_dir() + "/config.json"), "config.json");
  ASSERT_TRUE(file.is_ok());
  const json& text = file->contains("text_config") ? file->at("text_config") : *file;
  for (const auto& [key, value] : removed.items()) ASSERT_FALSE(text.contains(key)) << key;
  auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const auto ids = test_tokens(24, g->config.vocab_size, static_cast<uint32_t>(seed));
  Diff d = compare(run_program(*model, ids, 4), reference_logits(*g, ids), g->config.vocab_size);
  EXPECT_LE(d.relative(), 1e-4) << family << ": max|diff| " << d.max_abs << " vs max|logit| " << d.max_ref;
}

TEST(ConfigDefaults, Gemma3WithoutWindowPatternAndQueryScalarMatchesReference) {
  expect_program_matches_reference("gemma3",
                                   {{"sliding_window", nullptr}, {"sliding_window_pattern", nullptr},
                                    {"query_pre_attn_scalar", nullptr}, {"rope_local_base_freq", nullptr}},
                                   51);
}

TEST(ConfigDefaults, Gemma2WithoutSoftcapsAndQueryScalarMatchesReference) {
  expect_program_matches_reference("gemma2",
                                   {{"final_logit_softcapping", nullptr}, {"attn_logit_softcapping", nullptr},
                                    {"query_pre_attn_scalar", nullptr}, {"sliding_window", nullptr}},
                                   52);
}

TEST(ConfigDefaults, SmolLM3WithoutRopeThetaNoPELayersAndTyingMatchesReference) {
  // rope_theta 2e6, no_rope_layers from no_rope_layer_interval 4, 4 kv heads, tied head.
  expect_program_matches_reference("smollm3",
                                   {{"rope_theta", nullptr}, {"no_rope_layers", nullptr},
                                    {"no_rope_layer_interval", nullptr}, {"layer_types", nullptr},
                                    {"num_key_value_heads", nullptr}, {"tie_word_embeddings", nullptr},
                                    {"rms_norm_eps", nullptr}, {"attention_bias", nullptr}, {"mlp_bias", nullptr},
                                    {"use_sliding_window", nullptr}, {"hidden_act", nullptr}},
                                   53);
}

// The LayerNorm families without their eps, activation, rotary fraction, bias switch and tying.
TEST(ConfigDefaults, LayerNormFamiliesWithoutTheirDefaultedFieldsMatchReference) {
  expect_program_matches_reference("starcoder2",
                                   {{"norm_epsilon", nullptr}, {"hidden_act", nullptr}, {"use_bias", nullptr},
                                    {"rope_theta", nullptr}},
                                   54);
  expect_program_matches_reference("phi",
                                   {{"layer_norm_eps", nullptr}, {"hidden_act", nullptr}, {"partial_rotary_factor", nullptr},
                                    {"qk_layernorm", nullptr}, {"tie_word_embeddings", nullptr}},
                                   55);
  expect_program_matches_reference("stablelm",
                                   {{"layer_norm_eps", nullptr}, {"partial_rotary_factor", nullptr}, {"use_qkv_bias", nullptr},
                                    {"rope_theta", nullptr}, {"hidden_act", nullptr}},
                                   56);
  // GPT-NeoX without its rotary fields, eps, activation and block switches.
  expect_program_matches_reference("gpt_neox",
                                   {{"rotary_pct", nullptr}, {"rotary_emb_base", nullptr}, {"layer_norm_eps", nullptr},
                                    {"hidden_act", nullptr}, {"use_parallel_residual", nullptr}},
                                   58);
  // Cohere2 without its pattern, eps, logit_scale and tying: every 4th layer full and NoPE.
  expect_program_matches_reference("cohere2",
                                   {{"sliding_window_pattern", nullptr}, {"layer_norm_eps", nullptr},
                                    {"logit_scale", nullptr}, {"tie_word_embeddings", nullptr}, {"hidden_act", nullptr}},
                                   57);
}

// Fields transformers' config classes read otherwise than the file says (each case differs
// from a plain reading of config.json; both layers must read it as the class does).
TEST(ConfigDefaults, FieldsAsTheConfigClassesReadThem) {
  // Qwen3MoeConfig: num_key_value_heads defaults to 4, not num_attention_heads (8 here).
  const BothReadings moe = read_both(shape("qwen3_moe", 6, 8));
  for (const hf::ModelConfig* c : {&moe.exporter, &moe.reference}) EXPECT_EQ(c->num_key_value_heads, 4);
  // transformers 5 saves num_experts as num_local_experts: read as num_experts (not the
  // class default 128); where both are present num_experts stands.
  json v5 = shape("qwen3_moe");
  v5["num_local_experts"] = 16;
  expect_defaults(v5, {{"num_experts", 16}});
  v5["num_experts"] = 32;
  expect_defaults(v5, {{"num_experts", 32}});
}

TEST(ConfigDefaults, Qwen3MoeSavedByTransformers5MatchesReference) {
  // num_local_experts (4, against the tiny config's 8) in place of num_experts, no kv heads.
  expect_program_matches_reference("qwen3_moe", {{"num_experts", nullptr}, {"num_key_value_heads", nullptr}}, 55,
                                   {{"num_local_experts", 4}});
  // OlmoeConfig: eps 1e-5, not renormalized, kv heads = heads, num_local_experts its alias.
  expect_program_matches_reference("olmoe",
                                   {{"num_experts", nullptr}, {"num_key_value_heads", nullptr}, {"rms_norm_eps", nullptr},
                                    {"norm_topk_prob", nullptr}, {"clip_qkv", nullptr}, {"attention_bias", nullptr}},
                                   57, {{"num_local_experts", 4}});
  // GraniteMoeConfig: eps 1e-6, every multiplier 1.0, kv heads = heads, no attention biases.
  expect_program_matches_reference("granitemoe",
                                   {{"rms_norm_eps", nullptr}, {"num_key_value_heads", nullptr}, {"attention_bias", nullptr},
                                    {"embedding_multiplier", nullptr}, {"attention_multiplier", nullptr},
                                    {"residual_multiplier", nullptr}, {"logits_scaling", nullptr}},
                                   59);
  // GraniteMoeSharedConfig: shared_intermediate_size 0 (no shared expert) when absent.
  expect_program_matches_reference("granitemoeshared", {{"shared_intermediate_size", nullptr}, {"rms_norm_eps", nullptr}}, 60);
  // Glm4MoeConfig: eps 1e-5, half the head rotated, rope_theta 1e4, no biases, no q/k norms,
  // renormalized, factor 1, one group, one shared expert, the first layer dense; no head_dim
  // (hidden_size / heads = 16 against the tiny config's 32).
  expect_program_matches_reference("glm4_moe",
                                   {{"rms_norm_eps", nullptr}, {"partial_rotary_factor", nullptr}, {"rope_theta", nullptr},
                                    {"attention_bias", nullptr}, {"use_qk_norm", nullptr}, {"norm_topk_prob", nullptr},
                                    {"routed_scaling_factor", nullptr}, {"n_group", nullptr}, {"topk_group", nullptr},
                                    {"n_shared_experts", nullptr}, {"first_k_dense_replace", nullptr}, {"head_dim", nullptr}},
                                   61);
  // Ernie4_5_MoeConfig: eps 1e-5, rope_theta 5e5, two shared experts, sparse from layer 1 to the
  // last, every layer, the 1e-12 floor, a tied head; num_experts / num_experts_per_tok its aliases.
  expect_program_matches_reference("ernie4_5_moe",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"moe_num_shared_experts", nullptr},
                                    {"moe_layer_start_index", nullptr}, {"moe_layer_interval", nullptr},
                                    {"tie_word_embeddings", nullptr}, {"moe_num_experts", nullptr}, {"moe_k", nullptr}},
                                   62, {{"num_experts", 4}, {"num_experts_per_tok", 3}});
  // DeepseekV3Config: the rope on interleaved pairs, no biases, renormalized, eps 1e-6, rope_theta
  // 1e4, untied (each at its class default; rope_scaling absent: no YaRN, the plain scale).
  expect_program_matches_reference("deepseek_v3",
                                   {{"rope_interleave", nullptr}, {"attention_bias", nullptr}, {"norm_topk_prob", nullptr},
                                    {"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"tie_word_embeddings", nullptr},
                                    {"rope_scaling", nullptr}},
                                   63);
  // DeepseekV2Config: no biases, not renormalized, greedy, eps 1e-6, rope_theta 1e4, two shared
  // experts, untied, no dense layer (first_k_dense_replace 0), the plain scale.
  expect_program_matches_reference("deepseek_v2",
                                   {{"attention_bias", nullptr}, {"norm_topk_prob", nullptr}, {"topk_method", nullptr},
                                    {"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"n_shared_experts", nullptr},
                                    {"tie_word_embeddings", nullptr}, {"first_k_dense_replace", nullptr},
                                    {"rope_scaling", nullptr}},
                                   64);
  // Glm4MoeLiteConfig: pairs, no biases, renormalized, eps 1e-5, rope_theta 1e4, × 1.8, one group,
  // one shared expert, untied, layer 0 dense (first_k_dense_replace is not read).
  expect_program_matches_reference("glm4_moe_lite",
                                   {{"rope_interleave", nullptr}, {"attention_bias", nullptr}, {"norm_topk_prob", nullptr},
                                    {"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"routed_scaling_factor", nullptr},
                                    {"n_group", nullptr}, {"topk_group", nullptr}, {"n_shared_experts", nullptr},
                                    {"tie_word_embeddings", nullptr}, {"first_k_dense_replace", nullptr}},
                                   65);
  // MiniMaxM2Config: eps 1e-6, rope_theta 5e6, untied; num_experts its alias of num_local_experts.
  expect_program_matches_reference("minimax_m2",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"tie_word_embeddings", nullptr},
                                    {"num_local_experts", nullptr}},
                                   66, {{"num_experts", 8}});
  // Dots1Config: eps 1e-6, rope_theta 1e4, no biases, not renormalized, factor 1, one group,
  // untied; sliding_window 4096 from max_window_layers 62 on, so no layer slides here.
  expect_program_matches_reference("dots1",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"attention_bias", nullptr},
                                    {"norm_topk_prob", nullptr}, {"routed_scaling_factor", nullptr},
                                    {"tie_word_embeddings", nullptr}, {"sliding_window", nullptr},
                                    {"max_window_layers", nullptr}},
                                   67);
  // SeedOssConfig: q/k/v biased (attention_bias true), o_proj not (attention_out_bias false),
  // eps 1e-6, rope_theta 1e4, untied.
  expect_program_matches_reference("seed_oss",
                                   {{"attention_bias", nullptr}, {"attention_out_bias", nullptr}, {"rms_norm_eps", nullptr},
                                    {"rope_theta", nullptr}, {"tie_word_embeddings", nullptr}},
                                   68);
  // ArceeConfig: eps 1e-5, rope_theta 1e4, relu2, no biases, untied (rope_scaling removed too: the
  // default rope).
  expect_program_matches_reference("arcee",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"hidden_act", nullptr},
                                    {"attention_bias", nullptr}, {"mlp_bias", nullptr}, {"tie_word_embeddings", nullptr},
                                    {"rope_scaling", nullptr}},
                                   70);
  // NemotronConfig: norm_eps 1e-5, partial_rotary_factor 0.5, relu2, rope_theta 1e4, no biases
  // (the generator then writes none), untied.
  expect_program_matches_reference("nemotron",
                                   {{"norm_eps", nullptr}, {"partial_rotary_factor", nullptr}, {"hidden_act", nullptr},
                                    {"rope_theta", nullptr}, {"attention_bias", nullptr}, {"mlp_bias", nullptr},
                                    {"tie_word_embeddings", nullptr}},
                                   71);
  // HunYuanDenseV1Config: eps 1e-5, rope_theta 1e4 (under the NTK-alpha rope, which scales it),
  // silu, no biases, untied.
  expect_program_matches_reference("hunyuan_v1_dense",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"hidden_act", nullptr},
                                    {"attention_bias", nullptr}, {"tie_word_embeddings", nullptr}},
                                   72);
  // ApertusConfig: eps 1e-5, xielu, no biases, untied, and its llama3 rope (theta 1.2e7, factor 8
  // from 8192: these positions are all below it, where llama3 divides only the low frequencies).
  expect_program_matches_reference("apertus",
                                   {{"rms_norm_eps", nullptr}, {"hidden_act", nullptr}, {"attention_bias", nullptr},
                                    {"tie_word_embeddings", nullptr}, {"rope_theta", nullptr}, {"rope_scaling", nullptr}},
                                   73);
  // GPT2Config: gelu_new, eps 1e-5, 1024 positions (the table the generator then writes, and the
  // program's context), tied.
  expect_program_matches_reference("gpt2",
                                   {{"activation_function", nullptr}, {"layer_norm_epsilon", nullptr},
                                    {"n_positions", nullptr}, {"tie_word_embeddings", nullptr}},
                                   74);
  // GPTBigCodeConfig: gelu_pytorch_tanh, multi_query, 4 n_embd inner, 1024 positions, tied.
  expect_program_matches_reference("gpt_bigcode",
                                   {{"activation_function", nullptr}, {"multi_query", nullptr}, {"n_inner", nullptr},
                                    {"n_positions", nullptr}, {"tie_word_embeddings", nullptr}},
                                   75);
  // FalconConfig: eps 1e-5, multi_query, parallel_attn, no biases, gelu, 4 hidden inner, tied.
  expect_program_matches_reference("falcon",
                                   {{"layer_norm_epsilon", nullptr}, {"multi_query", nullptr}, {"parallel_attn", nullptr},
                                    {"bias", nullptr}, {"alibi", nullptr}, {"new_decoder_architecture", nullptr},
                                    {"tie_word_embeddings", nullptr}},
                                   76);
  // Exaone4Config: eps 1e-5, rope_theta 1e4, untied, sliding_window 4096 with pattern 4 (layers
  // 0-2 sliding and rotated, layer 3 full without the rope).
  expect_program_matches_reference("exaone4_hybrid",
                                   {{"rms_norm_eps", nullptr}, {"rope_theta", nullptr}, {"tie_word_embeddings", nullptr},
                                    {"sliding_window", nullptr}, {"sliding_window_pattern", nullptr}},
                                   69);
}

// GptOssConfig sets attention_bias = True whatever config.json says: a checkpoint with q/k/v/o
// biases and "attention_bias": false loads in transformers with its biases. The reference
// gives the same logits as with the flag true, and the program matches it.
TEST(ConfigDefaults, GptOssAttentionBiasIsAlwaysOnAsItsConfigClassSets) {
  auto on = generate({.family = "gpt_oss", .seed = 56});
  auto off = generate({.family = "gpt_oss", .seed = 56, .overrides = {{"attention_bias", false}}});
  auto file = hf::parse_json(read_file(off->model_dir() + "/config.json"), "config.json");
  ASSERT_TRUE(file.is_ok());
  ASSERT_EQ(file->at("attention_bias"), false);
  const auto ids = test_tokens(16, on->config.vocab_size, 56);
  const auto want = reference_logits(*on, ids);
  EXPECT_EQ(reference_logits(*off, ids), want);
  auto model = runtime::Model::load(export_to(*off, "p.ogp", "fp32"));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  Diff d = compare(run_program(*model, ids, 4), want, on->config.vocab_size);
  EXPECT_LE(d.relative(), 1e-4) << "max|diff| " << d.max_abs << " vs max|logit| " << d.max_ref;
}

}  // namespace
}  // namespace og
