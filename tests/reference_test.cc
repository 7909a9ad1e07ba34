// Tests of the float64 reference (src/reference): the toolkit pieces against hand-computed
// values, per-layer windows against transformers' rules, and whole forward passes on tiny
// random checkpoints against hand computations and against each other where transformers
// makes two families the same model (e.g. phi3's fused projections = llama's split ones).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"
#include "reference/reference.h"
#include "reference/rope.h"
#include "reference/toolkit.h"

namespace og::reference {
namespace {

using hf::Json;

// Toolkit pieces against hand-computed values.

TEST(Rope, RotatesDimsHalfAHeadApartByPositionTimesFrequency) {
  // head_dim 4, theta 1e4: inv_freq = [1, 1e4^(-1/2)] = [1, 0.01]; position 3.
  const std::vector<double> inv = rope_inv_freq(RopeSpec{.theta = 10000.0}, 4);
  ASSERT_EQ(inv.size(), 2u);
  EXPECT_DOUBLE_EQ(inv[0], 1.0);
  EXPECT_DOUBLE_EQ(inv[1], 0.01);
  Mat x(4, 4);  // rows 0..3 = positions; only row 3 is checked
  for (int64_t i = 0; i < 4; ++i) x.at(3, i) = static_cast<double>(i + 1);
  apply_rope(x, /*n_heads=*/1, /*head_dim=*/4, inv);
  // y0 = x0 cos3 - x2 sin3, y1 = x1 cos.03 - x3 sin.03, y2 = x2 cos3 + x0 sin3, y3 = x3 cos.03 + x1 sin.03
  EXPECT_NEAR(x.at(3, 0), -1.413352520780047, 1e-14);
  EXPECT_NEAR(x.at(3, 1), 1.8791180666879925, 1e-14);
  EXPECT_NEAR(x.at(3, 2), -2.828857481741469, 1e-14);
  EXPECT_NEAR(x.at(3, 3), 4.058191135400942, 1e-14);
}

TEST(Rope, PositionZeroIsIdentityAndPartialRotaryLeavesTailUntouched) {
  Mat x(2, 6);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t i = 0; i < 6; ++i) x.at(t, i) = 0.5 + static_cast<double>(i);
  const std::vector<double> inv = {1.0, 0.1};  // rotary width 4 of head_dim 6
  apply_rope(x, 1, 6, inv);
  for (int64_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(x.at(0, i), 0.5 + static_cast<double>(i));
  EXPECT_DOUBLE_EQ(x.at(1, 4), 4.5);
  EXPECT_DOUBLE_EQ(x.at(1, 5), 5.5);
  // Pairs are (0, 2) and (1, 3): half of the rotary width apart, not of the head.
  EXPECT_NEAR(x.at(1, 0), 0.5 * std::cos(1.0) - 2.5 * std::sin(1.0), 1e-15);
  EXPECT_NEAR(x.at(1, 3), 3.5 * std::cos(0.1) + 1.5 * std::sin(0.1), 1e-15);
}

TEST(RopeInvFreq, LinearDividesEveryFrequencyByFactor) {
  const auto plain = rope_inv_freq(RopeSpec{.theta = 1e6}, 8);
  const auto linear = rope_inv_freq(RopeSpec{.type = "linear", .theta = 1e6, .factor = 8.0}, 8);
  ASSERT_EQ(linear.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(linear[i], plain[i] / 8.0);
}

TEST(RopeInvFreq, Llama3KeepsHighScalesLowAndSmoothsTheMiddleBand) {
  // Llama-3.2 values: theta 5e5, head_dim 64, factor 32, low 1, high 4, original 8192.
  const RopeSpec spec{.type = "llama3", .theta = 500000.0, .factor = 32.0, .low_freq_factor = 1.0,
                      .high_freq_factor = 4.0, .original_max_position_embeddings = 8192};
  const auto f = rope_inv_freq(spec, 64);
  ASSERT_EQ(f.size(), 32u);
  // Expected values from Meta's formula evaluated independently (Python, float64).
  EXPECT_DOUBLE_EQ(f[0], 1.0);                                       // wavelen 2π < 2048: unchanged
  EXPECT_NEAR(f[14], 0.0032114459947525913, 1e-17);                  // last high-frequency entry
  EXPECT_NEAR(f[15], 0.001290547928209264, 1e-17);                   // medium band: smoothed
  EXPECT_NEAR(f[16], 0.00042955679655936815, 1e-18);
  EXPECT_NEAR(f[17], 9.70828780262767e-05, 1e-19);
  EXPECT_NEAR(f[18], 1.9461638184831125e-05, 1e-20);                 // wavelen > 8192: divided by 32
  EXPECT_NEAR(f[31], 9.418306725434909e-08, 1e-22);
  EXPECT_NEAR(f[31], std::pow(500000.0, -62.0 / 64.0) / 32.0, 1e-22);
}

// YaRN, values from the formulas (modeling_rope_utils._compute_yarn_parameters) evaluated
// by hand in Python float64. gpt-oss-20b: theta 1.5e5, dim 64, factor 32, original 4096,
// beta 32/1, truncate false:
//   n(r) = 32 ln(4096 / (2π r)) / ln(1.5e5): lo = n(32) = 8.092779, hi = n(1) = 17.398025
//   pair 9: w = (9 - 8.092779) / 9.305245 = 0.097496, f = 1.5e5^(-18/64) = 0.035009,
//           f (1 - w) + w f / 32 = 0.031706
//   pairs <= 8 keep f (pair 0: 1); pairs >= 18 are f / 32; attention factor 0.1 ln 32 + 1.
TEST(RopeInvFreq, YarnRampsFromExtrapolationToInterpolationBetweenTheCorrectionDims) {
  const Json dict = {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                     {"truncate", false}, {"original_max_position_embeddings", 4096}};
  const hf::JsonFields f(dict, "config.json", "rope_scaling.");
  auto spec = parse_rope_params(&f, 150000.0, 131072);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_DOUBLE_EQ(spec->attention_factor, 1.3465735902799727);
  const auto inv = rope_inv_freq(*spec, 64);
  ASSERT_EQ(inv.size(), 32u);
  EXPECT_DOUBLE_EQ(inv[0], 1.0);
  EXPECT_NEAR(inv[8], 0.050813274815461475, 1e-17);   // below lo: unchanged
  EXPECT_NEAR(inv[9], 0.03170569618466377, 1e-17);    // in the ramp
  EXPECT_NEAR(inv[12], 0.006794959489732219, 1e-17);
  EXPECT_NEAR(inv[17], 0.0001293187012450632, 1e-19);
  EXPECT_NEAR(inv[18], 3.8308812373753384e-05, 1e-20);  // above hi: f / 32
  EXPECT_NEAR(inv[31], 3.0235114281192144e-07, 1e-22);
  EXPECT_NEAR(inv[31], std::pow(150000.0, -62.0 / 64.0) / 32.0, 1e-22);

  // Qwen3's documented yarn (factor 4, original 32768, theta 1e6, head_dim 128), truncate by
  // default: lo = floor(23.60) = 23, hi = ceil(39.65) = 40; attention factor 0.1 ln 4 + 1.
  const Json qwen = {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  const hf::JsonFields qf(qwen, "config.json", "rope_scaling.");
  auto q = parse_rope_params(&qf, 1e6, 40960);
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  EXPECT_DOUBLE_EQ(q->factor, 4.0);  // the dict's factor, not 40960 / 32768
  EXPECT_DOUBLE_EQ(q->attention_factor, 1.138629436111989);
  const auto qi = rope_inv_freq(*q, 128);
  EXPECT_NEAR(qi[11], 0.0930572040929699, 1e-17);
  EXPECT_NEAR(qi[20], 0.01333521432163324, 1e-17);
  EXPECT_NEAR(qi[40], 4.445698525097307e-05, 1e-20);  // at hi: fully interpolated
  EXPECT_NEAR(qi[41], 3.582531425592407e-05, 1e-20);

  // attention_factor given wins; mscale / mscale_all_dim (DeepSeek) when both non-zero; a
  // missing factor is max_position_embeddings / original; beta 0 means the default.
  auto parse = [](const Json& d, int64_t max_pos) {
    const hf::JsonFields fields(d, "config.json", "rope_scaling.");
    return parse_rope_params(&fields, 10000.0, max_pos);
  };
  auto given = parse({{"rope_type", "yarn"}, {"factor", 8.0}, {"attention_factor", 0.75}}, 4096);
  ASSERT_TRUE(given.is_ok());
  EXPECT_DOUBLE_EQ(given->attention_factor, 0.75);
  auto ms = parse({{"rope_type", "yarn"}, {"factor", 40.0}, {"mscale", 0.707}, {"mscale_all_dim", 1.0}}, 4096);
  ASSERT_TRUE(ms.is_ok());
  EXPECT_NEAR(ms->attention_factor, (0.1 * 0.707 * std::log(40.0) + 1) / (0.1 * std::log(40.0) + 1), 1e-15);
  auto ms0 = parse({{"rope_type", "yarn"}, {"factor", 40.0}, {"mscale", 0.707}, {"mscale_all_dim", 0}}, 4096);
  ASSERT_TRUE(ms0.is_ok());
  EXPECT_NEAR(ms0->attention_factor, 0.1 * std::log(40.0) + 1, 1e-15);
  auto derived = parse({{"rope_type", "yarn"}, {"original_max_position_embeddings", 1024}, {"beta_fast", 0}}, 4096);
  ASSERT_TRUE(derived.is_ok());
  EXPECT_DOUBLE_EQ(derived->factor, 4.0);
  EXPECT_DOUBLE_EQ(derived->beta_fast, 32.0);
  auto small = parse({{"rope_type", "yarn"}, {"factor", 1.0}}, 4096);  // factor <= 1: mscale 1
  ASSERT_TRUE(small.is_ok());
  EXPECT_DOUBLE_EQ(small->attention_factor, 1.0);
}

TEST(Rope, AttentionFactorScalesOnlyTheRotatedDims) {
  Mat x(2, 6);
  for (int64_t i = 0; i < 6; ++i) x.at(1, i) = 0.5 + static_cast<double>(i);
  apply_rope(x, 1, 6, std::vector<double>{1.0, 0.1}, 1.5);
  EXPECT_NEAR(x.at(1, 0), 1.5 * (0.5 * std::cos(1.0) - 2.5 * std::sin(1.0)), 1e-15);
  EXPECT_NEAR(x.at(1, 3), 1.5 * (3.5 * std::cos(0.1) + 1.5 * std::sin(0.1)), 1e-15);
  EXPECT_DOUBLE_EQ(x.at(1, 4), 4.5);  // pass-through dims keep their value
}

// Attention sinks as transformers' eager_attention_forward applies them, by hand: one head,
// head_dim 1, scale 1, q = 1, keys 0 and ln 2, values 3 and 5, sink ln 4. Position 1 sees both
// keys: logits [0, ln 2, ln 4] -> e^s = [1, 2, 4], out = (1*3 + 2*5) / (1 + 2 + 4) = 13/7.
// Position 0: (1*3) / (1 + 4) = 3/5. Without the sink: 13/3 and 3.
TEST(Attention, SinkJoinsTheDenominatorWithoutAValue) {
  Mat q(2, 1), k(2, 1), v(2, 1);
  q.at(0, 0) = q.at(1, 0) = 1;
  k.at(0, 0) = 0;
  k.at(1, 0) = std::log(2.0);
  v.at(0, 0) = 3;
  v.at(1, 0) = 5;
  AttentionParams p{.n_heads = 1, .n_kv_heads = 1, .head_dim = 1, .scale = 1, .softcap = 0, .window = 0,
                    .sinks = {std::log(4.0)}};
  Mat o = attention(q, k, v, p);
  EXPECT_NEAR(o.at(0, 0), 3.0 / 5.0, 1e-15);
  EXPECT_NEAR(o.at(1, 0), 13.0 / 7.0, 1e-15);
  // A sink far above every score takes the whole softmax mass: the output goes to 0 (the
  // max subtraction includes the sink, so nothing overflows).
  p.sinks = {800.0};
  o = attention(q, k, v, p);
  EXPECT_EQ(o.at(1, 0), 0.0);
  // A window of 1: position 1 sees only itself, e^(ln 2) = 2 against the sink's 4.
  p.sinks = {std::log(4.0)};
  p.window = 1;
  o = attention(q, k, v, p);
  EXPECT_NEAR(o.at(1, 0), 2.0 * 5.0 / 6.0, 1e-15);
}

TEST(Softcap, IsCapTimesTanhOfValueOverCapAndZeroMeansNone) {
  EXPECT_NEAR(softcap(100.0, 50.0), 48.20137900379085, 1e-12);
  EXPECT_NEAR(softcap(-100.0, 50.0), -48.20137900379085, 1e-12);
  EXPECT_DOUBLE_EQ(softcap(-3.0, 0.0), -3.0);
}

TEST(Mask, SlidingWindowSeesExactlyWKeysIncludingItself) {
  for (int64_t j = 0; j <= 7; ++j) {
    EXPECT_EQ(visible(5, j, 3), j >= 3 && j <= 5) << "j=" << j;
    EXPECT_EQ(visible(5, j, 0), j <= 5) << "j=" << j;
  }
  EXPECT_TRUE(visible(0, 0, 1));   // a window of 1 still sees itself
  EXPECT_FALSE(visible(1, 0, 1));
}

TEST(Attention, WindowLimitsWhichValuesAreAveraged) {
  // scale 0 makes every visible key equally likely: the output is the mean of visible values.
  Mat q(4, 1), k(4, 1), v(4, 1);
  const double vals[4] = {1, 2, 4, 8};
  for (int64_t t = 0; t < 4; ++t) {
    q.at(t, 0) = 1;
    k.at(t, 0) = static_cast<double>(t);
    v.at(t, 0) = vals[t];
  }
  AttentionParams p{.n_heads = 1, .n_kv_heads = 1, .head_dim = 1, .scale = 0, .softcap = 0, .window = 2};
  Mat windowed = attention(q, k, v, p);
  EXPECT_DOUBLE_EQ(windowed.at(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(windowed.at(1, 0), 1.5);
  EXPECT_DOUBLE_EQ(windowed.at(2, 0), 3.0);
  EXPECT_DOUBLE_EQ(windowed.at(3, 0), 6.0);
  p.window = 0;
  Mat full = attention(q, k, v, p);
  EXPECT_DOUBLE_EQ(full.at(2, 0), 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(full.at(3, 0), 15.0 / 4.0);
}

TEST(Attention, QueryHeadReadsKvHeadOfItsGroup) {
  Mat q(1, 4), k(1, 2), v(1, 2);  // 4 query heads, 2 kv heads, head_dim 1
  v.at(0, 0) = 10;
  v.at(0, 1) = 20;
  Mat out = attention(q, k, v, {.n_heads = 4, .n_kv_heads = 2, .head_dim = 1, .scale = 1, .softcap = 0, .window = 0});
  EXPECT_DOUBLE_EQ(out.at(0, 0), 10);
  EXPECT_DOUBLE_EQ(out.at(0, 1), 10);
  EXPECT_DOUBLE_EQ(out.at(0, 2), 20);
  EXPECT_DOUBLE_EQ(out.at(0, 3), 20);
}

TEST(Attention, SoftcapAppliesToScaledScoresBeforeSoftmax) {
  // Query 1 scores key 0 at 10 and key 1 at 0; capped at 5: 5 tanh(2) = 4.8201 vs 0.
  Mat q(2, 1), k(2, 1), v(2, 1);
  q.at(1, 0) = 2;
  k.at(0, 0) = 10;
  v.at(0, 0) = 1;
  Mat out = attention(q, k, v, {.n_heads = 1, .n_kv_heads = 1, .head_dim = 1, .scale = 0.5, .softcap = 5, .window = 0});
  EXPECT_NEAR(out.at(1, 0), 0.9919988597921752, 1e-15);  // e^4.8201 / (e^4.8201 + 1)
}

TEST(RmsNorm, LlamaScalesByWeightGemmaByOnePlusWeightPerGroup) {
  Mat x(1, 4);
  for (int64_t i = 0; i < 4; ++i) x.at(0, i) = static_cast<double>(i + 1);  // mean square 7.5
  const std::vector<double> ones(4, 1.0), zeros(4, 0.0);
  Mat a = rms_norm(x, ones, 0.0, NormStyle::kWeight, 4);
  Mat b = rms_norm(x, zeros, 0.0, NormStyle::kOnePlusWeight, 4);
  Mat c = rms_norm(x, ones, 0.0, NormStyle::kOnePlusWeight, 4);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(a.at(0, i), (i + 1) / std::sqrt(7.5), 1e-15);
    EXPECT_NEAR(b.at(0, i), a.at(0, i), 1e-15);
    EXPECT_NEAR(c.at(0, i), 2 * a.at(0, i), 1e-15);
  }
  // Per-head groups of 2 ([3, 4] and [1, 1]) are normalized separately; eps sits inside the root.
  Mat h(1, 4);
  h.at(0, 0) = 3, h.at(0, 1) = 4, h.at(0, 2) = 1, h.at(0, 3) = 1;
  Mat g = rms_norm(h, std::vector<double>{1, 1}, 0.5, NormStyle::kWeight, 2);
  EXPECT_NEAR(g.at(0, 0), 3 / std::sqrt(12.5 + 0.5), 1e-15);
  EXPECT_NEAR(g.at(0, 2), 1 / std::sqrt(1 + 0.5), 1e-15);
}

TEST(Activation, MatchesTorchDefinitionsAndRejectsUnknownNames) {
  EXPECT_NEAR(gelu_tanh(1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(gelu_erf(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(silu(1.0), 0.7310585786300049, 1e-15);
  EXPECT_EQ(parse_activation("gelu_pytorch_tanh", "f").value(), Activation::kGeluTanh);
  auto bad = parse_activation("mish", "config.json: field 'hidden_act'");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(bad.status().message().find("hidden_act"), std::string::npos);
}

TEST(RoundToDtype, Bf16RoundsGemmaNormalizersAsTransformersComments) {
  EXPECT_EQ(round_to_dtype(std::sqrt(3072.0), DType::kBF16), 55.5);  // "sqrt(3072)=55.4256 to become 55.5"
  EXPECT_EQ(round_to_dtype(std::sqrt(1152.0), DType::kBF16), 34.0);  // gemma-3-1b
  EXPECT_EQ(round_to_dtype(std::sqrt(3.0), DType::kF64), std::sqrt(3.0));
  EXPECT_EQ(round_to_dtype(std::sqrt(3.0), DType::kF32), static_cast<double>(static_cast<float>(std::sqrt(3.0))));
}

// Per-layer windows from config.json alone.

hf::ModelConfig parse(const Json& j) {
  auto c = reference::parse_model_config(j.dump(), "config.json");
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.value();
}

Json small_config(const std::string& model_type) {
  return Json{{"model_type", model_type}, {"vocab_size", 11},        {"hidden_size", 8},
              {"num_hidden_layers", 2},   {"num_attention_heads", 2}, {"num_key_value_heads", 1},
              {"head_dim", 4},            {"intermediate_size", 6},   {"rms_norm_eps", 1e-5},
              {"max_position_embeddings", 64}, {"rope_theta", 10000.0}, {"tie_word_embeddings", false}};
}

// c with the fields of `extra` set (overwriting).
Json with(Json c, const Json& extra) {
  for (const auto& [key, value] : extra.items()) c[key] = value;
  return c;
}

TEST(LayerWindows, Gemma3OneBHasFullLayersAt5_11_17_23AndWindow512Elsewhere) {
  Json j = small_config("gemma3_text");
  j["num_hidden_layers"] = 26;
  j["sliding_window"] = 512;
  j["sliding_window_pattern"] = 6;
  auto w = layer_windows(parse(j));
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  for (int64_t i = 0; i < 26; ++i) EXPECT_EQ((*w)[i], (i + 1) % 6 == 0 ? 0 : 512) << "layer " << i;
}

TEST(LayerWindows, Gemma2AlternatesStartingWithSlidingAndDefaultsWindowTo4096) {
  Json j = small_config("gemma2");
  j["num_hidden_layers"] = 4;
  auto w = layer_windows(parse(j));
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  EXPECT_EQ(*w, (std::vector<int64_t>{4096, 0, 4096, 0}));
  j["layer_types"] = {"full_attention", "full_attention", "sliding_attention", "full_attention"};
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0, 4096, 0}));
}

TEST(LayerWindows, QwenSlidesFromMaxWindowLayersOnlyWithUseSlidingWindow) {
  Json j = small_config("qwen2");
  j["num_hidden_layers"] = 4;
  j["sliding_window"] = 16;
  j["max_window_layers"] = 2;
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0, 0, 0}));
  j["use_sliding_window"] = true;
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0, 16, 16}));
  j["model_type"] = "qwen3";
  j["layer_types"] = {"sliding_attention", "full_attention", "full_attention", "full_attention"};
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{16, 0, 0, 0}));
}

