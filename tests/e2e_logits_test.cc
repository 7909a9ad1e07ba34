// Export and run, end to end, for every family: the runtime's logits against the float64
// reference (which recomputes from the HF weights without any cache), across step sizes
// and prefill chunk sizes small enough that ring caches wrap several times.
//
// Tolerances: fp32 programs max|diff| <= 1e-4 * max|logit| (measured: ~4e-7);
// bf16 programs of bf16 checkpoints: the same bound (measured ~4e-7: the weights are exact,
// only the order of f32 accumulation differs) and greedy argmax equal on >= 99% of positions
// (measured 100%); bf16 programs of fp32 checkpoints: 5% (measured 0.3%-2%, bf16 rounding);
// decode vs one-shot prefill within 1e-5 relative (measured: identical). A routed (MoE) model's
// bf16 program of fp32 weights is held to the reference on its stored values instead (1e-4).
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "base/half.h"
#include "e2e_support.h"
#include "hf/safetensors_writer.h"
#include "program/program_file.h"
#include "program/validator.h"
#include "reference/rope.h"

namespace og {
namespace {

using namespace og::testing;

struct FamilyCase {
  std::string family;
  uint64_t seed;
  nlohmann::json overrides = nlohmann::json::object();
  std::string name = {};  // test name when a family has several cases (default: the family)
};

// gtest prints a failing case's parameter with this.
void PrintTo(const FamilyCase& c, std::ostream* os) { *os << c.family << " " << c.overrides.dump(); }
// Families whose MoE routing makes logits discontinuous in the weights.
bool routed(const std::string& family) {
  return family == "qwen3_moe" || family == "qwen2_moe" || family == "mixtral" || family == "gpt_oss" || family == "olmoe" || family == "granitemoe" || family == "granitemoeshared" || family == "glm4_moe" ||
         family == "ernie4_5_moe" || family == "deepseek_v3" || family == "moonlight" || family == "deepseek_v2" ||
         family == "deepseek_v2_grouped" || family == "glm4_moe_lite" || family == "glm4_moe_lite_layer_types" || family == "minimax_m2" || family == "dots1" || family == "kimi_k2";
}

// A float32 copy of g's checkpoint holding the values the program stores: each tensor the
// program keeps in bf16 rounded to bf16 (as the exporter rounds it), the others unchanged.
std::string stored_values_checkpoint(const Generated& g, const std::string& program, const std::string& dir) {
  auto pf = program::ProgramFile::open(program);
  EXPECT_TRUE(pf.is_ok());
  // A program tensor may be a slice of a checkpoint tensor ("...gate_up_proj[3][0:128:2].T"):
  // the checkpoint name is the part before the first '['.
  std::set<std::string> bf16;
  for (const fb::Tensor* t : *(*pf)->program().tensors())
    if (t->dtype() == fb::DType::BF16) bf16.insert(checkpoint_name_of(t->name()->str()));
  return write_f32_checkpoint(g, dir, [&](const std::string& name, int64_t, float f) {
    return bf16.contains(name) ? bf16_to_float(float_to_bf16(f)) : f;
  });
}

// Phi-3.5-mini's rope fields (rope_scaling longrope, original_max_position_embeddings below
// max_position_embeddings) on gen-model's tiny Phi-3 (rotary width 12), with the pretraining
// context shrunk from 4096 to 10 positions.
const nlohmann::json kLongRope = {
    {"rope_scaling",
     {{"type", "longrope"},
      {"short_factor", {1.0, 1.02, 1.1, 1.25, 1.5, 1.9}},
      {"long_factor", {1.0, 1.5, 2.5, 4.0, 7.0, 11.0}}}},
    {"original_max_position_embeddings", 10},
    {"max_position_embeddings", 256}};

class FamilyE2E : public ::testing::TestWithParam<FamilyCase> {
 protected:
  static int64_t smallest_window(const hf::ModelConfig& c) {
    auto l = reference::layer_windows(c);
    EXPECT_TRUE(l.is_ok()) << l.status().message();
    int64_t w = 0;
    if (l.is_ok())
      for (int64_t x : *l)
      if (x > 0 && (w == 0 || x < w)) w = x;
    return w;
  }
  // At least 2.5x the smallest window, and at least 24 tokens.
  static int64_t sequence_length(const hf::ModelConfig& c) {
    return std::max<int64_t>(24, (smallest_window(c) * 5 + 1) / 2 + 3);
  }
};

TEST_P(FamilyE2E, Fp32ProgramsMatchReferenceForEveryStepAndChunkSize) {
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed, .overrides = GetParam().overrides});
  const int64_t w = smallest_window(g->config);
  // Families without sliding layers (the Qwen MoE families refuse use_sliding_window: see
  // export/families/qwen_moe.h).
  static const std::set<std::string> kFullOnly = {"llama", "smollm", "smollm3", "qwen3_moe", "qwen2_moe", "granite", "olmo2", "gemma", "phi", "stablelm", "cohere", "glm", "glm4", "ernie4_5", "gpt_neox", "olmoe", "granitemoe", "granitemoeshared", "glm4_moe", "ernie4_5_moe", "deepseek_v3", "moonlight", "deepseek_v2", "deepseek_v2_grouped", "glm4_moe_lite", "glm4_moe_lite_layer_types", "minimax_m2", "seed_oss", "exaone4", "kimi_k2", "arcee", "nemotron", "hunyuan_v1_dense", "apertus", "gpt2", "gpt2_untied_by_layer", "gpt_bigcode", "gpt_bigcode_per_head_untied", "falcon", "falcon_new_architecture", "falcon_sequential_per_head"};
  if (!kFullOnly.contains(GetParam().family)) {
    EXPECT_GT(w, 0) << "family tests need a sliding layer";
  }
  const auto ids = test_tokens(sequence_length(g->config), g->config.vocab_size, static_cast<uint32_t>(GetParam().seed));
  const auto want = reference_logits(*g, ids);
  // Default chunk, and a small one so that every ring wraps several times.
  for (int64_t program_chunk : {int64_t{0}, int64_t{3}}) {
    auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", program_chunk));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    for (int64_t step : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{(*model)->prefill_chunk_size()}}) {
      if (step > (*model)->prefill_chunk_size()) continue;
      Diff d = compare(run_program(*model, ids, step), want, g->config.vocab_size);
      EXPECT_LE(d.relative(), 1e-4) << "program chunk " << (*model)->prefill_chunk_size() << ", step " << step
                                    << ": max|diff| " << d.max_abs << " vs max|logit| " << d.max_ref;
    }
  }
}

