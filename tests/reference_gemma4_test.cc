// Tests of the float64 reference for Gemma-4 and Gemma-3n (src/reference/gemma_n.*,
// families/gemma4.cc, families/gemma3n.cc): the pieces against hand-computed values and the
// published E2B configs, whole forward passes against values of an independent numpy
// transcription of transformers' modeling code, and equalities transformers implies (a
// KV-shared layer = a layer recomputing its donor's k/v, k_eq_v = v_proj copied from k_proj,
// zero per-layer projections = no per-layer inputs, ...). Checkpoints come from src/testgen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"
#include "reference/gemma_n.h"
#include "reference/reference.h"
#include "reference/toolkit.h"
#include "test_util.h"
#include "testgen/testgen.h"

namespace og::reference {
namespace {

using hf::Json;
using og::testing::read_file;
using og::testing::TempDir;
using og::testing::write_file;

// ---- Helpers: tiny checkpoints from testgen, edited tensor by tensor. ----

struct Model {
  std::unique_ptr<TempDir> dir = std::make_unique<TempDir>();
  std::string path() const { return dir->path(); }
};

Model generate(const std::string& family, uint64_t seed, Json overrides = Json::object(), bool hub_layout = false) {
  Model m;
  testgen::GenOptions o{.family = family, .out_dir = m.path(), .seed = seed, .overrides = std::move(overrides),
                        .hub_layout = hub_layout};
  Status s = testgen::generate_checkpoint(o);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return m;
}

Json read_config(const Model& m) { return Json::parse(read_file(m.path() + "/config.json")); }
void write_config(const Model& m, const Json& j) { write_file(m.path() + "/config.json", j.dump(2)); }
Json& text_of(Json& root) { return root.contains("text_config") ? root["text_config"] : root; }

// All tensors of a checkpoint as float32 (testgen writes F32 unless asked otherwise).
struct Tensors {
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> t;
  std::vector<float>& operator[](const std::string& name) {
    auto it = t.find(name);
    EXPECT_NE(it, t.end()) << name;
    return it->second.second;
  }
  void copy(const std::string& from, const std::string& to) { t[to] = t.at(from); }
  void fill(const std::string& name, float v) { std::fill((*this)[name].begin(), (*this)[name].end(), v); }
};

Tensors read_tensors(const Model& m) {
  Tensors out;
  auto ckpt = hf::Checkpoint::open(m.path());
  EXPECT_TRUE(ckpt.is_ok()) << ckpt.status().message();
  if (!ckpt.is_ok()) return out;
  for (const std::string& name : ckpt->names()) {
    const hf::TensorView* v = ckpt->find(name);
    out.t[name] = {v->shape, hf::to_f32(*v)};
  }
  return out;
}

void write_tensors(const Model& m, const Tensors& tensors) {
  std::vector<hf::OwnedTensor> owned;
  for (const auto& [name, tv] : tensors.t) {
    std::vector<uint8_t> bytes(tv.second.size() * sizeof(float));
    std::memcpy(bytes.data(), tv.second.data(), bytes.size());
    owned.push_back({name, DType::kF32, tv.first, std::move(bytes)});
  }
  Status s = hf::write_checkpoint(m.path(), owned);
  EXPECT_TRUE(s.is_ok()) << s.message();
}

Result<std::vector<double>> run(const Model& m, const std::vector<int32_t>& tokens, ForwardOptions options = {}) {
  OG_ASSIGN_OR_RETURN(hf::ModelConfig c, reference::load_model_config(m.path() + "/config.json"));
  OG_ASSIGN_OR_RETURN(hf::Checkpoint ckpt, hf::Checkpoint::open(m.path()));
  return forward(c, ckpt, tokens, options);
}

std::vector<double> logits(const Model& m, const std::vector<int32_t>& tokens, ForwardOptions options = {}) {
  auto r = run(m, tokens, options);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : std::vector<double>{};
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

hf::ModelConfig config_from(const Json& j) {
  auto c = reference::parse_model_config(j.dump(), "config.json");
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return *c;
}

hf::ModelConfig shared_config(const std::string& name) {
  auto c = reference::load_model_config(std::string(OG_TEST_DATA) + "/configs/" + name);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return *c;
}

ForwardOptions f32_activations() {
  ForwardOptions o;
  o.float32_activations = true;
  return o;
}

const std::vector<int32_t> kTokens = {1, 5, 9, 200, 17, 3, 77, 378, 11, 379, 6, 382, 42, 300};
const std::vector<int32_t> kTokens3n = {1, 5, 9, 200, 17, 3, 77, 250, 11, 60, 6, 42, 255, 2};

// ---- Pieces against hand-computed values. ----

TEST(ProportionalRope, ThetaPowerOverTheWholeHeadDimThenZeros) {
  // testgen's tiny full layers: head_dim 64, partial 0.25, theta 1e6 -> rope_angles = 8.
  const std::vector<double> inv = proportional_inv_freq(1e6, 64, 0.25);
  ASSERT_EQ(inv.size(), 32u);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(inv[i], std::pow(1e6, -2.0 * i / 64.0)) << i;  // divisor 64, not 16
  for (int i = 8; i < 32; ++i) EXPECT_EQ(inv[i], 0.0) << i;
  // factor divides every frequency.
  const std::vector<double> scaled = proportional_inv_freq(1e6, 64, 0.25, 4.0);
  for (int i = 0; i < 32; ++i) EXPECT_DOUBLE_EQ(scaled[i], inv[i] / 4.0);
  // gemma-4-E2B full layers: global_head_dim 512 -> 64 rotated pairs of 256.
  const std::vector<double> e2b = proportional_inv_freq(1e6, 512, 0.25);
  ASSERT_EQ(e2b.size(), 256u);
  EXPECT_DOUBLE_EQ(e2b[63], std::pow(1e6, -126.0 / 512.0));
  EXPECT_EQ(e2b[64], 0.0);
  // int(0.3 * 10 // 2) = int(3.0 // 2) = 1.
  const std::vector<double> odd = proportional_inv_freq(100.0, 10, 0.3);
  EXPECT_EQ(odd[0], 1.0);
  EXPECT_EQ(odd[1], 0.0);
}

TEST(ProportionalRope, PairsAreHalfTheHeadApartAndZeroFrequencyDimsPassThrough) {
  // head_dim 8, partial 0.5: inv = [1, 10^(-2/8)... ] with theta 10 -> [1, 10^-0.25, 0, 0].
  const std::vector<double> inv = proportional_inv_freq(10.0, 8, 0.5);
  ASSERT_EQ(inv.size(), 4u);
  Mat x(3, 8);
  for (int i = 0; i < 8; ++i) x.at(2, i) = 1.0 + i;
  apply_rope(x, 1, 8, inv);
  const double a0 = 2.0, a1 = 2.0 * std::pow(10.0, -0.25);  // position 2
  EXPECT_NEAR(x.at(2, 0), 1 * std::cos(a0) - 5 * std::sin(a0), 1e-15);  // pair (0, 4)
  EXPECT_NEAR(x.at(2, 4), 5 * std::cos(a0) + 1 * std::sin(a0), 1e-15);
  EXPECT_NEAR(x.at(2, 1), 2 * std::cos(a1) - 6 * std::sin(a1), 1e-15);  // pair (1, 5)
  EXPECT_NEAR(x.at(2, 5), 6 * std::cos(a1) + 2 * std::sin(a1), 1e-15);
  for (int i : {2, 3, 6, 7}) EXPECT_EQ(x.at(2, i), 1.0 + i) << i;  // nope dims untouched
}

TEST(KvSources, SharedLayersReadTheLastEarlierLayerOfTheirType) {
  const std::vector<std::string> types = {"sliding_attention", "full_attention", "sliding_attention",
                                          "sliding_attention", "full_attention", "sliding_attention",
                                          "full_attention"};
  auto s = kv_sources(types, 3, "cfg");  // first shared = 4
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(*s, (std::vector<int64_t>{0, 1, 2, 3, 1, 3, 1}));
  auto none = kv_sources(types, 0, "cfg");
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(*none, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  // A shared full layer with no full layer before the shared tail has nothing to read.
  auto bad = kv_sources({"sliding_attention", "sliding_attention", "full_attention"}, 1, "cfg");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("layer 2"), std::string::npos) << bad.status().message();
}

TEST(GemmaNPlan, Gemma4E2BHas15KvProducersFor35Layers) {
  auto p = gemma4_plan(shared_config("gemma-4-E2B-it.json"));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_EQ(p->layers.size(), 35u);
  int producers = 0;
  for (size_t l = 0; l < 35; ++l) {
    const GemmaNLayer& L = p->layers[l];
    const bool full = (l + 1) % 5 == 0;
    EXPECT_EQ(L.sliding, !full) << l;
    EXPECT_EQ(L.head_dim, full ? 512 : 256) << l;
    EXPECT_EQ(L.kv_heads, 1) << l;
    EXPECT_EQ(L.window, full ? 0 : 512) << l;
    EXPECT_FALSE(L.k_eq_v);
    if (l < 15) {
      EXPECT_EQ(L.kv_source, static_cast<int64_t>(l));
      EXPECT_EQ(L.intermediate, 6144);
      ++producers;
    } else {
      EXPECT_EQ(L.kv_source, full ? 14 : 13) << l;  // donors: last full (14) / sliding (13) before 15
      EXPECT_EQ(L.intermediate, 12288) << l;         // use_double_wide_mlp on KV-shared layers
    }
  }
  EXPECT_EQ(producers, 15);
  auto w = layer_windows(shared_config("gemma-4-E2B-it.json"));
  ASSERT_TRUE(w.is_ok());
  EXPECT_EQ((*w)[4], 0);
  EXPECT_EQ((*w)[5], 512);
}

TEST(GemmaNPlan, Gemma3nE2BSharesTheLast10LayersAndSparsifiesTheFirst10) {
  auto p = gemma3n_plan(shared_config("gemma-3n-E2B.json"));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_EQ(p->layers.size(), 30u);
  for (size_t l = 0; l < 30; ++l) {
    const GemmaNLayer& L = p->layers[l];
    const bool full = (l + 1) % 5 == 0;
    EXPECT_EQ(L.head_dim, 256);
    EXPECT_EQ(L.kv_heads, 2);
    EXPECT_EQ(L.window, full ? 0 : 512) << l;
    EXPECT_EQ(L.kv_source, l < 20 ? static_cast<int64_t>(l) : (full ? 19 : 18)) << l;
    EXPECT_EQ(L.sparsity, l < 10 ? 0.95 : 0.0) << l;
    EXPECT_EQ(L.intermediate, 8192);
  }
}

TEST(GemmaNPlan, Gemma4ForcesTheLastLayerToFullAttention) {
  auto root = testgen::tiny_config("gemma4");
  ASSERT_TRUE(root.is_ok());
  (*root)["text_config"]["layer_types"] = {"sliding_attention", "sliding_attention", "full_attention",
                                           "sliding_attention", "sliding_attention", "sliding_attention"};
  auto p = gemma4_plan(config_from(*root));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->layer_types.back(), "full_attention");
  EXPECT_EQ(p->layers.back().head_dim, 64);  // global_head_dim
  EXPECT_EQ(p->layers.back().kv_source, 2);  // the full donor, not the sliding one
  auto w = layer_windows(config_from(*root));
  ASSERT_TRUE(w.is_ok());
  EXPECT_EQ(*w, (std::vector<int64_t>{8, 8, 0, 8, 8, 0}));
}

TEST(GemmaNPlan, Gemma4PerLayerConfigSetsFullLayerGeometryAndKeqvHeads) {
  auto root = testgen::tiny_config("gemma4");
  ASSERT_TRUE(root.is_ok());
  Json& t = (*root)["text_config"];
  // transformers >= 5.15 saves per_layer_config and no global_head_dim.
  t.erase("global_head_dim");
  t["attention_k_eq_v"] = true;
  t["per_layer_config"] = {{"2", {{"head_dim", 48}, {"num_key_value_heads", 1}}},
                           {"5", {{"head_dim", 48}, {"num_key_value_heads", 1}}}};
  auto p = gemma4_plan(config_from(*root));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->layers[2].head_dim, 48);
  EXPECT_EQ(p->layers[2].kv_heads, 1);
  EXPECT_TRUE(p->layers[2].k_eq_v);
  EXPECT_EQ(p->layers[1].head_dim, 32);
  EXPECT_EQ(p->layers[1].kv_heads, 2);
  EXPECT_FALSE(p->layers[1].k_eq_v);
  // Without per_layer_config an absent global_head_dim is Gemma4TextConfig's 512.
  t.erase("per_layer_config");
  auto q = gemma4_plan(config_from(*root));
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  EXPECT_EQ(q->layers[2].head_dim, 512);
  EXPECT_EQ(q->layers[2].kv_heads, 2);  // num_global_key_value_heads null: num_key_value_heads
  t["per_layer_config"] = {{"2", {{"sliding_window", 4}}}};
  auto bad = gemma4_plan(config_from(*root));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("text_config.per_layer_config.2.sliding_window"), std::string::npos)
      << bad.status().message();
}