TEST(LayerWindows, MistralAndPhi3WindowEveryLayerLlamaNone) {
  Json j = small_config("mistral");
  j["sliding_window"] = 5;
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{5, 5}));
  j["model_type"] = "phi3";
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{5, 5}));
  j["sliding_window"] = nullptr;
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0}));
  j["model_type"] = "llama";
  j["sliding_window"] = 5;
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0}));
  j["layer_types"] = {"sliding_attention", "full_attention"};
  auto r = layer_windows(parse(j));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("layer_types[0]"), std::string::npos) << r.status().message();
}

TEST(LayerWindows, SmolLM3SlidesOnItsNoPELayersOnlyWithUseSlidingWindow) {
  Json j = small_config("smollm3");
  j["num_hidden_layers"] = 8;
  j["sliding_window"] = 6;
  EXPECT_EQ(layer_windows(parse(j)).value(), std::vector<int64_t>(8, 0));
  j["use_sliding_window"] = true;  // NoPE every no_rope_layer_interval = 4th layer: 3 and 7
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 0, 0, 6, 0, 0, 0, 6}));
  j["no_rope_layers"] = {1, 0, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(layer_windows(parse(j)).value(), (std::vector<int64_t>{0, 6, 0, 0, 0, 0, 0, 0}));
  j["use_sliding_window"] = false;
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "full_attention",
                      "full_attention", "full_attention", "full_attention", "full_attention"};
  auto r = layer_windows(parse(j));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.status().message().find("use_sliding_window"), std::string::npos) << r.status().message();
}