TEST_P(FamilyE2E, ChunksThatStraddleTheWindowMatchReference) {
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed + 100, .overrides = GetParam().overrides});
  const int64_t w = smallest_window(g->config);
  if (w == 0) GTEST_SKIP() << "no sliding layers";
  const auto ids = test_tokens(sequence_length(g->config) + 5, g->config.vocab_size, 11);
  const auto want = reference_logits(*g, ids);
  // Chunks of w - 1, w + 1 and 2w + 1 start and end at every offset relative to the window.
  for (int64_t chunk : {w - 1, w + 1, 2 * w + 1}) {
    if (chunk < 1) continue;
    auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", chunk));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    Diff d = compare(run_program(*model, ids, chunk), want, g->config.vocab_size);
    EXPECT_LE(d.relative(), 1e-4) << "chunk " << chunk << " window " << w;
  }
}

TEST_P(FamilyE2E, TokenByTokenDecodeEqualsOneShotPrefill) {
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed + 200, .overrides = GetParam().overrides});
  const auto ids = test_tokens(sequence_length(g->config), g->config.vocab_size, 5);
  auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(model.is_ok());
  Diff d = compare(run_program(*model, ids, 1), run_program(*model, ids, static_cast<int64_t>(ids.size())),
                   g->config.vocab_size);
  EXPECT_LE(d.relative(), 1e-5);
  // A mixture of experts groups a prefill's rows by expert; each row's sum stays in its
  // top-k order, so decode equals prefill bit for bit.
  if (routed(GetParam().family)) {
    EXPECT_EQ(d.max_abs, 0.0);
  }
}

TEST_P(FamilyE2E, Bf16SourceWeightsMatchReferenceInFp32AndBf16Programs) {
  auto g = generate({.family = GetParam().family, .dtype = DType::kBF16, .seed = GetParam().seed + 300, .overrides = GetParam().overrides});
  const auto ids = test_tokens(sequence_length(g->config), g->config.vocab_size, 3);
  const auto want = reference_logits(*g, ids);
  // bf16 weights are exactly representable in both programs: only compute order differs.
  for (const char* dtype : {"fp32", "bf16"}) {
    auto model = runtime::Model::load(export_to(*g, "p.ogp", dtype, 4));
    ASSERT_TRUE(model.is_ok());
    Diff d = compare(run_program(*model, ids, 3), want, g->config.vocab_size);
    EXPECT_LE(d.relative(), 1e-4) << dtype;
    EXPECT_GE(d.argmax_agreement, 0.99) << dtype;  // greedy decoding follows the reference
  }
}

TEST_P(FamilyE2E, Bf16ProgramsFromFp32WeightsStayCloseAndAgreeOnArgmax) {
  // Rounding fp32 weights to bf16 (8 bits of mantissa) perturbs logits; measured relative
  // max|diff| on these models: 0.3%-2%. Bound: 5%. Random tiny models have many near-ties
  // (top-2 gaps below the bf16 noise) that no real model has, so greedy argmax must agree on
  // every position whose reference margin exceeds twice the observed error, and on >= 93%
  // of all positions (measured 96.9%-100%).
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed + 400, .overrides = GetParam().overrides});
  const auto ids = test_tokens(128, g->config.vocab_size, 9);
  const auto want = reference_logits(*g, ids);
  const std::string program = export_to(*g, "p.ogp", "bf16");
  auto model = runtime::Model::load(program);
  ASSERT_TRUE(model.is_ok());
  const auto got = run_program(*model, ids, 5);
  Diff d = compare(got, want, g->config.vocab_size);
  if (routed(GetParam().family)) {
    // Rounding moves a token near a routing boundary to another expert, a jump of order one
    // in its logits (measured 19% of max|logit| over these 128 tokens): a routed model's bf16
    // program is a different model. It must equal the reference on the values it stores.
    RecordProperty("bf16_relative_diff_to_fp32_weights", std::to_string(d.relative()));
    auto ck = hf::Checkpoint::open(stored_values_checkpoint(*g, program, g->dir.file("stored")));
    ASSERT_TRUE(ck.is_ok());
    auto stored = reference::forward(g->config, *ck, ids);
    ASSERT_TRUE(stored.is_ok()) << stored.status().message();
    d = compare(got, *stored, g->config.vocab_size);
    EXPECT_LE(d.relative(), 1e-4);
    EXPECT_EQ(d.argmax_agreement, 1.0);
    return;
  }
  EXPECT_LE(d.relative(), 5e-2);
  EXPECT_EQ(d.decisive_agreement, 1.0);
  EXPECT_GE(d.argmax_agreement, 0.93);
  RecordProperty("bf16_relative_diff", std::to_string(d.relative()));
}

TEST_P(FamilyE2E, PublishedLayoutHasTheReferencesWindowsAndCacheOwners) {
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed, .overrides = GetParam().overrides});
  auto pf = program::ProgramFile::open(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(pf.is_ok());
  const program::CacheLayout l = program::layout_from_fb(*(*pf)->program().layout());
  expect_layout_matches_reference(l, g->config);
  // Geometry from config.json as every one of these families reads it: the kv heads and
  // head_dim, or with latent attention one head of the latent, kv_lora_rank +
  // qk_rope_head_dim (k = v = [ckv | k_pe]).
  const bool latent = g->config.text.contains("kv_lora_rank");
  const int64_t head_dim = latent ? g->config.text.at("kv_lora_rank").get<int64_t>() +
                                        g->config.text.at("qk_rope_head_dim").get<int64_t>()
                                  : g->config.head_dim;
  // The latent's v is its k (one copy kept); no other family's is. GPTBigCode's and Falcon's
  // multi_query (their default; Falcon's without new_decoder_architecture) is one kv head, and
  // Falcon's others num_kv_heads, whatever num_key_value_heads the config does not have.
  EXPECT_EQ(l.value_is_key, latent ? std::vector<uint8_t>(static_cast<size_t>(l.n_caches()), 1) : std::vector<uint8_t>{});
  const bool multi_query = (GetParam().family == "gpt_bigcode" ||
                            (GetParam().family == "falcon" && !g->config.text.value("new_decoder_architecture", false))) &&
                           g->config.text.value("multi_query", true);
  const int64_t kv_heads = GetParam().family == "falcon" && !multi_query ? g->config.text.value("num_kv_heads", g->config.num_attention_heads)
                                                                          : g->config.num_key_value_heads;
  for (int32_t c = 0; c < l.n_caches(); ++c) {
    EXPECT_EQ(l.kv_heads[static_cast<size_t>(c)], latent || multi_query ? 1 : kv_heads) << "cache " << c;
    EXPECT_EQ(l.head_dims[static_cast<size_t>(c)], head_dim) << "cache " << c;
  }
  // One update_and_attend per attention layer, each on the cache its layer reads and writing
  // it (no sharing in these families).
  int32_t layer = 0;
  for (const fb::Op* op : *(*pf)->program().ops()) {
    if (op->attrs_type() != fb::OpAttrs::AttendAttrs) continue;
    ASSERT_LT(layer, l.n_layers);
    EXPECT_EQ(static_cast<int32_t>(op->attrs_as_AttendAttrs()->cache_id()), l.layer_to_cache[static_cast<size_t>(layer)]);
    EXPECT_TRUE(op->attrs_as_AttendAttrs()->writes_cache());
    ++layer;
  }
  EXPECT_EQ(layer, g->config.num_hidden_layers);
}