TEST(WeightlessNorm, DividesEachHeadByItsRms) {
  Mat x(1, 4);
  x.v = {3, 4, 1, -1};
  const Mat y = rms_norm_unit(x, 1e-6, 2);
  EXPECT_DOUBLE_EQ(y.v[0], 3 / std::sqrt(12.5 + 1e-6));
  EXPECT_DOUBLE_EQ(y.v[1], 4 / std::sqrt(12.5 + 1e-6));
  EXPECT_DOUBLE_EQ(y.v[2], 1 / std::sqrt(1 + 1e-6));
  EXPECT_DOUBLE_EQ(y.v[3], -1 / std::sqrt(1 + 1e-6));
}

TEST(GaussianTopk, MultiplierIsFloat32IcdfCastToTheActivationDtype) {
  // Normal(0,1).icdf(0.95) = 1.6448536269514722; float32 1.6448535919189453; bf16 1.6484375.
  EXPECT_EQ(gaussian_sparsity_multiplier(0.95, DType::kF32), 1.6448535919189453);
  EXPECT_EQ(gaussian_sparsity_multiplier(0.95, DType::kBF16), 1.6484375);
  EXPECT_EQ(gaussian_sparsity_multiplier(0.5, DType::kF32), 0.0);
  EXPECT_NEAR(gaussian_sparsity_multiplier(0.025, DType::kF64), -1.959963984540054, 1e-6);
}