// Whole forward passes on tiny checkpoints.

// Tensors by name, values in float64; encoded to the dtype chosen at write time.
struct Tensors {
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>> t;

  void set(const std::string& name, std::vector<int64_t> shape, std::vector<double> values) {
    t[name] = {std::move(shape), std::move(values)};
  }
  void random(const std::string& name, std::vector<int64_t> shape, std::mt19937& rng, double scale,
              double offset = 0) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<double> u(-scale, scale);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = offset + u(rng);
    set(name, std::move(shape), std::move(v));
  }
  std::vector<double>& values(const std::string& name) { return t.at(name).second; }
  // Rows of b appended to rows of a (both [rows, cols]) into `into`; a and b removed.
  void concat_rows(const std::string& a, const std::string& b, const std::string& into) {
    auto [sa, va] = t.at(a);
    auto [sb, vb] = t.at(b);
    va.insert(va.end(), vb.begin(), vb.end());
    set(into, {sa[0] + sb[0], sa[1]}, va);
    t.erase(a);
    t.erase(b);
  }
  void rename_prefix(const std::string& from, const std::string& to) {
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>> out;
    for (auto& [name, tv] : t) out[name.rfind(from, 0) == 0 ? to + name.substr(from.size()) : name] = tv;
    t = std::move(out);
  }
};