TEST_P(FamilyE2E, NoProgramTensorDependsOnMaxCtxLen) {
  auto g = generate({.family = GetParam().family, .seed = GetParam().seed, .overrides = GetParam().overrides});
  auto a = program::ProgramFile::open(export_to(*g, "a.ogp", "fp32", 8, 64));
  auto b = program::ProgramFile::open(export_to(*g, "b.ogp", "fp32", 8, 4096));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ((*a)->program().tensors()->size(), (*b)->program().tensors()->size());
  for (uint32_t i = 0; i < (*a)->program().tensors()->size(); ++i)
    EXPECT_EQ((*a)->program().tensors()->Get(i)->nbytes(), (*b)->program().tensors()->Get(i)->nbytes());
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyE2E,
                         ::testing::Values(FamilyCase{"llama", 1}, FamilyCase{"smollm", 2}, FamilyCase{"mistral", 3},
                                           FamilyCase{"qwen2", 4}, FamilyCase{"qwen3", 5, {{"use_sliding_window", true}, {"sliding_window", 5}, {"max_window_layers", 1}}}, FamilyCase{"phi3", 6},
                                           // Phi-3.5's LongRoPE with its context shrunk to 10 positions, so a
                                           // test sequence crosses into the long factors (6 pairs: head 16 x 0.75).
                                           FamilyCase{"phi3", 15, kLongRope, "phi3_longrope"},
                                           FamilyCase{"gemma2", 7}, FamilyCase{"gemma3_text", 8},
                                           FamilyCase{"gemma3", 9}, FamilyCase{"qwen3_moe", 10},
                                           FamilyCase{"mixtral", 16}, FamilyCase{"qwen2_moe", 17},
                                           FamilyCase{"granite", 18}, FamilyCase{"olmo2", 19}, FamilyCase{"gemma", 20},
                                           // Three sliding layers of four, yarn on the full one only.
                                           FamilyCase{"olmo3", 22},
                                           // transformers 5's spelling: one rope dict per layer type (here of
                                           // different bases), no rope_scaling.
                                           FamilyCase{"olmo3", 23,
                                                      {{"rope_scaling", nullptr},
                                                       {"rope_parameters",
                                                        {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
                                                         {"full_attention",
                                                          {{"rope_type", "yarn"}, {"rope_theta", 500000.0}, {"factor", 8.0},
                                                           {"original_max_position_embeddings", 16}}}}}},
                                                      "olmo3_rope_parameters"},
                                           // hidden_activation wins over hidden_act (whose "gelu" Gemma's
                                           // tiny config carries and transformers 4.x ignores).
                                           FamilyCase{"gemma", 21, {{"hidden_activation", "silu"}}, "gemma_hidden_activation"},
                                           // Experts as the hub stores them (MXFP4) and as float parameters.
                                           FamilyCase{"gpt_oss", 13}, FamilyCase{"gpt_oss", 14,
                                                      {{"quantization_config", nullptr}}, "gpt_oss_float_experts"},
                                           // SmolLM3-3B's fields: NoPE layer 3 of 5, all full attention.
                                           FamilyCase{"smollm3", 10, nlohmann::json::object(), "smollm3"},
                                           // Sliding NoPE layers: no_rope_layers and layer_types absent, so
                                           // both derive them (interval 2: layers 1 and 3 NoPE, window 5).
                                           FamilyCase{"smollm3", 11,
                                                      {{"use_sliding_window", true}, {"sliding_window", 5},
                                                       {"no_rope_layer_interval", 2}, {"no_rope_layers", nullptr},
                                                       {"layer_types", nullptr}},
                                                      "smollm3_sliding_nope"},
                                           // An explicit list that the interval would not give (the list wins),
                                           // with attention and MLP biases.
                                           FamilyCase{"smollm3", 12,
                                                      {{"no_rope_layers", {0, 1, 0, 1, 1}}, {"attention_bias", true},
                                                       {"mlp_bias", true}},
                                                      "smollm3_nope_list_biases"},
                                           // LayerNorm decoders: StarCoder2 (window 6; and unbiased with the
                                           // exact gelu), Phi's parallel block with partial rotary (and its q/k
                                           // LayerNorms), StableLM sequential with q/k/v biases and parallel (and
                                           // its per-head q/k LayerNorms, StableLM 2 12B's).
                                           FamilyCase{"starcoder2", 40},
                                           FamilyCase{"starcoder2", 41, {{"use_bias", false}, {"hidden_act", "gelu"}},
                                                      "starcoder2_unbiased_gelu"},
                                           FamilyCase{"phi", 42}, FamilyCase{"phi", 43, {{"qk_layernorm", true}}, "phi_qk_layernorm"},
                                           FamilyCase{"stablelm", 44},
                                           FamilyCase{"stablelm", 45, {{"use_parallel_residual", true}, {"use_qkv_bias", false}},
                                                      "stablelm_parallel"},
                                           FamilyCase{"stablelm", 46, {{"qk_layernorm", true}}, "stablelm_qk_layernorm"},
                                           // Cohere: the parallel block from a weight-only LayerNorm, the rope
                                           // on interleaved pairs (q's and k's rows and biases reordered at
                                           // export), logit_scale; Cohere2: NoPE full layers every 4th.
                                           FamilyCase{"cohere", 46}, FamilyCase{"cohere2", 47},
                                           // Command R+'s per-head q/k LayerNorms ([heads, head_dim] weights).
                                           FamilyCase{"cohere", 59, {{"use_qk_norm", true}}, "cohere_qk_norm"},
                                           FamilyCase{"cohere2", 48,
                                                      {{"sliding_window_pattern", nullptr},
                                                       {"layer_types",
                                                        {"sliding_attention", "full_attention", "sliding_attention",
                                                         "sliding_attention", "full_attention"}}},
                                                      "cohere2_layer_types"},
                                           // GLM: the fused gate_up_proj, the rope on interleaved pairs of half
                                           // of each head; GLM-4-0414: four norms a layer.
                                           FamilyCase{"glm", 49}, FamilyCase{"glm4", 50},
                                           // ERNIE 4.5: the interleaved rope over whole heads; and with biases.
                                           FamilyCase{"ernie4_5", 51},
                                           FamilyCase{"ernie4_5", 52, {{"use_bias", true}}, "ernie4_5_biases"},
                                           // GPT-NeoX: the per-head fused query_key_value, LayerNorms, the
                                           // two-norm parallel block (and sequential, unbiased attention).
                                           FamilyCase{"gpt_neox", 53},
                                           FamilyCase{"gpt_neox", 54, {{"use_parallel_residual", false}, {"attention_bias", false}},
                                                      "gpt_neox_sequential_unbiased"},
                                           // OLMoE: q/k norms over the whole projection, a mixture of
                                           // experts on every layer (and renormalized, with biases).
                                           FamilyCase{"olmoe", 62},
                                           FamilyCase{"olmoe", 63, {{"norm_topk_prob", true}, {"attention_bias", true}},
                                                      "olmoe_renormalized_biased"},
                                           // Granite MoE: the multipliers, fused experts sliced at export,
                                           // the softmax over the top-k logits (and top-1, biased).
                                           FamilyCase{"granitemoe", 64},
                                           FamilyCase{"granitemoe", 65, {{"num_experts_per_tok", 1}, {"attention_bias", true}},
                                                      "granitemoe_top1_biased"},
                                           FamilyCase{"granitemoeshared", 66},
                                           // GLM-4.5: q/k/v biases, half the head rotated, a dense first
                                           // layer, the sigmoid router with its choice bias and a shared
                                           // expert (and GLM-4.5's q/k norms with expert groups, two shared
                                           // experts, the routed weights scaled, every layer sparse).
                                           FamilyCase{"glm4_moe", 67},
                                           FamilyCase{"glm4_moe", 68,
                                                      {{"use_qk_norm", true}, {"n_group", 4}, {"topk_group", 2},
                                                       {"routed_scaling_factor", 2.5}, {"first_k_dense_replace", 0},
                                                       {"n_shared_experts", 2}, {"num_experts_per_tok", 3},
                                                       {"attention_bias", false}},
                                                      "glm4_moe_grouped_qk_norm"},
                                           // ERNIE 4.5 MoE: the rope on interleaved pairs, a dense first layer,
                                           // experts picked by probability + bias, two shared experts (and
                                           // every other layer sparse up to layer 2, no shared expert, three
                                           // per token, the -PT checkpoints' prediction weights skipped).
                                           FamilyCase{"ernie4_5_moe", 69},
                                           FamilyCase{"ernie4_5_moe", 70,
                                                      {{"moe_layer_interval", 2}, {"moe_layer_end_index", 2},
                                                       {"moe_num_shared_experts", 0}, {"moe_k", 3},
                                                       {"num_nextn_predict_layers", 1}},
                                                      "ernie4_5_moe_interval_unshared_mtp"},
                                           // DeepSeek-V3: multi-head latent attention (q and kv latents, the
                                           // rope on interleaved pairs of the last dims, YaRN's softmax
                                           // scale) with the grouped sigmoid router; Moonlight: no q latent,
                                           // one group, two shared experts; and the rope in rotate-half
                                           // order with v as wide as q·k's heads, every layer sparse.
                                           FamilyCase{"deepseek_v3", 71},
                                           FamilyCase{"moonlight", 72},
                                           FamilyCase{"deepseek_v3", 73,
                                                      {{"rope_interleave", false}, {"v_head_dim", 24},
                                                       {"first_k_dense_replace", 0}, {"num_nextn_predict_layers", 0}},
                                                      "deepseek_v3_rotate_half_wide_v"},
                                           // DeepSeek-V2-Lite: no q latent, the greedy softmax router (not
                                           // renormalized), two shared experts, YaRN with mscale = mscale_all_dim
                                           // (the softmax scale only); DeepSeek-V2: a q latent, the group-limited
                                           // router (groups scored by their best) × 16, v narrower than q·k's head.
                                           FamilyCase{"deepseek_v2", 74},
                                           FamilyCase{"deepseek_v2_grouped", 75},
                                           // GLM-4.7-Flash: v as wide as q·k's head, the sigmoid router, layer 0
                                           // dense by mlp_layer_types' default, a prediction layer skipped; and
                                           // mlp_layer_types given (dense, sparse, dense, sparse).
                                           FamilyCase{"glm4_moe_lite", 76},
                                           FamilyCase{"glm4_moe_lite_layer_types", 77},
                                           // MiniMax-M2: q/k norms over the whole projections with grouped kv
                                           // heads, the rope on rotary_dim of each head, the sigmoid router with
                                           // its routing bias on every layer.
                                           FamilyCase{"minimax_m2", 78},
                                           // Qwen3 with attention_bias: biases on q, k, v and o (Qwen3Attention).
                                           FamilyCase{"qwen3", 79,
                                                      {{"attention_bias", true}, {"use_sliding_window", true},
                                                       {"sliding_window", 5}, {"max_window_layers", 2}},
                                                      "qwen3_attention_bias"},
                                           // dots.llm1: Qwen3's attention with DeepSeek-V3's router, layer 0 dense,
                                           // two shared experts, and layers from max_window_layers sliding.
                                           FamilyCase{"dots1", 80},
                                           // Seed-OSS: q/k/v and o biases by their two fields, head_dim twice
                                           // hidden_size / heads.
                                           FamilyCase{"seed_oss", 85},
                                           // Arcee: the ungated relu2 MLP, YaRN past its original 16 positions
                                           FamilyCase{"arcee", 86},
                                           // Nemotron: LayerNorm1P (1 + w, with a bias), half the head rotated,
                                           // biases on the attention and the MLP
                                           FamilyCase{"nemotron", 87},
                                           // HunYuan: q/k norms after the rope, the NTK-alpha rope (alpha 1000)
                                           FamilyCase{"hunyuan_v1_dense", 88},
                                           // Apertus: each layer's xIELU, q/k norms, llama3 rope past 16 positions
                                           FamilyCase{"apertus", 89},
                                           // EXAONE 4.0: OLMo 2's output norms with per-head q/k norms; the
                                           // 1.2B shape (every layer full and rotated, llama3 rope, tied) and
                                           // the 32B's hybrid (three sliding rotated layers, then a full NoPE one).
                                           FamilyCase{"exaone4", 86},
                                           FamilyCase{"exaone4_hybrid", 87},
                                           // Kimi-K2: model_type kimi_k2 on DeepSeek-V3's classes, one group,
                                           // YaRN factor 32 with beta 1/1.
                                           FamilyCase{"kimi_k2", 88},
                                           // GPT-2: learned positions, Conv1D projections, no rope; and with
                                           // its per-layer score scale, an n_inner, the exact gelu, untied.
                                           FamilyCase{"gpt2", 90},
                                           FamilyCase{"gpt2", 91,
                                                      {{"scale_attn_by_inverse_layer_idx", true}, {"n_inner", 96},
                                                       {"activation_function", "gelu"}, {"tie_word_embeddings", false}},
                                                      "gpt2_untied_by_layer"},
                                           // GPTBigCode: GPT-2's block with nn.Linear and one kv head; and
                                           // without multi_query, c_attn's rows per head, untied, gelu-tanh.
                                           FamilyCase{"gpt_bigcode", 92},
                                           FamilyCase{"gpt_bigcode", 93,
                                                      {{"multi_query", false}, {"tie_word_embeddings", false},
                                                       {"activation_function", "gelu_pytorch_tanh"}},
                                                      "gpt_bigcode_per_head_untied"},
                                           // Falcon: Falcon-7B's multi-query parallel block; the new
                                           // architecture (2 kv groups, ln_attn / ln_mlp, untied); and the
                                           // sequential block with per-head q, k, v rows and biases.
                                           FamilyCase{"falcon", 94},
                                           FamilyCase{"falcon", 95,
                                                      {{"new_decoder_architecture", true}, {"num_kv_heads", 2},
                                                       {"tie_word_embeddings", false}},
                                                      "falcon_new_architecture"},
                                           FamilyCase{"falcon", 96,
                                                      {{"multi_query", false}, {"parallel_attn", false}, {"bias", true}},
                                                      "falcon_sequential_per_head"}),
                         [](const auto& info) { return info.param.name.empty() ? info.param.family : info.param.name; });