TEST(GaussianTopk, KeepsOnlyWhatExceedsMeanPlusStdTimesMultiplier) {
  Mat x(2, 5);
  x.v = {1, 2, 3, 4, 10, -2, -1, 0, 1, 2};
  gaussian_topk(x, 0.5, Numerics{});
  // Row 0: mean 4, population std sqrt(10): cutoff 4 + 0.5 sqrt(10).
  const double cut = 4 + 0.5 * std::sqrt(10.0);
  EXPECT_EQ(x.at(0, 0), 0.0);
  EXPECT_EQ(x.at(0, 3), 0.0);
  EXPECT_NEAR(x.at(0, 4), 10 - cut, 1e-15);
  // Row 1: mean 0, std sqrt(2): cutoff 0.7071...; only 1 and 2 survive, shifted down.
  EXPECT_EQ(x.at(1, 2), 0.0);
  EXPECT_NEAR(x.at(1, 3), 1 - 0.5 * std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(x.at(1, 4), 2 - 0.5 * std::sqrt(2.0), 1e-15);
}

// ---- Whole forward passes. ----

// Expected values from an independent numpy float64 transcription of transformers'
// Gemma4ForConditionalGeneration / Gemma3nForConditionalGeneration text forward (written from
// modeling_gemma4.py / modeling_gemma3n.py, not from this code), on the testgen checkpoints
// below (testgen's bytes are a pure function of seed, names and config). It agreed with the
// reference to <= 1e-13 on every logit, also with k_eq_v, no PLE, untied head, attention
// biases, no KV sharing, other ropes, bf16 weights, 1 AltUp stream, altup_active_idx 1,
// coefficient clipping, other sparsity patterns and vision/audio ids.
TEST(Gemma4Forward, MatchesNumpyTranscriptionOfTransformers) {
  Model m = generate("gemma4", 7);
  const std::vector<double> l = logits(m, kTokens);
  ASSERT_EQ(l.size(), kTokens.size() * 384);
  auto at = [&](int t, int v) { return l[static_cast<size_t>(t) * 384 + v]; };
  EXPECT_NEAR(at(0, 0), -6.473799741455534, 1e-10);
  EXPECT_NEAR(at(0, 383), -7.210403374682512, 1e-10);
  EXPECT_NEAR(at(7, 5), 0.25110533160196946, 1e-10);  // token 378: image placeholder -> pad
  EXPECT_NEAR(at(13, 0), -11.683416714290168, 1e-10);
  EXPECT_NEAR(at(13, 100), 2.316190386255256, 1e-10);
  EXPECT_NEAR(at(13, 383), -0.3477188475467873, 1e-10);
  const std::vector<double> one = logits(m, {42});
  ASSERT_EQ(one.size(), 384u);
  EXPECT_NEAR(one[0], 5.122689448552997, 1e-10);
  EXPECT_NEAR(one[1], -7.864504819689321, 1e-10);
  EXPECT_NEAR(one[2], -4.460093058885664, 1e-10);
}

TEST(Gemma3nForward, MatchesNumpyTranscriptionOfTransformers) {
  Model m = generate("gemma3n", 11);
  const std::vector<double> l = logits(m, kTokens3n);
  ASSERT_EQ(l.size(), kTokens3n.size() * 320);
  auto at = [&](int t, int v) { return l[static_cast<size_t>(t) * 320 + v]; };
  EXPECT_NEAR(at(0, 0), -0.6497427258041343, 1e-10);
  EXPECT_NEAR(at(0, 319), 0.289468569949469, 1e-10);
  EXPECT_NEAR(at(6, 7), -1.544925492476776, 1e-10);
  EXPECT_NEAR(at(13, 0), 6.150771418090672, 1e-10);
  EXPECT_NEAR(at(13, 100), -14.45190405110773, 1e-10);
  EXPECT_NEAR(at(13, 319), -5.727402026205897, 1e-10);
  const std::vector<double> one = logits(m, {42});
  ASSERT_EQ(one.size(), 320u);
  EXPECT_NEAR(one[0], 11.435695785452484, 1e-10);
  EXPECT_NEAR(one[1], 8.760490861941708, 1e-10);
  EXPECT_NEAR(one[2], 9.933603213779094, 1e-10);
}

TEST(GemmaNForward, RowsDependOnlyOnTheirPrefix) {
  for (const char* family : {"gemma4", "gemma3n"}) {
    Model m = generate(family, 3, {{"sliding_window", 3}});
    const std::vector<int32_t> toks = {4, 8, 15, 16, 23, 42, 7, 99, 1, 2};
    const std::vector<double> full = logits(m, toks);
    const size_t V = full.size() / toks.size();
    for (size_t n : {1u, 4u, 9u}) {
      const std::vector<double> prefix = logits(m, std::vector<int32_t>(toks.begin(), toks.begin() + n));
      ASSERT_EQ(prefix.size(), n * V);
      EXPECT_LT(max_abs_diff(prefix, std::vector<double>(full.begin(), full.begin() + n * V)), 1e-12)
          << family << " n=" << n;
    }
    // And the last row does depend on earlier tokens (the check above can fail).
    std::vector<int32_t> other = toks;
    other[5] = 6;
    const std::vector<double> changed = logits(m, other);
    EXPECT_GT(std::abs(changed.back() - full.back()), 1e-6) << family;
  }
}

// A layer whose attention, MLP and per-layer outputs are zero and whose layer_scalar is 1
// leaves the residual stream as it is. Make the donor (layer 0) and the layer after it such
// layers: the KV-shared layer 2 then sees the donor's input, so reading the donor's k/v must
// equal recomputing them with the donor's input_layernorm, k_proj, k_norm and v_proj.
TEST(Gemma4Forward, KvSharedLayerEqualsRecomputingTheDonorsKv) {
  const Json over = {{"num_hidden_layers", 3},
                     {"layer_types", {"full_attention", "sliding_attention", "full_attention"}},
                     {"num_kv_shared_layers", 1},
                     {"use_double_wide_mlp", false}};
  Model shared = generate("gemma4", 5, over);
  Tensors t = read_tensors(shared);
  const std::string p = "model.language_model.layers.";
  for (const char* l : {"0.", "1."}) {
    t.fill(p + l + "self_attn.o_proj.weight", 0);
    t.fill(p + l + "mlp.down_proj.weight", 0);
    t.fill(p + l + "per_layer_projection.weight", 0);
    t.fill(p + l + "layer_scalar", 1);
  }
  t.copy(p + "0.input_layernorm.weight", p + "2.input_layernorm.weight");
  write_tensors(shared, t);

  Model own = generate("gemma4", 5, over);
  Json cfg = read_config(own);
  text_of(cfg)["num_kv_shared_layers"] = 0;
  write_config(own, cfg);
  for (const char* n : {"self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.k_norm.weight"})
    t.copy(p + "0." + n, p + "2." + n);
  write_tensors(own, t);
  const std::vector<double> a = logits(shared, kTokens);
  EXPECT_LT(max_abs_diff(a, logits(own, kTokens)), 1e-12);

  // Layer 2 computing different k/v of its own changes the result (the check can fail).
  t[p + "2.self_attn.k_norm.weight"][0] += 0.5f;
  write_tensors(own, t);
  EXPECT_GT(max_abs_diff(a, logits(own, kTokens)), 1e-6);
}

TEST(Gemma4Forward, KeqvIsAValueProjectionEqualToTheKeyProjectionBeforeKNorm) {
  // k_eq_v on full layers with num_global_key_value_heads = num_key_value_heads, so the
  // tensors are those of a plain model without the full layer's v_proj.
  Model keqv = generate("gemma4", 9, {{"attention_k_eq_v", true}, {"num_global_key_value_heads", 2}});
  Tensors t = read_tensors(keqv);
  const std::string v = "model.language_model.layers.2.self_attn.v_proj.weight";  // layer 5 is KV-shared
  ASSERT_EQ(t.t.count(v), 0u);
  const std::vector<double> a = logits(keqv, kTokens);
  // The plain model with v_proj := k_proj computes v_norm(k_proj x): the same values, whereas
  // taking v after k_norm (random, non-uniform weights) or RoPE would not be.
  Model plain = generate("gemma4", 9);
  t.copy("model.language_model.layers.2.self_attn.k_proj.weight", v);
  write_tensors(plain, t);
  EXPECT_LT(max_abs_diff(a, logits(plain, kTokens)), 1e-12);
  t[v][0] += 0.5f;  // and the values matter
  write_tensors(plain, t);
  EXPECT_GT(max_abs_diff(a, logits(plain, kTokens)), 1e-6);
}

TEST(Gemma4Forward, ZeroPerLayerProjectionIsNoPerLayerInputs) {
  Model with = generate("gemma4", 12);
  Tensors t = read_tensors(with);
  for (int l = 0; l < 6; ++l)
    t.fill("model.language_model.layers." + std::to_string(l) + ".per_layer_projection.weight", 0);
  write_tensors(with, t);
  Model without = generate("gemma4", 12, {{"hidden_size_per_layer_input", 0}});
  Tensors u = read_tensors(without);
  for (auto& [name, tv] : u.t) tv = t.t.at(name);  // same weights for every tensor both have
  write_tensors(without, u);
  EXPECT_LT(max_abs_diff(logits(with, kTokens), logits(without, kTokens)), 1e-12);
}

TEST(Gemma4Forward, LayerScalarScalesTheWholeResidualStreamAfterThePerLayerBlock) {
  // With rms_norm_eps ~ 0 the final norm is scale invariant: scaling the last layer's output
  // (residual included) cannot change the logits. Scaling only its branch outputs would.
  Model m = generate("gemma4", 13, {{"rms_norm_eps", 1e-30}});
  const std::vector<double> a = logits(m, kTokens);
  Tensors t = read_tensors(m);
  t["model.language_model.layers.5.layer_scalar"][0] *= 3.0f;
  write_tensors(m, t);
  EXPECT_LT(max_abs_diff(a, logits(m, kTokens)), 1e-11);
  t["model.language_model.layers.4.layer_scalar"][0] *= 3.0f;  // an inner layer's does matter
  write_tensors(m, t);
  EXPECT_GT(max_abs_diff(a, logits(m, kTokens)), 1e-6);
}

TEST(Gemma4Forward, LastLayerIsFullAttentionWhateverLayerTypesSay) {
  Model m = generate("gemma4", 14, {{"sliding_window", 3}});
  const std::vector<double> a = logits(m, kTokens);
  Json cfg = read_config(m);
  text_of(cfg)["layer_types"].back() = "sliding_attention";
  write_config(m, cfg);
  EXPECT_LT(max_abs_diff(a, logits(m, kTokens)), 1e-13);
}

TEST(Gemma4Forward, WrapperEmbedsPlaceholdersAsPadTextModelAsThemselves) {
  Model m = generate("gemma4", 15);
  std::vector<int32_t> with = {7, 378, 9, 382, 379}, pad = {7, 0, 9, 0, 0};
  const std::vector<double> a = logits(m, with);
  EXPECT_LT(max_abs_diff(a, logits(m, pad)), 1e-13);
  // Gemma4ForCausalLM: the same weights under "model.", text config at the top level.
  Tensors t = read_tensors(m);
  Tensors u;
  for (auto& [name, tv] : t.t) {
    const std::string from = "model.language_model.";
    u.t[name.rfind(from, 0) == 0 ? "model." + name.substr(from.size()) : name] = tv;
  }
  Json cfg = read_config(m);
  Json text = cfg["text_config"];
  text["model_type"] = "gemma4_text";
  write_config(m, text);
  write_tensors(m, u);
  EXPECT_LT(max_abs_diff(a, logits(m, pad)), 1e-13);  // the same model
  EXPECT_GT(max_abs_diff(a, logits(m, with)), 1e-6);  // without the placeholder mapping
}

// Gemma-4 MoE layers (docs/moe_families.md §1.2). With every expert's down_proj zero and
// post_feedforward_layernorm_1 all ones, the expert branch adds nothing and the dense branch is
// normed twice (rms(rms(m)) · w = rms(m) · w up to eps): the model equals the same checkpoint
// read with enable_moe_block false. Each router factor (scale, per_expert_scale) and each new
// norm moves the logits, so the tests that compare programs to this reference see them.
TEST(Gemma4Forward, MoeLayerWiringAndEveryFactorMatters) {
  const Json moe = {{"enable_moe_block", true}, {"num_experts", 8}, {"top_k_experts", 2}, {"moe_intermediate_size", 16},
                    {"hidden_size_per_layer_input", 0}, {"num_kv_shared_layers", 0}};
  Model m = generate("gemma4", 33, moe);
  const std::vector<int32_t> ids = {5, 17, 3, 99, 42, 7, 250, 11, 64, 8, 200, 31};
  const std::vector<double> base = logits(m, ids);
  ASSERT_FALSE(base.empty());
  double scale = 0;
  for (double v : base) scale = std::max(scale, std::abs(v));
  const Tensors original = read_tensors(m);
  const std::string l0 = "model.language_model.layers.0.";
  for (const char* name : {"router.scale", "router.per_expert_scale", "post_feedforward_layernorm_1.weight",
                           "pre_feedforward_layernorm_2.weight", "post_feedforward_layernorm_2.weight"}) {
    Tensors t = original;
    t.fill(l0 + name, 1.0f);
    write_tensors(m, t);
    EXPECT_GT(max_abs_diff(base, logits(m, ids)), 1e-3 * scale) << name;
  }
  Tensors t = original;
  const Json cfg = read_config(m);
  for (int l = 0; l < cfg["text_config"]["num_hidden_layers"].get<int>(); ++l) {
    const std::string p = "model.language_model.layers." + std::to_string(l) + ".";
    t.fill(p + "experts.down_proj", 0.0f);
    t.fill(p + "post_feedforward_layernorm_1.weight", 1.0f);
  }
  write_tensors(m, t);
  const std::vector<double> no_experts = logits(m, ids);
  EXPECT_GT(max_abs_diff(base, no_experts), 1e-3 * scale);
  Json dense = cfg;
  dense["text_config"]["enable_moe_block"] = false;
  write_config(m, dense);
  EXPECT_LT(max_abs_diff(no_experts, logits(m, ids)), 1e-5 * scale);
}

TEST(Gemma4Forward, RefusesWhatItDoesNotImplementNamingTheField) {
  for (auto [key, value] : {std::pair{"use_bidirectional_attention", Json("all")}}) {
    Model m = generate("gemma4", 16);
    Json cfg = read_config(m);
    cfg["text_config"][key] = value;
    write_config(m, cfg);
    auto r = run(m, {1, 2});
    ASSERT_FALSE(r.is_ok()) << key;
    EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
    EXPECT_NE(r.status().message().find(std::string("text_config.") + key), std::string::npos)
        << r.status().message();
  }
  Model m = generate("gemma4", 16, {{"vocab_size_per_layer_input", 100}});
  auto r = run(m, {1, 150});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("vocab_size_per_layer_input"), std::string::npos) << r.status().message();
}