std::vector<uint8_t> encode(const std::vector<double>& v, DType dt) {
  std::vector<uint8_t> bytes(v.size() * dtype_size(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t* p = bytes.data() + i * dtype_size(dt);
    if (dt == DType::kF64) std::memcpy(p, &v[i], 8);
    if (dt == DType::kF32) { float f = static_cast<float>(v[i]); std::memcpy(p, &f, 4); }
    if (dt == DType::kBF16) { uint16_t h = float_to_bf16(static_cast<float>(v[i])); std::memcpy(p, &h, 2); }
  }
  return bytes;
}

// A model directory under the system temp dir, removed when the test ends.
class TinyModel {
 public:
  explicit TinyModel(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (std::filesystem::temp_directory_path() /
            (std::string("og_reference_test_") + info->name() + "_" + tag + "_" + std::to_string(::getpid())))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TinyModel() { std::filesystem::remove_all(dir_); }

  // Writes config.json and model.safetensors, then runs the reference on `tokens`.
  Result<std::vector<double>> run(const Json& config, const Tensors& tensors, std::vector<int32_t> tokens,
                                  DType dt = DType::kF32, ForwardOptions options = {}) {
    std::ofstream(dir_ + "/config.json") << config.dump(2);
    std::vector<hf::OwnedTensor> owned;
    for (const auto& [name, tv] : tensors.t) owned.push_back({name, dt, tv.first, encode(tv.second, dt)});
    OG_TRY(hf::write_checkpoint(dir_, owned));
    OG_ASSIGN_OR_RETURN(hf::ModelConfig c, reference::load_model_config(dir_ + "/config.json"));
    OG_ASSIGN_OR_RETURN(hf::Checkpoint ckpt, hf::Checkpoint::open(dir_));
    return forward(c, ckpt, tokens, options);
  }

 private:
  std::string dir_;
};

// Random weights for small_config()'s geometry: vocab 11, hidden 8, 2 layers, 2 q heads,
// 1 kv head, head_dim 4, intermediate 6, under HF's llama names. Gemma adds its extra norms.
Tensors llama_tensors(uint32_t seed, bool gemma = false) {
  std::mt19937 rng(seed);
  Tensors t;
  const double norm_offset = gemma ? 0.0 : 1.0;  // Gemma stores norm weights centred on 0
  t.random("model.embed_tokens.weight", {11, 8}, rng, 1.0);
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.random(p + "self_attn.q_proj.weight", {8, 8}, rng, 0.5);
    t.random(p + "self_attn.k_proj.weight", {4, 8}, rng, 0.5);
    t.random(p + "self_attn.v_proj.weight", {4, 8}, rng, 0.5);
    t.random(p + "self_attn.o_proj.weight", {8, 8}, rng, 0.5);
    t.random(p + "mlp.gate_proj.weight", {6, 8}, rng, 0.5);
    t.random(p + "mlp.up_proj.weight", {6, 8}, rng, 0.5);
    t.random(p + "mlp.down_proj.weight", {8, 6}, rng, 0.5);
    t.random(p + "input_layernorm.weight", {8}, rng, 0.2, norm_offset);
    t.random(p + "post_attention_layernorm.weight", {8}, rng, 0.2, norm_offset);
    if (gemma) {
      t.random(p + "pre_feedforward_layernorm.weight", {8}, rng, 0.2);
      t.random(p + "post_feedforward_layernorm.weight", {8}, rng, 0.2);
    }
  }
  t.random("model.norm.weight", {8}, rng, 0.2, norm_offset);
  t.random("lm_head.weight", {11, 8}, rng, 1.0);
  return t;
}

void add_qk_norms(Tensors& t, std::mt19937& rng, double offset) {
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    t.random(p + "q_norm.weight", {4}, rng, 0.3, offset);
    t.random(p + "k_norm.weight", {4}, rng, 0.3, offset);
  }
}