// Old GPT-NeoX checkpoints saved each attention's causal-mask buffers (attention.bias, a bool
// [1, 1, P, P], and attention.masked_bias, a scalar) with the weights: the export ignores
// them and the program is the one without them; any other unused tensor is still refused.
TEST(E2E, GptNeoxMaskBuffersAreIgnoredAndOtherUnusedTensorsRefused) {
  auto g = generate({.family = "gpt_neox", .seed = 61});
  const auto ids = test_tokens(12, g->config.vocab_size, 61);
  auto plain = runtime::Model::load(export_to(*g, "plain.ogp", "fp32"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  const std::vector<float> want = run_program(*plain, ids, 5);
  for (const bool extra_weight : {false, true}) {
    // The generated tensors and the extra ones, in one file.
    const std::string dir = g->dir.file(extra_weight ? "with_extra" : "with_buffers");
    auto ck = hf::Checkpoint::open(g->model_dir());
    ASSERT_TRUE(ck.is_ok());
    std::vector<hf::OwnedTensor> all;
    for (const std::string& name : ck->names()) {
      const hf::TensorView* t = *ck->get(name);
      all.push_back({.name = name, .dtype = t->dtype, .shape = t->shape, .bytes = {t->data, t->data + t->nbytes}});
    }
    std::vector<hf::OwnedTensor> more = {
        {.name = "gpt_neox.layers.0.attention.bias", .dtype = DType::kBool, .shape = {1, 1, 4, 4},
         .bytes = std::vector<uint8_t>(16, 1)},
        {.name = "gpt_neox.layers.1.attention.masked_bias", .dtype = DType::kF32, .shape = {}, .bytes = {0, 0x28, 0x6e, 0xce}}};
    if (extra_weight)
      more.push_back({.name = "gpt_neox.layers.0.attention.rotary_gate.weight", .dtype = DType::kF32, .shape = {1},
                      .bytes = {0, 0, 0x80, 0x3f}});
    for (hf::OwnedTensor& t : more) all.push_back(std::move(t));
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(hf::write_checkpoint(dir, all).is_ok());
    std::filesystem::copy_file(g->model_dir() + "/config.json", dir + "/config.json");
    exporter::ExportOptions o;
    o.model = dir;
    o.output = dir + "/p.ogp";
    o.dtype = "fp32";
    auto s = exporter::export_program(o);
    if (extra_weight) {
      ASSERT_FALSE(s.is_ok());
      EXPECT_NE(s.status().message().find("rotary_gate"), std::string::npos) << s.status().message();
      continue;
    }
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    auto model = runtime::Model::load(o.output);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    EXPECT_TRUE(same_bits(run_program(*model, ids, 5), want));
  }
}

// GPT-2's learned positions: the program embeds each token's position from wpe (format version
// 11), so its context is at most n_positions (the default, and a longer --max-ctx-len refused at
// export, naming the table); the original checkpoints' layout (tensors at the top level, with
// the attention's mask buffers, ignored) matches the reference too, bit for bit as without them.
TEST(E2E, Gpt2PositionsComeFromItsTableWithinNPositions) {
  auto g = generate({.family = "gpt2", .seed = 62});
  const auto ids = test_tokens(20, g->config.vocab_size, 62);
  auto m = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 4));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ((*m)->file().format_version(), 11u);
  EXPECT_EQ((*m)->max_ctx_len(), g->config.max_position_embeddings);  // n_positions (4096)
  const std::vector<float> want = run_program(*m, ids, 4);
  EXPECT_LE(compare(want, reference_logits(*g, ids), g->config.vocab_size).relative(), 1e-4);
  exporter::ExportOptions o;
  o.model = g->model_dir();
  o.output = g->dir.file("long.ogp");
  o.max_ctx_len = g->config.max_position_embeddings + 1;
  auto s = exporter::export_program(o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("learned positions (transformer.wpe.weight)"), std::string::npos) << s.status().message();
  EXPECT_FALSE(std::filesystem::exists(o.output));
  // Nor does a session take a longer context than the table holds (the program's is at most that).
  auto longer = runtime::Session::create(*m, {.max_ctx_len = g->config.max_position_embeddings + 1});
  ASSERT_FALSE(longer.is_ok());
  EXPECT_NE(longer.status().message().find("exceeds the 4096 positions of the program's learned position table"),
            std::string::npos) << longer.status().message();
  EXPECT_TRUE(runtime::Session::create(*m, {.max_ctx_len = g->config.max_position_embeddings}).is_ok());
  // The validator wants the table to cover max_ctx_len, and no remap of positions.
  for (const bool remap : {false, true}) {
    fb::ProgramT p;
    (*m)->file().program().UnPackTo(&p);
    if (remap) {
      for (auto& op : p.ops)
        if (auto* a = op->attrs.AsEmbeddingAttrs(); a != nullptr && op->inputs[0] == p.positions) a->remap_ids = {3};
    } else {
      p.max_ctx_len += 1;
    }
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(fb::Program::Pack(fbb, &p));
    const Status v = program::validate_program(*fb::GetProgram(fbb.GetBufferPointer()), (*m)->file().file_size());
    ASSERT_FALSE(v.is_ok()) << remap;
    EXPECT_NE(v.message().find(remap ? "a position table with remap_ids" : "a position table of 4096 rows for max_ctx_len 4097"),
              std::string::npos) << v.message();
  }

  auto hub = generate({.family = "gpt2", .seed = 62, .hub_layout = true});
  auto plain = runtime::Model::load(export_to(*hub, "plain.ogp", "fp32", 4));
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  const std::vector<float> want_hub = run_program(*plain, ids, 4);
  EXPECT_LE(compare(want_hub, reference_logits(*hub, ids), g->config.vocab_size).relative(), 1e-4);
  const std::string dir = hub->dir.file("with_buffers");
  auto ck = hf::Checkpoint::open(hub->model_dir());
  ASSERT_TRUE(ck.is_ok());
  std::vector<hf::OwnedTensor> all;
  for (const std::string& name : ck->names()) {
    EXPECT_FALSE(name.starts_with("transformer.")) << name;
    const hf::TensorView* t = *ck->get(name);
    all.push_back({.name = name, .dtype = t->dtype, .shape = t->shape, .bytes = {t->data, t->data + t->nbytes}});
  }
  all.push_back({.name = "h.0.attn.bias", .dtype = DType::kBool, .shape = {1, 1, 4, 4}, .bytes = std::vector<uint8_t>(16, 1)});
  all.push_back({.name = "h.1.attn.masked_bias", .dtype = DType::kF32, .shape = {}, .bytes = {0, 0x40, 0x1c, 0xc6}});
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(hf::write_checkpoint(dir, all).is_ok());
  std::filesystem::copy_file(hub->model_dir() + "/config.json", dir + "/config.json");
  o.model = dir;
  o.output = dir + "/p.ogp";
  o.max_ctx_len = 0;
  o.prefill_chunk_size = 4;
  ASSERT_TRUE(exporter::export_program(o).is_ok());
  auto top = runtime::Model::load(o.output);
  ASSERT_TRUE(top.is_ok()) << top.status().message();
  EXPECT_TRUE(same_bits(run_program(*top, ids, 4), want_hub));
}