// Gemma3n: a sparse layer whose gate rows are all equal has gate values equal across the
// intermediate dim, so std = 0 and the cutoff is their mean: every unit is cut to 0 and the
// MLP outputs 0, as with down_proj = 0 and no sparsity. Without the cutoff it would not.
TEST(Gemma3nForward, SparsityCutoffIsPerTokenMeanPlusStdOverTheIntermediateDim) {
  const Json over = {{"activation_sparsity_pattern", {0.95, 0.0, 0.0, 0.0, 0.0, 0.0}}};
  Model sparse = generate("gemma3n", 21, over);
  Tensors t = read_tensors(sparse);
  const std::string g = "model.language_model.layers.0.mlp.gate_proj.weight";
  std::vector<float>& gw = t[g];
  const int64_t I = t.t.at(g).first[0], H = t.t.at(g).first[1];
  for (int64_t r = 1; r < I; ++r) std::copy(gw.begin(), gw.begin() + H, gw.begin() + r * H);
  write_tensors(sparse, t);
  const std::vector<double> a = logits(sparse, kTokens3n);

  Model dense = generate("gemma3n", 21, {{"activation_sparsity_pattern", {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}});
  write_tensors(dense, t);
  EXPECT_GT(max_abs_diff(a, logits(dense, kTokens3n)), 1e-6);  // the cut matters
  t.fill("model.language_model.layers.0.mlp.down_proj.weight", 0);
  write_tensors(dense, t);
  EXPECT_LT(max_abs_diff(a, logits(dense, kTokens3n)), 1e-12);
}

TEST(Gemma3nForward, SparsityPatternMovesOnlyTheLayersItNames) {
  Model m = generate("gemma3n", 22, {{"activation_sparsity_pattern", {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}});
  const std::vector<double> dense = logits(m, kTokens3n);
  Json cfg = read_config(m);
  text_of(cfg)["activation_sparsity_pattern"] = {0.95, 0.95, 0.0, 0.0, 0.0, 0.0};
  write_config(m, cfg);
  EXPECT_GT(max_abs_diff(dense, logits(m, kTokens3n)), 1e-3);
  // Sparsity on a layer whose MLP is zeroed changes nothing.
  Tensors t = read_tensors(m);
  t.fill("model.language_model.layers.0.mlp.down_proj.weight", 0);
  t.fill("model.language_model.layers.1.mlp.down_proj.weight", 0);
  write_tensors(m, t);
  const std::vector<double> sparse_zeroed = logits(m, kTokens3n);
  text_of(cfg)["activation_sparsity_pattern"] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  write_config(m, cfg);
  EXPECT_LT(max_abs_diff(sparse_zeroed, logits(m, kTokens3n)), 1e-13);
}

TEST(Gemma3nForward, KvSharedLayersIgnoreTheirOwnKvTensorsInHubCheckpoints) {
  Model plain = generate("gemma3n", 23);
  Model hub = generate("gemma3n", 23, Json::object(), /*hub_layout=*/true);
  EXPECT_GT(read_tensors(hub).t.count("model.language_model.layers.5.self_attn.k_proj.weight"), 0u);
  EXPECT_EQ(logits(plain, kTokens3n), logits(hub, kTokens3n));
}

TEST(Gemma3nForward, WrapperLooksIdsPastThePerLayerVocabUpAsZero) {
  // Vision and audio vocabularies moved past the text vocabulary, so ids 256..319 are plain
  // text ids beyond vocab_size_per_layer_input (256).
  Model m = generate("gemma3n", 24);
  Json cfg = read_config(m);
  cfg["vision_config"]["vocab_offset"] = 1000;
  cfg["audio_config"]["vocab_offset"] = 1100;
  write_config(m, cfg);
  Tensors t = read_tensors(m);
  std::vector<float>& e = t["model.language_model.embed_tokens.weight"];
  const int64_t H = t.t.at("model.language_model.embed_tokens.weight").first[1];
  std::copy(e.begin(), e.begin() + H, e.begin() + 300 * H);  // row 300 := row 0
  write_tensors(m, t);
  const std::vector<double> zero = logits(m, {5, 0, 7});
  EXPECT_LT(max_abs_diff(logits(m, {5, 300, 7}), zero), 1e-13);
  // Gemma3nForCausalLM has no such mapping: id 300 indexes past the per-layer table.
  Json text = cfg["text_config"];
  text["model_type"] = "gemma3n_text";
  write_config(m, text);
  Tensors u;
  for (auto& [name, tv] : t.t) {
    const std::string from = "model.language_model.";
    u.t[name.rfind(from, 0) == 0 ? "model." + name.substr(from.size()) : name] = tv;
  }
  write_tensors(m, u);
  EXPECT_LT(max_abs_diff(logits(m, {5, 0, 7}), zero), 1e-13);  // the same model otherwise
  auto r = run(m, {5, 300, 7});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("vocab_size_per_layer_input"), std::string::npos) << r.status().message();
}

TEST(Gemma3nForward, VisionIdsWithoutTheVisionEmbedderUseTheTextTable) {
  // testgen writes the language model only: a checkpoint saved text-only embeds the
  // vision/audio ids with the text table (Gemma3nForCausalLM), as the exporter does (the
  // program's agreement on such ids is checked by gemma3n_e2e_test and quant_test).
  Model m = generate("gemma3n", 25);
  auto r = run(m, {5, 260});  // 260: vision_config.vocab_offset 256
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  for (double v : *r) ASSERT_TRUE(std::isfinite(v));
}

// The acceptance question "how far does float32 arithmetic move Gemma-3n's logits": the same
// reference with every activation rounded to float32. It must move them (else the option does
// nothing) and stay within what float32 rounding can explain on these tiny models.
TEST(Gemma3nForward, Float32ActivationsMoveLogitsByFloat32RoundingOnly) {
  for (const char* family : {"gemma3n", "gemma4"}) {
    Model m = generate(family, 26);
    const std::vector<int32_t>& toks = std::string(family) == "gemma3n" ? kTokens3n : kTokens;
    const std::vector<double> f64 = logits(m, toks);
    const std::vector<double> f32 = logits(m, toks, f32_activations());
    const double d = max_abs_diff(f64, f32);
    EXPECT_GT(d, 1e-7) << family;
    EXPECT_LT(d, 1e-3) << family;
    std::printf("[   INFO   ] %s: max |logit(float32 activations) - logit(float64)| = %.3g\n", family, d);
  }
  Model llama = generate("llama", 1);
  auto r = run(llama, {1, 2}, f32_activations());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace og::reference