// qwen2's q/k/v biases: random when rng is given, else zero.
void add_qkv_biases(Tensors& t, std::mt19937* rng) {
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    for (auto [name, n] : {std::pair{"q_proj.bias", 8}, {"k_proj.bias", 4}, {"v_proj.bias", 4}}) {
      if (rng != nullptr) t.random(p + name, {n}, *rng, 0.5);
      else t.set(p + name, {n}, std::vector<double>(static_cast<size_t>(n), 0.0));
    }
  }
}

// phi3's layout of the same weights: qkv_proj = [q; k; v] rows, gate_up_proj = [gate; up].
void fuse_like_phi3(Tensors& t) {
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.concat_rows(p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "qk");
    t.concat_rows(p + "qk", p + "self_attn.v_proj.weight", p + "self_attn.qkv_proj.weight");
    t.concat_rows(p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight", p + "mlp.gate_up_proj.weight");
  }
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(Forward, LlamaTwoTokensMatchHandComputation) {
  // vocab 3, hidden 2, one head of dim 2 (inv_freq [1]), intermediate 1, tied embeddings.
  Json c = {{"model_type", "llama"},     {"vocab_size", 3},         {"hidden_size", 2},
            {"num_hidden_layers", 1},    {"num_attention_heads", 1}, {"intermediate_size", 1},
            {"rms_norm_eps", 1e-6},      {"rope_theta", 10000.0},   {"tie_word_embeddings", true}};
  Tensors t;
  t.set("model.embed_tokens.weight", {3, 2}, {1, 2, 0.5, -1, -1, 0.25});
  t.set("model.layers.0.input_layernorm.weight", {2}, {1, 0.5});
  t.set("model.layers.0.self_attn.q_proj.weight", {2, 2}, {1, 0.5, -0.5, 1});
  t.set("model.layers.0.self_attn.k_proj.weight", {2, 2}, {0.25, 1, 1, -1});
  t.set("model.layers.0.self_attn.v_proj.weight", {2, 2}, {1, 0, 0.5, 1});
  t.set("model.layers.0.self_attn.o_proj.weight", {2, 2}, {0.5, 0, 0, 2});
  t.set("model.layers.0.post_attention_layernorm.weight", {2}, {2, 1});
  t.set("model.layers.0.mlp.gate_proj.weight", {1, 2}, {1, -1});
  t.set("model.layers.0.mlp.up_proj.weight", {1, 2}, {0.5, 0.5});
  t.set("model.layers.0.mlp.down_proj.weight", {2, 1}, {1, -2});
  t.set("model.norm.weight", {2}, {1, 1});
  TinyModel m("llama");
  auto r = m.run(c, t, {0, 2});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  // Expected from a separate Python transcription of LlamaForCausalLM for these weights.
  const std::vector<double> expected = {3.094902248993913,   -1.1881871503564794, -0.017309189783797696,
                                        -0.2149021361276735, -1.1975152433138048, 1.4412243332838874};
  ASSERT_EQ(r->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR((*r)[i], expected[i], 1e-13) << "logit " << i;
}

// Gemma2/Gemma3 with deterministic weights value(seed, k) = (((7k + 5 seed) mod 11) - 5) / 8
// (exact in f32), seed = the tensor's index in gemma_hand_names(). Expected logits come from a
// separate Python transcription of Gemma2ForCausalLM / Gemma3ForCausalLM: embedding * sqrt(4),
// (1 + w) norms around both sublayers, query_pre_attn_scalar 3, window 2 on layer 0.
std::vector<std::pair<std::string, std::vector<int64_t>>> gemma_hand_names(bool gemma3) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> n = {{"model.embed_tokens.weight", {3, 4}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    n.insert(n.end(), {{p + "self_attn.q_proj.weight", {8, 4}}, {p + "self_attn.k_proj.weight", {4, 4}},
                       {p + "self_attn.v_proj.weight", {4, 4}}, {p + "self_attn.o_proj.weight", {4, 8}},
                       {p + "mlp.gate_proj.weight", {3, 4}},    {p + "mlp.up_proj.weight", {3, 4}},
                       {p + "mlp.down_proj.weight", {4, 3}},    {p + "input_layernorm.weight", {4}},
                       {p + "post_attention_layernorm.weight", {4}}, {p + "pre_feedforward_layernorm.weight", {4}},
                       {p + "post_feedforward_layernorm.weight", {4}}});
    if (gemma3) n.insert(n.end(), {{p + "self_attn.q_norm.weight", {4}}, {p + "self_attn.k_norm.weight", {4}}});
  }
  n.push_back({"model.norm.weight", {4}});
  return n;
}

TEST(Forward, GemmaThreeTokensMatchHandComputation) {
  struct Case {
    std::string model_type;
    Json extra;
    std::vector<double> expected;  // [3 tokens, 3 vocab]
  };
  const std::vector<Case> cases = {
      {"gemma2",
       {{"attn_logit_softcapping", 1.5}, {"final_logit_softcapping", 2.0}, {"rope_theta", 10000.0}},
       {-0.696982269320337, 0.25470848852711364, 0.716533077236486, -0.8656380237364723, 0.07497520105802931,
        0.8191656747290788, -1.0785065117410846, 0.4146836960184613, 0.40614871091903576}},
      {"gemma3_text",
       {{"sliding_window_pattern", 2}, {"rope_theta", 100.0}, {"rope_local_base_freq", 10.0},
        {"attn_logit_softcapping", nullptr}, {"final_logit_softcapping", nullptr}},
       {0.32284336859018314, -0.28445592826062893, 1.1043061473315472, 0.030629264522699817, -0.41359935217018806,
        1.2264920414992464, -0.1952591568097026, 0.14374879968603527, 0.6484641589830201}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.model_type);
    const bool gemma3 = k.model_type == "gemma3_text";
    Tensors t;
    const auto names = gemma_hand_names(gemma3);
    for (size_t seed = 0; seed < names.size(); ++seed) {
      const auto& [name, shape] = names[seed];
      std::vector<double> v(static_cast<size_t>(shape[0] * (shape.size() > 1 ? shape[1] : 1)));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<double>(static_cast<int64_t>((7 * i + 5 * seed) % 11) - 5) / 8.0;
      t.set(name, shape, v);
    }
    const Json c = with({{"model_type", k.model_type}, {"vocab_size", 3}, {"hidden_size", 4},
                         {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                         {"head_dim", 4}, {"intermediate_size", 3}, {"rms_norm_eps", 1e-6},
                         {"query_pre_attn_scalar", 3}, {"sliding_window", 2}},
                        k.extra);
    TinyModel m("hand");
    auto r = m.run(c, t, {0, 2, 1});
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    ASSERT_EQ(r->size(), 9u);
    for (size_t i = 0; i < 9; ++i) EXPECT_NEAR((*r)[i], k.expected[i], 1e-13) << "logit " << i;
  }
}

struct FamilyCase {
  std::string name;
  Json config;
  Tensors tensors;
};

std::vector<FamilyCase> family_cases() {
  std::vector<FamilyCase> cases;
  std::mt19937 rng(7);
  cases.push_back({"llama", small_config("llama"), llama_tensors(1)});
  cases.push_back({"mistral", with(small_config("mistral"), {{"sliding_window", 3}}), llama_tensors(2)});
  {
    const Json c = with(small_config("qwen2"),
                        {{"use_sliding_window", true}, {"sliding_window", 3}, {"max_window_layers", 1}});
    Tensors t = llama_tensors(3);
    add_qkv_biases(t, &rng);
    cases.push_back({"qwen2", c, t});
  }
  {
    Tensors t = llama_tensors(4);
    add_qk_norms(t, rng, 1.0);
    cases.push_back({"qwen3", small_config("qwen3"), t});
  }
  cases.push_back({"smollm3",
                   with(small_config("smollm3"),
                        {{"no_rope_layers", {1, 0}}, {"use_sliding_window", true}, {"sliding_window", 3}}),
                   llama_tensors(9)});
  Tensors phi3 = llama_tensors(5);
  fuse_like_phi3(phi3);
  cases.push_back({"phi3", with(small_config("phi3"), {{"sliding_window", 3}, {"partial_rotary_factor", 0.5}}), phi3});
  cases.push_back({"gemma2",
                   with(small_config("gemma2"),
                        {{"sliding_window", 3}, {"final_logit_softcapping", 2.0}, {"attn_logit_softcapping", 1.0}}),
                   llama_tensors(6, true)});
  {
    const Json c = with(small_config("gemma3_text"),
                        {{"sliding_window", 3}, {"sliding_window_pattern", 2}, {"query_pre_attn_scalar", 4}});
    Tensors t = llama_tensors(8, true);
    add_qk_norms(t, rng, 0.0);
    cases.push_back({"gemma3", c, t});
    Json wrapped = {{"model_type", "gemma3"}, {"text_config", c}};
    Tensors tw = t;
    tw.rename_prefix("model.", "language_model.model.");
    cases.push_back({"gemma3_wrapped", wrapped, tw});
  }
  return cases;
}

TEST(Forward, EveryFamilyRowDependsOnlyOnItsPrefix) {
  for (FamilyCase& fc : family_cases()) {
    SCOPED_TRACE(fc.name);
    TinyModel m(fc.name);
    auto full = m.run(fc.config, fc.tensors, {1, 5, 2, 9, 3, 3, 7});
    ASSERT_TRUE(full.is_ok()) << full.status().message();
    auto prefix = m.run(fc.config, fc.tensors, {1, 5, 2, 9});
    ASSERT_TRUE(prefix.is_ok()) << prefix.status().message();
    ASSERT_EQ(full->size(), 7u * 11u);
    EXPECT_LT(max_abs_diff(*full, *prefix, 4 * 11), 1e-12);
    double spread = 0;
    for (double l : *full) {
      ASSERT_TRUE(std::isfinite(l));
      spread = std::max(spread, std::abs(l - (*full)[0]));
    }
    EXPECT_GT(spread, 1e-3);
  }
}

TEST(Forward, SlidingWindowChangesOnlyRowsWhoseHistoryExceedsIt) {
  Json c = small_config("mistral");
  const Tensors t = llama_tensors(11);
  TinyModel m("mistral");
  auto full = m.run(c, t, {1, 2, 3, 4, 5, 6});
  c["sliding_window"] = 3;
  auto windowed = m.run(c, t, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(full.is_ok() && windowed.is_ok());
  EXPECT_LT(max_abs_diff(*full, *windowed, 3 * 11), 1e-12);        // rows 0..2 see <= 3 keys
  for (size_t row = 3; row < 6; ++row) {
    std::vector<double> a(full->begin() + row * 11, full->begin() + (row + 1) * 11);
    std::vector<double> b(windowed->begin() + row * 11, windowed->begin() + (row + 1) * 11);
    EXPECT_GT(max_abs_diff(a, b, 11), 1e-6) << "row " << row;
  }
}

TEST(Forward, Phi3FusedProjectionsSplitAsQKVAndGateThenUp) {
  Tensors split = llama_tensors(21);
  Tensors fused = split;
  fuse_like_phi3(fused);
  TinyModel m("phi3");
  auto llama = m.run(small_config("llama"), split, {4, 1, 8, 2, 0});
  auto phi3 = m.run(small_config("phi3"), fused, {4, 1, 8, 2, 0});
  ASSERT_TRUE(llama.is_ok() && phi3.is_ok()) << phi3.status().message();
  EXPECT_LT(max_abs_diff(*llama, *phi3, llama->size()), 1e-12);
}

TEST(Forward, Qwen2WithZeroQkvBiasesIsLlama) {
  Tensors t = llama_tensors(22);
  TinyModel m("qwen2");
  auto llama = m.run(small_config("llama"), t, {3, 1, 4, 1, 5});
  add_qkv_biases(t, nullptr);
  auto qwen2 = m.run(small_config("qwen2"), t, {3, 1, 4, 1, 5});
  ASSERT_TRUE(llama.is_ok() && qwen2.is_ok()) << qwen2.status().message();
  EXPECT_LT(max_abs_diff(*llama, *qwen2, llama->size()), 1e-12);
  t.values("model.layers.1.self_attn.k_proj.bias")[0] = 0.5;  // and the biases are used
  auto biased = m.run(small_config("qwen2"), t, {3, 1, 4, 1, 5});
  EXPECT_GT(max_abs_diff(*llama, *biased, llama->size()), 1e-6);
}

TEST(Forward, SmolLM3IsLlamaWithRopeOnlyOnItsRopeLayers) {
  const Tensors t = llama_tensors(24);
  TinyModel m("smollm3");
  const std::vector<int32_t> ids{3, 1, 4, 1, 5, 9}, swapped{1, 3, 4, 1, 5, 9};  // first two tokens swapped
  auto llama = m.run(small_config("llama"), t, ids);
  auto all_rope = m.run(with(small_config("smollm3"), {{"no_rope_layers", {1, 1}}}), t, ids);
  ASSERT_TRUE(llama.is_ok() && all_rope.is_ok()) << all_rope.status().message();
  EXPECT_LT(max_abs_diff(*llama, *all_rope, llama->size()), 1e-12);
  // One layer without rope attends over earlier tokens as a set: the last row cannot tell the
  // order of the first two tokens (with more layers, the causal mask of the first would). With
  // rope it can.
  const size_t last = 5 * 11;
  for (const Json& flags : {Json::array({0}), Json::array({1})}) {
    const Json c = with(small_config("smollm3"), {{"num_hidden_layers", 1}, {"no_rope_layers", flags}});
    auto a = m.run(c, t, ids), b = m.run(c, t, swapped);
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << a.status().message();
    const std::vector<double> ra(a->begin() + last, a->end()), rb(b->begin() + last, b->end());
    if (flags[0] == 0) {
      EXPECT_LT(max_abs_diff(ra, rb, 11), 1e-12);
    } else {
      EXPECT_GT(max_abs_diff(ra, rb, 11), 1e-6);
    }
  }
}

TEST(Forward, Qwen3NormalizesEachHeadOfQSeparately) {
  // Scaling one q head's projection rows leaves a per-head RMSNorm output unchanged (eps ~ 0);
  // a norm across all heads would change every head.
  std::mt19937 rng(5);
  Tensors t = llama_tensors(23);
  add_qk_norms(t, rng, 1.0);
  const Json c = with(small_config("qwen3"), {{"rms_norm_eps", 1e-30}});
  TinyModel m("qwen3");
  auto before = m.run(c, t, {2, 7, 1, 8});
  auto& q = t.values("model.layers.0.self_attn.q_proj.weight");
  for (size_t i = 0; i < 4 * 8; ++i) q[i] *= 8;  // head 0's rows; a power of 2 stays exact in f32
  auto after = m.run(c, t, {2, 7, 1, 8});
  ASSERT_TRUE(before.is_ok() && after.is_ok()) << before.status().message();
  EXPECT_LT(max_abs_diff(*before, *after, before->size()), 1e-12);
}

TEST(Forward, TiedEmbeddingsReplaceLmHeadEvenWhenPresent) {
  Tensors t = llama_tensors(24);
  TinyModel m("tie");
  auto untied = m.run(small_config("llama"), t, {1, 2, 3});
  auto tied = m.run(with(small_config("llama"), {{"tie_word_embeddings", true}}), t, {1, 2, 3});
  t.t.erase("lm_head.weight");
  auto absent = m.run(small_config("llama"), t, {1, 2, 3});  // no lm_head tensor: transformers ties
  ASSERT_TRUE(untied.is_ok() && tied.is_ok() && absent.is_ok());
  EXPECT_GT(max_abs_diff(*untied, *tied, tied->size()), 1e-6);
  EXPECT_LT(max_abs_diff(*tied, *absent, tied->size()), 1e-12);
}

// Gemma with attention and MLP outputs zeroed: the residual stream stays s * embed(token), so
// logits[v] = embed[v] · (s e / sqrt(s² |e|² / H + eps)) with e = [1, 0, 0] and eps = 1 (large,
// so that the normalizer s shows through the norm).
Tensors gemma_passthrough(bool qk_norm) {
  std::mt19937 rng(3);
  Tensors t;
  t.set("model.embed_tokens.weight", {3, 3}, {1, 0, 0, 0, 1, 0, 0.5, 0, 0});
  const std::string p = "model.layers.0.";
  t.random(p + "self_attn.q_proj.weight", {2, 3}, rng, 1);
  t.random(p + "self_attn.k_proj.weight", {2, 3}, rng, 1);
  t.random(p + "self_attn.v_proj.weight", {2, 3}, rng, 1);
  t.set(p + "self_attn.o_proj.weight", {3, 2}, std::vector<double>(6, 0.0));
  if (qk_norm) {
    t.set(p + "self_attn.q_norm.weight", {2}, {0, 0});
    t.set(p + "self_attn.k_norm.weight", {2}, {0, 0});
  }
  t.random(p + "mlp.gate_proj.weight", {2, 3}, rng, 1);
  t.random(p + "mlp.up_proj.weight", {2, 3}, rng, 1);
  t.set(p + "mlp.down_proj.weight", {3, 2}, std::vector<double>(6, 0.0));
  for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm"})
    t.set(p + n + ".weight", {3}, {0, 0, 0});
  t.set("model.norm.weight", {3}, {0, 0, 0});
  return t;
}

Json gemma_passthrough_config(const std::string& model_type) {
  return Json{{"model_type", model_type},   {"vocab_size", 3},      {"hidden_size", 3},
              {"num_hidden_layers", 1},     {"num_attention_heads", 1}, {"num_key_value_heads", 1},
              {"head_dim", 2},              {"intermediate_size", 2}, {"rms_norm_eps", 1.0},
              {"final_logit_softcapping", nullptr}, {"attn_logit_softcapping", nullptr}};
}

TEST(Forward, GemmaEmbeddingNormalizerIsRoundedToWeightDtype) {
  struct Case {
    std::string model_type;
    DType dtype;
    std::optional<DType> override_dtype;
    double s;  // the normalizer transformers multiplies by
    std::string torch_dtype = "";
  };
  const double sqrt3 = std::sqrt(3.0), sqrt3_f32 = static_cast<double>(static_cast<float>(std::sqrt(3.0)));
  const std::vector<Case> cases = {
      {"gemma2", DType::kBF16, std::nullopt, 1.734375},     // bf16(1.7320508)
      {"gemma3_text", DType::kBF16, std::nullopt, 1.734375},
      {"gemma2", DType::kF64, std::nullopt, sqrt3},          // torch.tensor(h**0.5, dtype=float64)
      {"gemma3_text", DType::kF64, std::nullopt, sqrt3_f32}, // torch.tensor(h**0.5) is float32 first
      {"gemma2", DType::kBF16, DType::kF32, sqrt3_f32},      // checkpoint loaded as float32
      {"gemma2", DType::kBF16, std::nullopt, sqrt3_f32, "float32"},  // dtype="auto" takes config's
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.model_type + " " + std::string(dtype_name(k.dtype)));
    TinyModel m("norm");
    Json c = gemma_passthrough_config(k.model_type);
    if (!k.torch_dtype.empty()) c["torch_dtype"] = k.torch_dtype;
    auto r = m.run(c, gemma_passthrough(k.model_type == "gemma3_text"), {0}, k.dtype,
                   ForwardOptions{.weight_dtype = k.override_dtype});
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    const double y0 = k.s / std::sqrt(k.s * k.s / 3 + 1);
    EXPECT_NEAR((*r)[0], y0, 1e-14);
    EXPECT_NEAR((*r)[1], 0.0, 1e-14);
    EXPECT_NEAR((*r)[2], 0.5 * y0, 1e-14);
  }
}

TEST(Forward, Gemma2AttnSoftcapAppliesGemma3IgnoresIt) {
  // A cap of 1e-9 squeezes all scores to ~0: uniform attention, as a scale of ~0 would give.
  for (const std::string type : {"gemma2", "gemma3_text"}) {
    SCOPED_TRACE(type);
    std::mt19937 rng(9);
    Tensors t = llama_tensors(31, true);
    if (type == "gemma3_text") add_qk_norms(t, rng, 0.0);
    const Json c = with(small_config(type), {{"final_logit_softcapping", nullptr}});
    TinyModel m(type);
    auto plain = m.run(c, t, {1, 2, 3, 4});
    auto capped = m.run(with(c, {{"attn_logit_softcapping", 1e-9}}), t, {1, 2, 3, 4});
    auto uniform = m.run(with(c, {{"query_pre_attn_scalar", 1e40}}), t, {1, 2, 3, 4});
    ASSERT_TRUE(plain.is_ok() && capped.is_ok() && uniform.is_ok()) << plain.status().message();
    if (type == "gemma2") {
      EXPECT_LT(max_abs_diff(*capped, *uniform, capped->size()), 1e-7);
      EXPECT_GT(max_abs_diff(*capped, *plain, capped->size()), 1e-6);
    } else {
      EXPECT_LT(max_abs_diff(*capped, *plain, capped->size()), 1e-12);
    }
  }
}

TEST(Forward, FinalLogitSoftcapIsCapTimesTanhOfLogits) {
  Json c = small_config("gemma3_text");
  std::mt19937 rng(2);
  Tensors t = llama_tensors(32, true);
  add_qk_norms(t, rng, 0.0);
  TinyModel m("cap");
  auto raw = m.run(c, t, {5, 6, 7});
  c["final_logit_softcapping"] = 0.3;
  auto capped = m.run(c, t, {5, 6, 7});
  ASSERT_TRUE(raw.is_ok() && capped.is_ok());
  for (size_t i = 0; i < raw->size(); ++i) EXPECT_NEAR((*capped)[i], 0.3 * std::tanh((*raw)[i] / 0.3), 1e-14);
}

TEST(Forward, Gemma3RopeScalingAndRopeThetaReachFullLayersOnly) {
  std::mt19937 rng(4);
  Tensors t = llama_tensors(33, true);
  add_qk_norms(t, rng, 0.0);
  const std::vector<int32_t> tokens = {1, 2, 3, 4, 5};
  TinyModel m("rope");
  auto run_with = [&](const std::string& layer_type, const Json& extra) {
    const Json types = {{"layer_types", {layer_type, layer_type}}, {"sliding_window", 64}};
    const Json c = with(with(small_config("gemma3_text"), types), extra);
    auto r = m.run(c, t, tokens);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? r.value() : std::vector<double>(tokens.size() * 11, 0.0);
  };
  const Json scaling = {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 8.0}}}};
  const Json theta = {{"rope_theta", 123.0}};
  const Json local = {{"rope_local_base_freq", 77.0}};
  for (const std::string type : {"sliding_attention", "full_attention"}) {
    SCOPED_TRACE(type);
    const bool full = type == "full_attention";
    const auto base = run_with(type, Json::object());
    const double d_scaling = max_abs_diff(base, run_with(type, scaling), base.size());
    const double d_theta = max_abs_diff(base, run_with(type, theta), base.size());
    const double d_local = max_abs_diff(base, run_with(type, local), base.size());
    EXPECT_EQ(d_scaling > 1e-6, full);
    EXPECT_EQ(d_theta > 1e-6, full);
    EXPECT_EQ(d_local > 1e-6, !full);
  }
  // The v5 spelling: rope_parameters keyed by layer type; its rope_theta wins over the top-level
  // one (small_config's 1e4), so 1e6 here must differ from the old spelling and 1e4 must not.
  auto nested = [](double full_theta) {
    return Json{{"rope_parameters",
                 {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", full_theta}}},
                  {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}}}};
  };
  const auto old_style = run_with("full_attention", scaling);
  EXPECT_LT(max_abs_diff(old_style, run_with("full_attention", nested(1e4)), old_style.size()), 1e-12);
  EXPECT_GT(max_abs_diff(old_style, run_with("full_attention", nested(1e6)), old_style.size()), 1e-6);
}