// LongRoPE: the program's rope ops carry both tables, computed here from the config alone
// (1 / (factor_i theta^(2i/d)), transformers' _compute_longrope_parameters), the attention
// factor sqrt(1 + ln(256/10) / ln 10), and positions from 10 on rotate with the long factors:
// with long_factor set equal to short_factor, the logits of positions 0-9 keep their bits
// and every later position's change.
TEST(E2E, LongRopeSwitchesToTheLongFactorsAtTheOriginalContext) {
  auto g = generate({.family = "phi3", .seed = 31, .overrides = kLongRope});
  auto pf = program::ProgramFile::open(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(pf.is_ok()) << pf.status().message();
  EXPECT_EQ((*pf)->format_version(), 6u);
  const double theta = g->config.text.value("rope_theta", 10000.0);
  int ropes = 0;
  for (const fb::Op* op : *(*pf)->program().ops()) {
    if (op->attrs_type() != fb::OpAttrs::RopeAttrs) continue;
    ++ropes;
    const fb::RopeAttrs* a = op->attrs_as_RopeAttrs();
    ASSERT_EQ(a->rotary_dim(), 12);
    EXPECT_EQ(a->long_from(), 10);
    EXPECT_NEAR(a->scale(), std::sqrt(1.0 + std::log(25.6) / std::log(10.0)), 1e-6);
    for (const auto& [tensor, key] : {std::pair{a->inv_freq(), "short_factor"}, std::pair{a->long_inv_freq(), "long_factor"}}) {
      ASSERT_GE(tensor, 0) << key;
      std::vector<float> got(6);
      const fb::Tensor* t = (*pf)->program().tensors()->Get(static_cast<uint32_t>(tensor));
      ASSERT_EQ(t->nbytes(), got.size() * sizeof(float));
      std::memcpy(got.data(), (*pf)->tensor_data(tensor), t->nbytes());
      for (int i = 0; i < 6; ++i) {
        const double want = 1.0 / (kLongRope["rope_scaling"][key][i].get<double>() * std::pow(theta, 2.0 * i / 12));
        EXPECT_NEAR(got[static_cast<size_t>(i)], want, 1e-6 * want) << key << " " << i;
      }
    }
  }
  EXPECT_EQ(ropes, 2 * g->config.num_hidden_layers);

  const auto ids = test_tokens(16, g->config.vocab_size, 9);
  auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32"));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<float> two_tables = run_program(*model, ids, 1);
  nlohmann::json same = kLongRope;
  same["rope_scaling"]["long_factor"] = same["rope_scaling"]["short_factor"];
  auto g_short = generate({.family = "phi3", .seed = 31, .overrides = same});
  auto short_only = runtime::Model::load(export_to(*g_short, "s.ogp", "fp32"));
  ASSERT_TRUE(short_only.is_ok());
  const std::vector<float> one_table = run_program(*short_only, ids, 1);
  ASSERT_EQ(two_tables.size(), one_table.size());
  const size_t V = static_cast<size_t>(g->config.vocab_size);
  for (size_t t = 0; t < ids.size(); ++t) {
    const bool same_row = std::equal(two_tables.begin() + static_cast<std::ptrdiff_t>(t * V),
                                     two_tables.begin() + static_cast<std::ptrdiff_t>((t + 1) * V),
                                     one_table.begin() + static_cast<std::ptrdiff_t>(t * V));
    EXPECT_EQ(same_row, t < 10) << "position " << t;
  }
}

// LongRoPE fields that cannot be honoured are errors naming the field, at export and in the
// reference: factor lists of the wrong length for the rotary width, or missing.
TEST(E2E, LongRopeFieldsThatCannotBeHonouredAreNamed) {
  for (const auto& [patch, field] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"rope_scaling", {{"long_factor", {1.0, 2.0}}}}}, "long_factor"},
           {{{"rope_scaling", {{"short_factor", nullptr}}}}, "short_factor"},
           {{{"rope_scaling", {{"short_factor", {1.0, 1.0, 1.0, 1.0, 1.0, -1.0}}}}}, "short_factor"},
           {{{"rope_scaling", {{"type", "su"}}}}, "type"},
           // transformers v5's spelling of the dict, with a type Phi3Config does not take
           {{{"rope_scaling", nullptr}, {"rope_parameters", {{"rope_type", "linear"}, {"factor", 2.0}}}}, "linear"}}) {
    nlohmann::json overrides = kLongRope;
    overrides.merge_patch(patch);
    auto g = generate({.family = "phi3", .seed = 32, .overrides = overrides});
    exporter::ExportOptions o;
    o.model = g->model_dir();
    o.output = g->dir.file("x.ogp");
    auto s = exporter::export_program(o);
    EXPECT_FALSE(s.is_ok()) << patch.dump();
    if (!s.is_ok()) EXPECT_NE(s.status().message().find(field), std::string::npos) << patch.dump() << ": " << s.status().message();
    auto ck = hf::Checkpoint::open(g->model_dir());
    ASSERT_TRUE(ck.is_ok());
    auto r = reference::forward(g->config, *ck, std::vector<int32_t>{1, 2, 3});
    EXPECT_FALSE(r.is_ok()) << patch.dump();
    if (!r.is_ok()) EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  }
}

// SmolLM3's NoPE layers: the program rotates q and k exactly on the layers whose
// no_rope_layers entry is 1 (two rope ops each, none elsewhere), and token-by-token decode
// gives the bits of one-shot prefill, with full-history caches and with rings that wrap.
TEST(E2E, SmolLM3RotatesOnlyItsRopeLayersAndDecodeEqualsPrefillBitForBit) {
  const nlohmann::json sliding = {{"use_sliding_window", true}, {"sliding_window", 4}, {"no_rope_layer_interval", 2},
                                  {"no_rope_layers", nullptr}, {"layer_types", nullptr}};
  for (const nlohmann::json& overrides : {nlohmann::json::object(), sliding}) {
    auto g = generate({.family = "smollm3", .seed = 21, .overrides = overrides});
    const std::string path = export_to(*g, "p.ogp", "fp32", 3);
    auto pf = program::ProgramFile::open(path);
    ASSERT_TRUE(pf.is_ok());
    // Which layer each rope op belongs to: the layer of the next update_and_attend.
    std::vector<int> ropes(static_cast<size_t>(g->config.num_hidden_layers), 0);
    int layer = 0;
    for (const fb::Op* op : *(*pf)->program().ops()) {
      if (op->attrs_type() == fb::OpAttrs::RopeAttrs) ++ropes[static_cast<size_t>(layer)];
      if (op->attrs_type() == fb::OpAttrs::AttendAttrs) ++layer;
    }
    const std::vector<int> want = overrides.empty() ? std::vector<int>{2, 2, 2, 0, 2} : std::vector<int>{2, 0, 2, 0, 2};
    EXPECT_EQ(ropes, want) << overrides.dump();
    auto model = runtime::Model::load(path);
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const auto ids = test_tokens(29, g->config.vocab_size, 4);
    const auto decode = run_program(*model, ids, 1);
    EXPECT_EQ(decode, run_program(*model, ids, 3)) << overrides.dump();  // chunks of the program's largest step
    auto whole = runtime::Model::load(export_to(*g, "whole.ogp", "fp32"));  // one step takes all 29 tokens
    ASSERT_TRUE(whole.is_ok());
    EXPECT_EQ(decode, run_program(*whole, ids, static_cast<int64_t>(ids.size()))) << overrides.dump();
    EXPECT_LE(compare(decode, reference_logits(*g, ids), g->config.vocab_size).relative(), 1e-4) << overrides.dump();
  }
}