TEST(Forward, Gemma3WrapperFindsTextWeightsUnderEitherPrefix) {
  std::mt19937 rng(6);
  Tensors t = llama_tensors(34, true);
  add_qk_norms(t, rng, 0.0);
  t.t.erase("lm_head.weight");
  Json text = small_config("gemma3_text");
  TinyModel m("wrap");
  auto plain = m.run(text, t, {9, 8, 7});
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  for (const std::string prefix : {"language_model.model.", "model.language_model."}) {
    SCOPED_TRACE(prefix);
    Tensors tw = t;
    tw.rename_prefix("model.", prefix);
    auto wrapped = m.run(Json{{"model_type", "gemma3"}, {"text_config", text}}, tw, {9, 8, 7});
    ASSERT_TRUE(wrapped.is_ok()) << wrapped.status().message();
    EXPECT_LT(max_abs_diff(*plain, *wrapped, plain->size()), 1e-12);
  }
}

// Fields the reference cannot honour, and bad inputs.

void expect_error(const Result<std::vector<double>>& r, ErrorCode code, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(r.status().code(), code) << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(ForwardErrors, NameTheFieldOrTensorAtFault) {
  const Tensors t = llama_tensors(41);
  TinyModel m("errors");
  auto run = [&](const std::string& type, const Json& extra) { return m.run(with(small_config(type), extra), t, {1}); };
  const ErrorCode kUnsupported = ErrorCode::kUnsupported;
  // longrope without its factor lists (a malformed config, not a missing feature)
  expect_error(run("llama", {{"rope_scaling", {{"rope_type", "longrope"}, {"factor", 4.0}}}}), ErrorCode::kBadInput,
               "rope_scaling.short_factor");
  expect_error(run("llama", {{"rope_scaling", {{"rope_type", "ntk"}, {"factor", 4.0}}}}), kUnsupported,
               "rope_scaling.rope_type");
  expect_error(run("llama", {{"rope_parameters", {{"type", "dynamic"}, {"factor", 2.0}}}}), kUnsupported,
               "rope_parameters.type");
  expect_error(run("qwen2", {{"partial_rotary_factor", 0.5}}), kUnsupported, "partial_rotary_factor");
  expect_error(run("phi3", {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}}), kUnsupported, "linear");
  expect_error(run("llama", {{"hidden_act", "mish"}}), kUnsupported, "hidden_act");
  expect_error(run("smollm3", {{"partial_rotary_factor", 0.5}}), kUnsupported, "partial_rotary_factor");
  expect_error(run("smollm3", {{"no_rope_layers", {1, 2}}}), kUnsupported, "no_rope_layers[1]");
  expect_error(run("smollm3", {{"no_rope_layers", {1}}}), ErrorCode::kBadInput, "no_rope_layers");
  expect_error(run("gemma3_text", {{"use_bidirectional_attention", true}}), kUnsupported,
               "use_bidirectional_attention");
  expect_error(m.run(small_config("llama"), t, {1, 11}), ErrorCode::kBadInput, "token 11 (position 1)");
  Tensors missing = t;
  missing.t.erase("model.layers.1.mlp.up_proj.weight");
  expect_error(m.run(small_config("llama"), missing, {1}), ErrorCode::kBadInput, "model.layers.1.mlp.up_proj.weight");
}

}  // namespace
}  // namespace og::reference