// YaRN rope scaling (Qwen3's documented long-context setting, truncate by default; SmolLM3 with
// gpt-oss's truncate false): the program's inv_freq tables equal the reference's frequencies
// (computed separately, src/reference/rope.cc) to float rounding, each rope op carries the
// attention factor, the logits match the reference's, and decode equals prefill bit for bit.
// The yarn model is far from the same weights without yarn, so the test sees the scaling.
TEST(E2E, YarnRopeMatchesReferenceAndDecodeEqualsPrefill) {
  struct Case {
    const char* family;
    nlohmann::json rope_scaling;
    double attention_factor;  // 0.1 ln(factor) + 1
  };
  const Case cases[] = {
      {"qwen3", {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 64}},
       0.1 * std::log(4.0) + 1},
      {"smollm3",
       {{"rope_type", "yarn"}, {"factor", 8.0}, {"original_max_position_embeddings", 128}, {"beta_fast", 16.0},
        {"beta_slow", 2.0}, {"truncate", false}},
       0.1 * std::log(8.0) + 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.family);
    auto g = generate({.family = c.family, .seed = 31, .overrides = {{"rope_scaling", c.rope_scaling}}});
    auto plain = generate({.family = c.family, .seed = 31});
    auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 3));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const fb::Program& p = (*model)->program();
    const hf::JsonFields rs(c.rope_scaling, g->config.path, "rope_scaling.");
    const double theta = g->config.text.value("rope_theta", 10000.0);
    auto spec = reference::parse_rope_params(&rs, theta, g->config.max_position_embeddings);
    ASSERT_TRUE(spec.is_ok()) << spec.status().message();
    EXPECT_DOUBLE_EQ(spec->attention_factor, c.attention_factor);
    const std::vector<double> want_freq = reference::rope_inv_freq(*spec, g->config.head_dim);
    int ropes = 0;
    for (const fb::Op* op : *p.ops()) {
      if (op->attrs_type() != fb::OpAttrs::RopeAttrs) continue;
      ++ropes;
      const auto* a = op->attrs_as_RopeAttrs();
      EXPECT_EQ(a->scale(), static_cast<float>(c.attention_factor));
      const float* f = reinterpret_cast<const float*>((*model)->file().tensor_data(a->inv_freq()));
      ASSERT_EQ(static_cast<size_t>(a->rotary_dim() / 2), want_freq.size());
      for (size_t i = 0; i < want_freq.size(); ++i)
        EXPECT_NEAR(f[i], want_freq[i], 6e-8 * want_freq[i]) << "pair " << i;
    }
    EXPECT_GT(ropes, 0);
    const auto ids = test_tokens(24, g->config.vocab_size, 31);
    const auto want = reference_logits(*g, ids);
    const auto decode = run_program(*model, ids, 1);
    EXPECT_EQ(decode, run_program(*model, ids, 3));
    const Diff d = compare(decode, want, g->config.vocab_size);
    EXPECT_LE(d.relative(), 1e-4) << "max|diff| " << d.max_abs << " vs max|logit| " << d.max_ref;
    const Diff scaled = compare(decode, reference_logits(*plain, ids), g->config.vocab_size);
    EXPECT_GT(scaled.relative(), 1e-2);
  }
}

// FP8 checkpoints as DeepSeek-V3, MiniMax-M2 and Qwen3-FP8 publish them (F8_E4M3 layer weights
// with a scale per 16 x 16 block, the rest bf16): the fp32 and bf16 programs match the reference
// on the dequantized weights (code × block scale, exact in both), and decode equals prefill.
TEST(E2E, Fp8CheckpointsMatchTheReferenceOnTheirDequantizedWeights) {
  for (const auto& [family, seed] : std::vector<std::pair<std::string, uint64_t>>{
           {"deepseek_v3", 81}, {"minimax_m2", 82}, {"qwen3", 83}, {"llama", 84}}) {
    auto g = generate({.family = family, .dtype = DType::kBF16, .seed = seed, .fp8_block = 16});
    hf::Checkpoint ck = *hf::Checkpoint::open(g->model_dir());
    int64_t fp8 = 0;
    for (const std::string& name : ck.names()) fp8 += ck.find(name)->dtype == DType::kF8E4M3;
    EXPECT_GT(fp8, 4) << family;  // the layers' linears are stored as FP8
    const auto ids = test_tokens(24, g->config.vocab_size, 5);
    const auto want = reference_logits(*g, ids);
    for (const char* dtype : {"fp32", "bf16"}) {
      auto model = runtime::Model::load(export_to(*g, "p.ogp", dtype, 4));
      ASSERT_TRUE(model.is_ok()) << family << " " << model.status().message();
      const auto prefill = run_program(*model, ids, 4);
      Diff d = compare(prefill, want, g->config.vocab_size);
      // fp32: the dequantized values exactly; bf16: rounded once more (a few % of the logits,
      // and, in a routed model, a jump wherever a token changes experts: not bounded here).
      if (std::string(dtype) == "fp32" || !routed(family))
        EXPECT_LE(d.relative(), std::string(dtype) == "fp32" ? 1e-4 : 5e-2) << family << " " << dtype;
      if (std::string(dtype) == "fp32") EXPECT_EQ(run_program(*model, ids, 1), prefill) << family;
    }
  }
}

TEST(E2E, ShardedCheckpointsAndUntiedHeadsExportLikeSingleFiles) {
  auto single = generate({.family = "gemma3_text", .seed = 42, .tie_word_embeddings = false});
  auto sharded = generate({.family = "gemma3_text", .seed = 42, .tie_word_embeddings = false, .max_shard_bytes = 20000});
  ASSERT_TRUE(std::filesystem::exists(sharded->model_dir() + "/model.safetensors.index.json"));
  const auto ids = test_tokens(20, single->config.vocab_size);
  auto m1 = runtime::Model::load(export_to(*single, "p.ogp", "fp32"));
  auto m2 = runtime::Model::load(export_to(*sharded, "p.ogp", "fp32"));
  ASSERT_TRUE(m1.is_ok() && m2.is_ok());
  EXPECT_EQ(run_program(*m1, ids, 4), run_program(*m2, ids, 4));
  EXPECT_LE(compare(run_program(*m1, ids, 4), reference_logits(*single, ids), single->config.vocab_size).relative(), 1e-4);
}

TEST(E2E, Fp16ProgramsAndReducedPrecisionCachesStayClose) {
  auto g = generate({.family = "qwen3", .seed = 77});
  const auto ids = test_tokens(30, g->config.vocab_size);
  const auto want = reference_logits(*g, ids);
  auto fp16 = runtime::Model::load(export_to(*g, "h.ogp", "fp16"));
  ASSERT_TRUE(fp16.is_ok());
  EXPECT_LE(compare(run_program(*fp16, ids, 4), want, g->config.vocab_size).relative(), 1e-2);
  auto fp32 = runtime::Model::load(export_to(*g, "f.ogp", "fp32"));
  for (auto kv : {StorageType::kBF16, StorageType::kF16}) {
    Diff d = compare(run_program(*fp32, ids, 4, kv), want, g->config.vocab_size);
    EXPECT_LE(d.relative(), kv == StorageType::kBF16 ? 5e-2 : 1e-2);
  }
}

}  // namespace
}  // namespace og
