// Tests of the tiny random-weight checkpoint generator: every family is generated, read back
// with the project's own config and safetensors readers, and checked against tensor counts,
// names and shapes computed here from the config that was read back (not from the generator).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "base/half.h"
#include "export/family.h"
#include "hf/model_config.h"
#include "reference/families/families.h"
#include "reference/reference.h"
#include "hf/safetensors.h"
#include "testgen/random_fill.h"
#include "testgen/testgen.h"

namespace og::testgen {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Shape = std::vector<int64_t>;

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("og_testgen_" + std::to_string(::getpid()) + "_" + tag);
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  fs::path path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Loaded {
  hf::ModelConfig config;
  hf::Checkpoint checkpoint;
};

// Generates and reads back; fails the test on any error.
Loaded generate_and_load(const GenOptions& options) {
  Status s = generate_checkpoint(options);
  EXPECT_TRUE(s.is_ok()) << s.message();
  auto config = exporter::load_model_config(options.out_dir + "/config.json");
  EXPECT_TRUE(config.is_ok()) << config.status().message();
  auto checkpoint = hf::Checkpoint::open(options.out_dir);
  EXPECT_TRUE(checkpoint.is_ok()) << checkpoint.status().message();
  return {std::move(config).value(), std::move(checkpoint).value()};
}

Shape shape_of(const hf::Checkpoint& ckpt, const std::string& name) {
  const hf::TensorView* t = ckpt.find(name);
  if (t == nullptr) return {};
  return t->shape;
}

int64_t text_int(const hf::ModelConfig& c, const char* key) { return c.text.at(key).get<int64_t>(); }

// The generators of the families with multi-head latent attention.
bool mla_family(const std::string& family) {
  return family == "deepseek_v3" || family == "moonlight" || family == "kimi_k2" || family.starts_with("deepseek_v2") ||
         family.starts_with("glm4_moe_lite");
}

// Layer l is kv-shared when l >= L - num_kv_shared_layers.
bool is_shared(const hf::ModelConfig& c, int64_t l) {
  return c.num_kv_shared_layers > 0 && l >= c.num_hidden_layers - c.num_kv_shared_layers;
}

// Tensor count implied by the config, per family, counted from the transformers modules.
int64_t expected_tensor_count(const std::string& family, const hf::ModelConfig& c, bool hub_layout) {
  const int64_t L = c.num_hidden_layers;
  const int64_t head = c.tie_word_embeddings ? 0 : 1;
  if (family == "llama" || family == "smollm" || family == "mistral" || family == "smollm3" || family == "granite")
    return 1 + L * (4 + 3 + 2) + 1 + head;  // q k v o, gate up down, 2 norms
  if (family == "qwen2") return 1 + L * (4 + 3 + 3 + 2) + 1 + head;  // + q/k/v biases
  if (family == "seed_oss")  // + q/k/v biases (+ o_proj's with attention_out_bias)
    return 1 + L * (4 + 3 + 3 + (c.text.value("attention_out_bias", false) ? 1 : 0) + 2) + 1 + head;
  if (family == "qwen3") return 1 + L * (4 + 2 + 3 + 2) + 1 + head;  // + q_norm, k_norm
  if (family == "phi3") return 1 + L * (2 + 2 + 2) + 1 + head;       // o, qkv, gate_up, down
  if (family == "qwen3_moe") {  // qwen3's attention; dense layers gate up down, sparse router + 3 per expert
    const int64_t dense = static_cast<int64_t>(c.text.at("mlp_only_layers").size());
    return 1 + L * (4 + 2 + 2) + dense * 3 + (L - dense) * (1 + 3 * text_int(c, "num_experts")) + 1 + head;
  }
  if (family == "qwen2_moe") {  // q k v o + q/k/v biases; sparse: router, 3 per expert, shared expert and its gate
    const int64_t dense = static_cast<int64_t>(c.text.at("mlp_only_layers").size());
    return 1 + L * (4 + 3 + 2) + dense * 3 + (L - dense) * (1 + 3 * text_int(c, "num_experts") + 3 + 1) + 1 + head;
  }
  if (family == "exaone4" || family == "exaone4_hybrid") return 1 + L * (4 + 2 + 3 + 2) + 1 + head;  // as olmo2
  if (family == "olmo2" || family == "olmo3") return 1 + L * (4 + 2 + 3 + 2) + 1 + head;  // q k v o, q/k norms, gate up down, 2 output norms
  if (family == "olmoe")  // q k v o (+ 4 biases), q/k norms, router + 3 per expert on every layer, 2 norms
    return 1 + L * (4 + (c.text.value("attention_bias", false) ? 4 : 0) + 2 + 1 + 3 * text_int(c, "num_experts") + 2) + 1 + head;
  if (family == "granitemoe" || family == "granitemoeshared")  // q k v o (+ 4 biases), router and the two fused
    // expert tensors (+ the shared MLP's two), 2 norms
    return 1 + L * (4 + (c.text.value("attention_bias", false) ? 4 : 0) + 3 +
                    (c.text.value("shared_intermediate_size", 0) > 0 ? 2 : 0) + 2) + 1 + head;
  if (family == "dots1") {  // q k v o (+ 4 biases), q/k norms, 2 norms; dense: gate up down; sparse: router, its
    // bias, 3 per expert, the shared experts' 3
    const int64_t dense = text_int(c, "first_k_dense_replace");
    const int64_t attn = 4 + (c.text.value("attention_bias", false) ? 4 : 0) + 2 + 2;
    const int64_t sparse = 2 + 3 * text_int(c, "n_routed_experts") + (text_int(c, "n_shared_experts") > 0 ? 3 : 0);
    return 1 + L * attn + dense * 3 + (L - dense) * sparse + 1 + head;
  }
  if (family == "glm4_moe") {  // q k v o (+ 3 biases, + q/k norms), 2 norms; dense: gate up down; sparse: router,
    // its choice bias, 3 per expert, the shared expert's 3; the prediction layers: sparse ones + 4 extras
    const int64_t mtp = c.text.value("num_nextn_predict_layers", 0), dense = text_int(c, "first_k_dense_replace");
    const int64_t attn = 4 + (c.text.value("attention_bias", false) ? 3 : 0) + (c.text.value("use_qk_norm", false) ? 2 : 0) + 2;
    const int64_t sparse = 2 + 3 * text_int(c, "n_routed_experts") + (c.text.value("n_shared_experts", 1) > 0 ? 3 : 0);
    return 1 + (L + mtp) * attn + dense * 3 + (L + mtp - dense) * sparse + mtp * 4 + 1 + head;
  }
  if (family == "ernie4_5_moe") {  // q k v o, 2 norms; dense: gate up down; sparse: router, its bias, 3 per expert,
    // the shared experts' 3; the prediction weights (5 a layer here)
    int64_t sparse = 0;
    const int64_t interval = c.text.value("moe_layer_interval", 1), start = c.text.value("moe_layer_start_index", 1);
    int64_t end = c.text.value("moe_layer_end_index", -1);
    if (end == -1) end = L - 1;
    for (int64_t l = 0; l < L; ++l) sparse += (l + 1) % interval == 0 && l >= start && l <= end;
    const int64_t block = 2 + 3 * text_int(c, "moe_num_experts") + (c.text.value("moe_num_shared_experts", 2) > 0 ? 3 : 0);
    return 1 + L * (4 + 2) + (L - sparse) * 3 + sparse * block + 5 * c.text.value("num_nextn_predict_layers", 0) + 1 + head;
  }
  if (mla_family(family)) {  // the latent attention's 5 (7 with a q latent), 2 norms;
    // dense: gate up down; sparse: router, its bias (not DeepSeek-V2's), 3 per expert, the shared
    // experts' 3; prediction layers: + 4. GLM-4.7-Flash's dense layers: mlp_layer_types', or layer 0.
    const int64_t mtp = c.text.value("num_nextn_predict_layers", 0);
    int64_t dense = 0;
    if (family.starts_with("glm4_moe_lite"))
      dense = c.text.contains("mlp_layer_types") ? std::count(c.text["mlp_layer_types"].begin(), c.text["mlp_layer_types"].end(), "dense") : 1;
    else
      dense = text_int(c, "first_k_dense_replace");
    const int64_t attn = (c.text.at("q_lora_rank").is_null() ? 5 : 7) + 2;
    const int64_t sparse = (family.starts_with("deepseek_v2") ? 1 : 2) + 3 * text_int(c, "n_routed_experts") + 3;
    return 1 + (L + mtp) * attn + dense * 3 + (L + mtp - dense) * sparse + mtp * 4 + 1 + head;
  }
  if (family == "minimax_m2")  // q k v o, q/k norms, router + its bias + 3 per expert on every layer, 2 norms
    return 1 + L * (4 + 2 + 2 + 3 * text_int(c, "num_local_experts") + 2) + 1 + head;
  if (family == "mixtral")  // q k v o, router + 3 per expert on every layer, 2 norms
    return 1 + L * (4 + 1 + 3 * text_int(c, "num_local_experts") + 2) + 1 + head;
  if (family == "gpt_oss")  // q k v o + biases, sinks, router + bias, MXFP4 experts (blocks, scales, bias) x 2, norms
    return 1 + L * (8 + 1 + 2 + 6 + 2) + 1 + head;
  if (family == "gemma") return 1 + L * (4 + 3 + 2) + 1 + head;  // q k v o, gate up down, input and post-attention norms
  if (family == "gemma2") return 1 + L * (4 + 3 + 4) + 1 + head;
  if (family == "gemma3_text" || family == "gemma3") return 1 + L * (4 + 2 + 3 + 4) + 1 + head;
  if (family == "gemma3n") {
    const int64_t altup = text_int(c, "altup_num_inputs");
    int64_t n = 1 + 1 + 3 + 2 * (altup - 1) + head;  // embed, norm, per-layer model tensors, altup projections
    for (int64_t l = 0; l < L; ++l) {
      const bool kv = !is_shared(c, l) || hub_layout;
      n += 2 + 1 + (kv ? 3 : 0) + 3 + 4 + 5 + 3 + 3;  // q o, q_norm, k v k_norm, mlp, norms, altup, laurel, per-layer
    }
    return n;
  }
  if (family == "gemma4") {
    int64_t n = 1 + 1 + 3 + head;
    for (int64_t l = 0; l < L; ++l) n += 3 + (is_shared(c, l) ? 0 : 3) + 3 + 4 + 1 + 3;
    return n;
  }
  auto flag = [&](const char* key, bool absent) { return c.text.value(key, absent); };
  if (family == "starcoder2") {  // q k v o, c_fc c_proj (+ a bias each iff use_bias); 2 LayerNorms (w, b)
    const int64_t per = flag("use_bias", true) ? 2 : 1;
    return 1 + L * (4 * per + 2 * per + 4) + 2 + head;
  }
  if (family == "nemotron") {  // q k v o (+ 4 biases), up down (+ 2 biases), 2 LayerNorm1P (w, b)
    return 1 + L * (4 + (flag("attention_bias", false) ? 4 : 0) + 2 + (flag("mlp_bias", false) ? 2 : 0) + 4) + 2 + head;
  }
  if (family == "hunyuan_v1_dense")  // q k v o (+ 4 biases), query/key layernorms, gate up down, 2 norms
    return 1 + L * (4 + (flag("attention_bias", false) ? 4 : 0) + 2 + 3 + 2) + 1 + head;
  if (family == "apertus")  // q k v o (+ 4 biases), q/k norms, up down, 4 xIELU scalars, 2 norms
    return 1 + L * (4 + (flag("attention_bias", false) ? 4 : 0) + 2 + 2 + 4 + 2) + 1 + head;
  if (family == "arcee")  // q k v o (+ 4 biases), up down (+ 2 biases), 2 norms
    return 1 + L * (4 + (flag("attention_bias", false) ? 4 : 0) + 2 + (flag("mlp_bias", false) ? 2 : 0) + 2) + 1 + head;
  if (family == "phi")  // q k v dense fc1 fc2, all biased; input LayerNorm (+ q/k LayerNorms); biased head
    return 1 + L * (12 + 2 + (flag("qk_layernorm", false) ? 4 : 0)) + 2 + 2 * head;
  if (family == "stablelm")  // q k v o (+ q/k/v biases), gate up down, 2 LayerNorms (1 when parallel) (+ a weight per q and k head)
    return 1 + L * (4 + (flag("use_qkv_bias", false) ? 3 : 0) + 3 + (flag("use_parallel_residual", false) ? 2 : 4) +
                    (flag("qk_layernorm", false) ? c.num_attention_heads + c.num_key_value_heads : 0)) + 2 + head;
  if (family == "falcon") {  // qkv dense up down (+ a bias each), the block's LayerNorms (w + b); ln_f w + b
    const bool new_arch = flag("new_decoder_architecture", false), parallel = flag("parallel_attn", true);
    const int64_t norms = new_arch || !parallel ? 2 : 1;
    return 1 + L * (4 + (flag("bias", false) ? 4 : 0) + 2 * norms) + 2 + head;
  }
  if (family == "gpt2" || family == "gpt_bigcode")  // wte, wpe; ln_1 ln_2, c_attn, attn.c_proj, c_fc, mlp.c_proj (all w + b); ln_f w + b
    return 2 + L * (4 + 4 + 4) + 2 + head;
  if (family == "gpt_neox")  // 2 LayerNorms, query_key_value, dense, 2 MLP projections (all w + b), final norm w + b
    return 1 + L * (4 + (flag("attention_bias", true) ? 4 : 2) + 4) + 2 + head;
  if (family == "ernie4_5")  // q k v o, gate up down (+ a bias each iff use_bias), 2 norms
    return 1 + L * ((flag("use_bias", false) ? 14 : 7) + 2) + 1 + head;
  if (family == "glm" || family == "glm4")  // q k v o (+ q/k/v biases), gate_up down, 2 norms (4 for GLM-4-0414)
    return 1 + L * (4 + (flag("attention_bias", true) ? 3 : 0) + 2 + (family == "glm4" ? 4 : 2)) + 1 + head;
  if (family == "cohere" || family == "cohere2")  // q k v o (+ 4 biases), gate up down, one weight-only LayerNorm
    return 1 + L * (4 + (flag("attention_bias", false) ? 4 : 0) + 3 + 1 + (flag("use_qk_norm", false) ? 2 : 0)) + 1 + head;
  ADD_FAILURE() << "no expectation for " << family;
  return -1;
}

// The prefix of the decoder's tensors.
std::string text_prefix(const std::string& family, bool hub_layout) {
  if (family == "gemma3") return hub_layout ? "language_model.model." : "model.language_model.";
  if (family == "gemma3n" || family == "gemma4") return "model.language_model.";
  return "model.";
}

const std::vector<std::string>& families() {
  static const std::vector<std::string> f = generator_families();
  return f;
}

// The three registries hold one another together (no literal list): every model_type the
// exporter reads is read by a reference family of the same name and written by a generator
// (at the root, or as a wrapper's text_config),
// neither of those knows a model_type the exporter does not, and each family is three sibling
// files of its name (export/, reference/ and testgen/ families/).
TEST(FamilyRegistries, EveryExportedFamilyHasAReferenceAndAGenerator) {
  std::map<std::string, std::string> exported, referenced;  // model_type -> family name
  for (const exporter::Family* f : exporter::all_families())
    for (const exporter::ModelType& t : f->model_types) EXPECT_TRUE(exported.emplace(t.name, f->name).second) << t.name;
  for (const reference::Family* f : reference::all_families())
    for (const reference::ModelType& t : f->model_types)
      EXPECT_TRUE(referenced.emplace(std::string(t.name), std::string(f->name)).second) << t.name;
  EXPECT_EQ(referenced, exported) << "the reference and the exporter read different model_types or name them apart";
  std::set<std::string> generated, families;
  for (const std::string& name : generator_families()) {
    auto tiny = tiny_config(name);
    ASSERT_TRUE(tiny.is_ok()) << name;
    const std::string type = (*tiny)["model_type"];
    ASSERT_TRUE(exported.count(type)) << name << " writes model_type " << type << ", which the exporter does not read";
    generated.insert(type);
    // A wrapper's text model carries its own model_type (e.g. gemma3n_text), which the
    // exporter also reads at the root; the generator writes it under text_config.
    if (tiny->contains("text_config")) generated.insert((*tiny)["text_config"].value("model_type", type));
  }
  for (const auto& [type, family] : exported) {
    EXPECT_TRUE(generated.count(type)) << "no generator writes model_type " << type;
    families.insert(family);
  }
  const fs::path src = fs::path(OG_TEST_DATA) / ".." / ".." / "src";
  for (const std::string& family : families)
    for (const char* side : {"export", "reference", "testgen"})
      EXPECT_TRUE(fs::exists(src / side / "families" / (family + ".cc"))) << side << "/families/" << family << ".cc";
}

class EveryFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFamily, ReadsBackWithTheTensorsTheConfigImplies) {
  const std::string family = GetParam();
  TempDir dir("shape_" + family);
  Loaded m = generate_and_load({.family = family, .out_dir = dir.str(), .seed = 7});
  const hf::ModelConfig& c = m.config;
  const std::string p = text_prefix(family, false);

  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count(family, c, false));
  if (family == "gpt_neox") {  // its own names; query_key_value rows per head (q, k, v)
    const int64_t H = c.hidden_size;
    EXPECT_EQ(shape_of(m.checkpoint, "gpt_neox.embed_in.weight"), (Shape{c.vocab_size, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "gpt_neox.layers.0.attention.query_key_value.weight"), (Shape{3 * H, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "gpt_neox.layers.0.attention.dense.bias"), (Shape{H}));
    EXPECT_EQ(shape_of(m.checkpoint, "gpt_neox.layers.0.mlp.dense_h_to_4h.weight"), (Shape{c.intermediate_size[0], H}));
    EXPECT_EQ(shape_of(m.checkpoint, "gpt_neox.final_layer_norm.bias"), (Shape{H}));
    EXPECT_EQ(shape_of(m.checkpoint, "embed_out.weight"), (Shape{c.vocab_size, H}));
    return;
  }
  if (family == "gpt2") {  // its own names under transformer.; Conv1D weights [in, out]
    const int64_t H = c.hidden_size, I = c.intermediate_size[0];
    EXPECT_EQ(I, 4 * H);  // n_inner absent
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.wte.weight"), (Shape{c.vocab_size, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.wpe.weight"), (Shape{c.max_position_embeddings, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.attn.c_attn.weight"), (Shape{H, 3 * H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.attn.c_attn.bias"), (Shape{3 * H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.mlp.c_fc.weight"), (Shape{H, I}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.mlp.c_proj.weight"), (Shape{I, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.ln_f.bias"), (Shape{H}));
    return;
  }
  if (family == "falcon") {  // its own names; Falcon-7B's multi-query fused projection
    const int64_t H = c.hidden_size, D = c.head_dim;
    EXPECT_EQ(c.num_key_value_heads, 1);
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.word_embeddings.weight"), (Shape{c.vocab_size, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.self_attention.query_key_value.weight"), (Shape{H + 2 * D, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.input_layernorm.bias"), (Shape{H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.mlp.dense_h_to_4h.weight"), (Shape{4 * H, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.ln_f.weight"), (Shape{H}));
    return;
  }
  if (family == "gpt_bigcode") {  // GPT-2's names, nn.Linear weights [out, in], one kv head (multi_query)
    const int64_t H = c.hidden_size, I = c.intermediate_size[0], D = c.head_dim;
    EXPECT_EQ(c.num_key_value_heads, 1);
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.wpe.weight"), (Shape{c.max_position_embeddings, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.attn.c_attn.weight"), (Shape{H + 2 * D, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.attn.c_attn.bias"), (Shape{H + 2 * D}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.mlp.c_fc.weight"), (Shape{I, H}));
    EXPECT_EQ(shape_of(m.checkpoint, "transformer.h.0.mlp.c_proj.weight"), (Shape{H, I}));
    return;
  }
  EXPECT_EQ(shape_of(m.checkpoint, p + "embed_tokens.weight"), (Shape{c.vocab_size, c.hidden_size}));
  EXPECT_EQ(shape_of(m.checkpoint, p + (family == "phi" ? "final_layernorm.weight" : "norm.weight")), (Shape{c.hidden_size}));
  const std::string l0 = p + "layers.0.";
  if (mla_family(family)) {  // the latent attention; layer 1 sparse
    const int64_t H = c.hidden_size, nh = c.num_attention_heads, R = text_int(c, "kv_lora_rank");
    const int64_t dn = text_int(c, "qk_nope_head_dim"), dr = text_int(c, "qk_rope_head_dim"), dv = text_int(c, "v_head_dim");
    if (c.text.at("q_lora_rank").is_null()) {
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_proj.weight"), (Shape{nh * (dn + dr), H}));
    } else {
      const int64_t Q = text_int(c, "q_lora_rank");
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_a_proj.weight"), (Shape{Q, H}));
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_b_proj.weight"), (Shape{nh * (dn + dr), Q}));
    }
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.kv_a_proj_with_mqa.weight"), (Shape{R + dr, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.kv_b_proj.weight"), (Shape{nh * (dn + dv), R}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.o_proj.weight"), (Shape{H, nh * dv}));
    if (!family.starts_with("deepseek_v2"))  // DeepSeek-V2's router has no bias
      EXPECT_EQ(shape_of(m.checkpoint, p + "layers.1.mlp.gate.e_score_correction_bias"), (Shape{text_int(c, "n_routed_experts")}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "layers.1.mlp.gate.weight"), (Shape{text_int(c, "n_routed_experts"), H}));
    return;
  }
  if (family == "phi3") {
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.qkv_proj.weight"),
              (Shape{(c.num_attention_heads + 2 * c.num_key_value_heads) * c.head_dim, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.gate_up_proj.weight"), (Shape{2 * c.intermediate_size[0], c.hidden_size}));
  } else {
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_proj.weight"),
              (Shape{c.num_attention_heads * c.head_dim, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.k_proj.weight"),
              (Shape{c.num_key_value_heads * c.head_dim, c.hidden_size}));
    if (family != "qwen3_moe" && family != "qwen2_moe" && family != "gpt_oss" && family != "mixtral" &&
        family != "minimax_m2" && family != "starcoder2" && family != "phi" && family != "arcee" && family != "nemotron" && family != "apertus" && family != "glm" && family != "glm4" && family != "olmoe" && family != "granitemoe" &&
        family != "granitemoeshared") {
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.gate_proj.weight"), (Shape{c.intermediate_size[0], c.hidden_size}));
    }
  }
  EXPECT_EQ(shape_of(m.checkpoint, l0 + (family == "phi" ? "self_attn.dense.weight" : "self_attn.o_proj.weight")),
            (Shape{c.hidden_size, c.num_attention_heads * c.head_dim}));
  if (family == "qwen3_moe") {  // layer 0 sparse: router and experts; layer 1 in mlp_only_layers
    const int64_t E = text_int(c, "num_experts"), I = text_int(c, "moe_intermediate_size");
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.gate.weight"), (Shape{E, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.0.up_proj.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts." + std::to_string(E - 1) + ".down_proj.weight"),
              (Shape{c.hidden_size, I}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "layers.1.mlp.down_proj.weight"), (Shape{c.hidden_size, c.intermediate_size[1]}));
    EXPECT_EQ(m.checkpoint.find(p + "layers.1.mlp.gate.weight"), nullptr);
  } else if (family == "qwen2_moe") {  // layer 0 sparse with the shared expert; layer 1 in mlp_only_layers
    const int64_t E = text_int(c, "num_experts"), I = text_int(c, "moe_intermediate_size"),
                  S = text_int(c, "shared_expert_intermediate_size");
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.gate.weight"), (Shape{E, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.0.up_proj.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.shared_expert.down_proj.weight"), (Shape{c.hidden_size, S}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.shared_expert_gate.weight"), (Shape{1, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_proj.bias"), (Shape{c.num_attention_heads * c.head_dim}));
    EXPECT_EQ(m.checkpoint.find(l0 + "self_attn.o_proj.bias"), nullptr);
    EXPECT_EQ(shape_of(m.checkpoint, p + "layers.1.mlp.down_proj.weight"), (Shape{c.hidden_size, c.intermediate_size[1]}));
  } else if (family == "olmo2" || family == "olmo3") {  // q/k norms over the whole projections; output norms only
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_norm.weight"), (Shape{c.num_attention_heads * c.head_dim}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.k_norm.weight"), (Shape{c.num_key_value_heads * c.head_dim}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "post_feedforward_layernorm.weight"), (Shape{c.hidden_size}));
    EXPECT_EQ(m.checkpoint.find(l0 + "input_layernorm.weight"), nullptr);
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.down_proj.weight"), (Shape{c.hidden_size, c.intermediate_size[0]}));
  } else if (family == "starcoder2" || family == "phi") {  // a plain MLP; LayerNorms with biases
    const std::string up = family == "phi" ? "fc1" : "c_fc", down = family == "phi" ? "fc2" : "c_proj";
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp." + up + ".weight"), (Shape{c.intermediate_size[0], c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp." + down + ".bias"), (Shape{c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "input_layernorm.bias"), (Shape{c.hidden_size}));
    EXPECT_EQ(m.checkpoint.find(l0 + "post_attention_layernorm.weight") != nullptr, family == "starcoder2");
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.gate_proj.weight"), nullptr);
  } else if (family == "apertus") {  // the ungated MLP and its xIELU's scalars
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.up_proj.weight"), (Shape{c.intermediate_size[0], c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.act_fn.alpha_p"), (Shape{1}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.act_fn.beta"), (Shape{}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "attention_layernorm.weight"), (Shape{c.hidden_size}));
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.gate_proj.weight"), nullptr);
  } else if (family == "arcee" || family == "nemotron") {  // NemotronMLP: up and down, no gate
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.up_proj.weight"), (Shape{c.intermediate_size[0], c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.down_proj.weight"), (Shape{c.hidden_size, c.intermediate_size[0]}));
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.gate_proj.weight"), nullptr);
    EXPECT_EQ(m.checkpoint.find(l0 + "input_layernorm.bias") != nullptr, family == "nemotron");  // LayerNorm1P
  } else if (family == "minimax_m2") {  // every layer sparse with the routing bias; whole-projection q/k norms
    const int64_t E = text_int(c, "num_local_experts"), I = c.intermediate_size[0];
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.gate.weight"), (Shape{E, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.e_score_correction_bias"), (Shape{E}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.experts.0.w1.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.experts." + std::to_string(E - 1) + ".w2.weight"),
              (Shape{c.hidden_size, I}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_norm.weight"), (Shape{c.num_attention_heads * c.head_dim}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.k_norm.weight"), (Shape{c.num_key_value_heads * c.head_dim}));
  } else if (family == "mixtral") {  // every layer sparse: w1 gate, w3 up, w2 down
    const int64_t E = text_int(c, "num_local_experts"), I = c.intermediate_size[0];
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.gate.weight"), (Shape{E, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.experts.0.w1.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.experts.0.w3.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.experts." + std::to_string(E - 1) + ".w2.weight"),
              (Shape{c.hidden_size, I}));
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.down_proj.weight"), nullptr);
  } else if (family == "olmoe") {  // every layer sparse; q/k norms over the whole projections
    const int64_t E = text_int(c, "num_experts"), I = c.intermediate_size[0], D = c.head_dim;
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.gate.weight"), (Shape{E, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.0.gate_proj.weight"), (Shape{I, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts." + std::to_string(E - 1) + ".down_proj.weight"),
              (Shape{c.hidden_size, I}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.q_norm.weight"), (Shape{c.num_attention_heads * D}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "self_attn.k_norm.weight"), (Shape{c.num_key_value_heads * D}));
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.down_proj.weight"), nullptr);
  } else if (family == "ernie4_5_moe") {  // layer 0 dense; layer 1 sparse with the [1, E] bias and shared experts
    const int64_t E = text_int(c, "moe_num_experts"), I = text_int(c, "moe_intermediate_size"), H = c.hidden_size;
    const std::string l1 = "model.layers.1.";
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.gate.weight"), (Shape{E, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.moe_statics.e_score_correction_bias"), (Shape{1, E}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.experts.0.gate_proj.weight"), (Shape{I, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.shared_experts.down_proj.weight"),
              (Shape{H, I * text_int(c, "moe_num_shared_experts")}));
    EXPECT_EQ(m.checkpoint.find(l1 + "mlp.gate_proj.weight"), nullptr);
  } else if (family == "glm4_moe") {  // layer 0 dense; layer 1 sparse with the router's bias and the
    // shared expert; the prediction layer after the last
    const int64_t E = text_int(c, "n_routed_experts"), I = text_int(c, "moe_intermediate_size"), H = c.hidden_size;
    const std::string l1 = "model.layers.1.", last = "model.layers." + std::to_string(c.num_hidden_layers) + ".";
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.gate.weight"), (Shape{E, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.gate.e_score_correction_bias"), (Shape{E}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.experts." + std::to_string(E - 1) + ".down_proj.weight"), (Shape{H, I}));
    EXPECT_EQ(shape_of(m.checkpoint, l1 + "mlp.shared_experts.up_proj.weight"),
              (Shape{I * text_int(c, "n_shared_experts"), H}));
    EXPECT_EQ(m.checkpoint.find(l1 + "mlp.gate_proj.weight"), nullptr);
    EXPECT_EQ(shape_of(m.checkpoint, last + "eh_proj.weight"), (Shape{H, 2 * H}));
    EXPECT_EQ(shape_of(m.checkpoint, last + "mlp.gate.weight"), (Shape{E, H}));
  } else if (family == "granitemoe" || family == "granitemoeshared") {  // every layer sparse; experts fused as stored
    const int64_t E = text_int(c, "num_local_experts"), I = c.intermediate_size[0], H = c.hidden_size;
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.router.layer.weight"), (Shape{E, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.input_linear.weight"), (Shape{E, 2 * I, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "block_sparse_moe.output_linear.weight"), (Shape{E, H, I}));
    if (family == "granitemoeshared") {
      const int64_t S = text_int(c, "shared_intermediate_size");
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "shared_mlp.input_linear.weight"), (Shape{2 * S, H}));
      EXPECT_EQ(shape_of(m.checkpoint, l0 + "shared_mlp.output_linear.weight"), (Shape{H, S}));
    }
    EXPECT_EQ(m.checkpoint.find(l0 + "mlp.down_proj.weight"), nullptr);
  } else if (family == "gpt_oss") {  // MXFP4 experts as the hub stores them
    const int64_t E = text_int(c, "num_local_experts"), H = c.hidden_size, I = c.intermediate_size[0];
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.router.weight"), (Shape{E, H}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.gate_up_proj_blocks"), (Shape{E, 2 * I, H / 32, 16}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.down_proj_scales"), (Shape{E, H, I / 32}));
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.experts.down_proj_bias"), (Shape{E, H}));
  } else {
    EXPECT_EQ(shape_of(m.checkpoint, l0 + "mlp.down_proj.weight"), (Shape{c.hidden_size, c.intermediate_size[0]}));
  }
  EXPECT_EQ(m.checkpoint.find("lm_head.weight") != nullptr, !c.tie_word_embeddings);
  for (const std::string& name : m.checkpoint.names())  // MXFP4 blocks and scales are bytes
    EXPECT_EQ(m.checkpoint.find(name)->dtype, name.ends_with("_blocks") || name.ends_with("_scales") ? DType::kU8 : DType::kF32)
        << name;
  EXPECT_EQ(c.torch_dtype, "float32");
}

TEST_P(EveryFamily, TinyDefaultsMakeGoodTests) {
  const std::string family = GetParam();
  auto tiny = tiny_config(family);
  ASSERT_TRUE(tiny.is_ok()) << tiny.status().message();
  auto c = exporter::parse_model_config(tiny->dump(), family);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_GE(c->hidden_size, 32);
  EXPECT_LE(c->hidden_size, 128);
  // (GPT-NeoX and GPT-2 have no num_key_value_heads, and latent attention gives every head its own k and v)
  if (family != "gpt_neox" && family != "gpt2" && !mla_family(family))
    EXPECT_LT(c->num_key_value_heads, c->num_attention_heads) << "GQA: kv heads < q heads";
  if (!mla_family(family)) {  // (latent attention's head_dim is its rope part, qk_rope_head_dim)
    EXPECT_GE(c->head_dim, 16);
    EXPECT_LE(c->head_dim, 32);
  }
  EXPECT_GE(c->num_hidden_layers, 4);
  EXPECT_LE(c->num_hidden_layers, 6);
  EXPECT_GE(c->vocab_size, 256);
  EXPECT_LE(c->vocab_size, 512);
  EXPECT_GE(c->max_position_embeddings, 4096);
  if (c->sliding_window) {
    EXPECT_GE(*c->sliding_window, 4);
    EXPECT_LE(*c->sliding_window, 8);
  }
}

INSTANTIATE_TEST_SUITE_P(TestGen, EveryFamily, ::testing::ValuesIn(generator_families()),
                         [](const auto& info) { return info.param; });

TEST(TestGen, ConfigsMapToTheExpectedModelTypes) {
  struct Case {
    const char* family;
    const char* model_type;
    const char* text_model_type;
    const char* reader_family;
  };
  for (const Case& k : {Case{"llama", "llama", "llama", "llama"}, Case{"smollm", "llama", "llama", "llama"},
                        Case{"mistral", "mistral", "mistral", "mistral"}, Case{"qwen2", "qwen2", "qwen2", "qwen2"},
                        Case{"qwen3", "qwen3", "qwen3", "qwen3"}, Case{"phi3", "phi3", "phi3", "phi3"},
                        Case{"smollm3", "smollm3", "smollm3", "smollm3"},
                        Case{"qwen3_moe", "qwen3_moe", "qwen3_moe", "qwen3_moe"},
                        Case{"mixtral", "mixtral", "mixtral", "mixtral"},
                        Case{"qwen2_moe", "qwen2_moe", "qwen2_moe", "qwen2_moe"},
                        Case{"granite", "granite", "granite", "granite"}, Case{"olmo2", "olmo2", "olmo2", "olmo2"},
                        Case{"olmo3", "olmo3", "olmo3", "olmo3"},
                        Case{"gemma", "gemma", "gemma", "gemma"}, Case{"gemma2", "gemma2", "gemma2", "gemma2"},
                        Case{"gemma3_text", "gemma3_text", "gemma3_text", "gemma3"},
                        Case{"gemma3", "gemma3", "gemma3_text", "gemma3"},
                        Case{"gemma3n", "gemma3n", "gemma3n_text", "gemma3n"},
                        Case{"gemma4", "gemma4", "gemma4_text", "gemma4"},
                        Case{"starcoder2", "starcoder2", "starcoder2", "starcoder2"}, Case{"phi", "phi", "phi", "phi"},
                        Case{"stablelm", "stablelm", "stablelm", "stablelm"}, Case{"cohere", "cohere", "cohere", "cohere"},
                        Case{"cohere2", "cohere2", "cohere2", "cohere2"}, Case{"glm", "glm", "glm", "glm"},
                        Case{"glm4", "glm4", "glm4", "glm4"}, Case{"ernie4_5", "ernie4_5", "ernie4_5", "ernie4_5"},
                        Case{"gpt_neox", "gpt_neox", "gpt_neox", "gpt_neox"}, Case{"olmoe", "olmoe", "olmoe", "olmoe"},
                        Case{"granitemoe", "granitemoe", "granitemoe", "granitemoe"},
                        Case{"granitemoeshared", "granitemoeshared", "granitemoeshared", "granitemoeshared"},
                        Case{"glm4_moe", "glm4_moe", "glm4_moe", "glm4_moe"},
                        Case{"ernie4_5_moe", "ernie4_5_moe", "ernie4_5_moe", "ernie4_5_moe"},
                        Case{"deepseek_v3", "deepseek_v3", "deepseek_v3", "deepseek_v3"},
                        Case{"moonlight", "deepseek_v3", "deepseek_v3", "deepseek_v3"},
                        Case{"kimi_k2", "kimi_k2", "kimi_k2", "deepseek_v3"},
                        Case{"deepseek_v2", "deepseek_v2", "deepseek_v2", "deepseek_v2"},
                        Case{"deepseek_v2_grouped", "deepseek_v2", "deepseek_v2", "deepseek_v2"},
                        Case{"glm4_moe_lite", "glm4_moe_lite", "glm4_moe_lite", "glm4_moe_lite"},
                        Case{"glm4_moe_lite_layer_types", "glm4_moe_lite", "glm4_moe_lite", "glm4_moe_lite"},
                        Case{"minimax_m2", "minimax_m2", "minimax_m2", "minimax_m2"},
                        Case{"dots1", "dots1", "dots1", "dots1"},
                        Case{"seed_oss", "seed_oss", "seed_oss", "seed_oss"},
                        Case{"arcee", "arcee", "arcee", "arcee"}, Case{"nemotron", "nemotron", "nemotron", "nemotron"},
                        Case{"hunyuan_v1_dense", "hunyuan_v1_dense", "hunyuan_v1_dense", "hunyuan_v1_dense"},
                        Case{"apertus", "apertus", "apertus", "apertus"},
                        Case{"exaone4", "exaone4", "exaone4", "exaone4"},
                        Case{"exaone4_hybrid", "exaone4", "exaone4", "exaone4"}, Case{"gpt2", "gpt2", "gpt2", "gpt2"},
                        Case{"gpt_bigcode", "gpt_bigcode", "gpt_bigcode", "gpt_bigcode"},
                        Case{"falcon", "falcon", "falcon", "falcon"}}) {
    auto tiny = tiny_config(k.family);
    ASSERT_TRUE(tiny.is_ok());
    auto c = exporter::parse_model_config(tiny->dump(), k.family);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    EXPECT_EQ(c->model_type, k.model_type) << k.family;
    EXPECT_EQ(c->text_model_type, k.text_model_type) << k.family;
    EXPECT_STREQ(exporter::family_of(*c)->name, k.reader_family) << k.family;
  }
}

TEST(TestGen, UsualTyingPerFamily) {
  for (const auto& [family, tied] : std::vector<std::pair<std::string, bool>>{
           {"llama", false}, {"smollm", true}, {"mistral", false}, {"qwen2", false}, {"qwen3", true},
           {"phi3", false}, {"smollm3", true}, {"gemma2", true}, {"gemma3_text", true}, {"gemma3", true}, {"gemma3n", true},
           {"gemma4", true}, {"starcoder2", true}, {"phi", false}, {"stablelm", false},
           {"cohere", true}, {"cohere2", true}, {"glm", false}, {"glm4", false}, {"ernie4_5", true},
           {"gpt_neox", false}, {"olmoe", false}, {"granitemoe", true},
           {"granitemoeshared", true}, {"glm4_moe", false}, {"ernie4_5_moe", true},
           {"deepseek_v3", false}, {"moonlight", false}, {"kimi_k2", false}, {"deepseek_v2", false}, {"deepseek_v2_grouped", false},
           {"glm4_moe_lite", false}, {"glm4_moe_lite_layer_types", false}, {"minimax_m2", false}, {"dots1", false}, {"seed_oss", false},
           {"arcee", false}, {"nemotron", false}, {"hunyuan_v1_dense", true}, {"apertus", false}, {"exaone4", true}, {"exaone4_hybrid", false}, {"gpt2", true}, {"gpt_bigcode", true}, {"falcon", true}}) {
    auto c = exporter::parse_model_config(tiny_config(family)->dump(), family);
    ASSERT_TRUE(c.is_ok());
    EXPECT_EQ(c->tie_word_embeddings, tied) << family;
    auto r = reference::parse_model_config(tiny_config(family)->dump(), family);  // the reference's own reading
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(r->tie_word_embeddings, tied) << family;
  }
}

TEST(TestGen, LlamaHasLlama3RopeScalingAndHeadDim) {
  Json c = *tiny_config("llama");
  EXPECT_EQ(c["rope_scaling"]["rope_type"], "llama3");
  EXPECT_TRUE(c.contains("head_dim"));
  Json s = *tiny_config("smollm");
  EXPECT_TRUE(s["rope_scaling"].is_null());
  EXPECT_FALSE(s.contains("head_dim"));
  EXPECT_EQ(s["model_type"], "llama");
}

TEST(TestGen, Qwen2HasBiasesAndBothLayerKinds) {
  TempDir dir("qwen2");
  Loaded m = generate_and_load({.family = "qwen2", .out_dir = dir.str()});
  const hf::ModelConfig& c = m.config;
  EXPECT_EQ(shape_of(m.checkpoint, "model.layers.0.self_attn.q_proj.bias"), (Shape{c.num_attention_heads * c.head_dim}));
  EXPECT_EQ(shape_of(m.checkpoint, "model.layers.0.self_attn.k_proj.bias"), (Shape{c.num_key_value_heads * c.head_dim}));
  EXPECT_EQ(m.checkpoint.find("model.layers.0.self_attn.o_proj.bias"), nullptr);
  EXPECT_TRUE(c.text.at("use_sliding_window").get<bool>());
  const int64_t max_window_layers = text_int(c, "max_window_layers");
  EXPECT_GT(max_window_layers, 0);                    // some full-attention layers
  EXPECT_LT(max_window_layers, c.num_hidden_layers);  // and some sliding ones
}

TEST(TestGen, Qwen3HeadDimDiffersFromHiddenOverHeads) {
  TempDir dir("qwen3");
  Loaded m = generate_and_load({.family = "qwen3", .out_dir = dir.str()});
  const hf::ModelConfig& c = m.config;
  EXPECT_NE(c.head_dim, c.hidden_size / c.num_attention_heads);
  EXPECT_EQ(shape_of(m.checkpoint, "model.layers.3.self_attn.q_norm.weight"), (Shape{c.head_dim}));
  EXPECT_EQ(shape_of(m.checkpoint, "model.layers.3.self_attn.k_norm.weight"), (Shape{c.head_dim}));
}

TEST(TestGen, Gemma2And3HaveFourNormsAndGemmaFields) {
  TempDir dir("gemma2");
  Loaded m = generate_and_load({.family = "gemma2", .out_dir = dir.str()});
  for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm"})
    EXPECT_EQ(shape_of(m.checkpoint, std::string("model.layers.1.") + n + ".weight"), (Shape{m.config.hidden_size}));
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar"})
    EXPECT_TRUE(m.config.text.at(key).is_number()) << key;

  Json g3 = *tiny_config("gemma3_text");
  EXPECT_EQ(g3["sliding_window_pattern"], 3);
  EXPECT_EQ(g3["num_hidden_layers"], 6);  // full attention at 2 and 5
  EXPECT_TRUE(g3["rope_local_base_freq"].is_number());
  EXPECT_FALSE(g3.contains("layer_types"));
}

TEST(TestGen, Gemma3WrapperWritesOnlyLanguageModelTensors) {
  TempDir dir("gemma3");
  Loaded m = generate_and_load({.family = "gemma3", .out_dir = dir.str()});
  EXPECT_TRUE(m.config.is_wrapped);
  EXPECT_TRUE(m.config.root.at("vision_config").is_object());
  for (const std::string& name : m.checkpoint.names())
    EXPECT_EQ(name.rfind("model.language_model.", 0), 0u) << name;
  EXPECT_EQ(shape_of(m.checkpoint, "model.language_model.layers.5.self_attn.q_norm.weight"), (Shape{m.config.head_dim}));
}

TEST(TestGen, Gemma3HubLayoutUsesTheSavedNames) {
  TempDir dir("gemma3_hub");
  Loaded m = generate_and_load(
      {.family = "gemma3", .out_dir = dir.str(), .tie_word_embeddings = false, .hub_layout = true});
  EXPECT_FALSE(m.config.tie_word_embeddings);
  EXPECT_EQ(shape_of(m.checkpoint, "language_model.lm_head.weight"), (Shape{m.config.vocab_size, m.config.hidden_size}));
  EXPECT_EQ(m.checkpoint.find("lm_head.weight"), nullptr);
  for (const std::string& name : m.checkpoint.names())
    EXPECT_EQ(name.rfind("language_model.", 0), 0u) << name;
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count("gemma3", m.config, true));
}

TEST(TestGen, UntiedWrapperWritesLmHead) {
  TempDir dir("gemma3_untied");
  Loaded m = generate_and_load({.family = "gemma3", .out_dir = dir.str(), .tie_word_embeddings = false});
  EXPECT_EQ(shape_of(m.checkpoint, "lm_head.weight"), (Shape{m.config.vocab_size, m.config.hidden_size}));
  EXPECT_EQ(m.config.root.at("tie_word_embeddings"), false);
  EXPECT_EQ(m.config.text.at("tie_word_embeddings"), false);
}

TEST(TestGen, Gemma4KvSharingGlobalHeadDimAndDoubleWideMlp) {
  TempDir dir("gemma4");
  Loaded m = generate_and_load({.family = "gemma4", .out_dir = dir.str()});
  const hf::ModelConfig& c = m.config;
  const int64_t global_head_dim = text_int(c, "global_head_dim");
  const int64_t per_layer = text_int(c, "hidden_size_per_layer_input");
  const int64_t vocab_per_layer = text_int(c, "vocab_size_per_layer_input");
  const int64_t inter = c.intermediate_size[0];
  ASSERT_EQ(static_cast<int64_t>(c.layer_types.size()), c.num_hidden_layers);
  EXPECT_EQ(c.layer_types.back(), "full_attention");
  ASSERT_GT(c.num_kv_shared_layers, 0);
  const std::string p = "model.language_model.";
  bool saw_full = false, saw_sliding = false, saw_shared_full = false, saw_shared_sliding = false;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const bool full = c.layer_types[static_cast<size_t>(l)] == "full_attention";
    const bool shared = is_shared(c, l);
    const int64_t hd = full ? global_head_dim : c.head_dim;
    const std::string lp = p + "layers." + std::to_string(l) + ".";
    EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.q_proj.weight"), (Shape{c.num_attention_heads * hd, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.q_norm.weight"), (Shape{hd}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.o_proj.weight"), (Shape{c.hidden_size, c.num_attention_heads * hd}));
    EXPECT_EQ(m.checkpoint.find(lp + "self_attn.v_norm.weight"), nullptr);
    if (shared) {
      EXPECT_EQ(m.checkpoint.find(lp + "self_attn.k_proj.weight"), nullptr) << l;
      EXPECT_EQ(m.checkpoint.find(lp + "self_attn.v_proj.weight"), nullptr) << l;
      EXPECT_EQ(m.checkpoint.find(lp + "self_attn.k_norm.weight"), nullptr) << l;
    } else {
      EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.k_proj.weight"), (Shape{c.num_key_value_heads * hd, c.hidden_size}));
      EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.v_proj.weight"), (Shape{c.num_key_value_heads * hd, c.hidden_size}));
      EXPECT_EQ(shape_of(m.checkpoint, lp + "self_attn.k_norm.weight"), (Shape{hd}));
    }
    EXPECT_EQ(shape_of(m.checkpoint, lp + "mlp.gate_proj.weight"), (Shape{inter * (shared ? 2 : 1), c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "layer_scalar"), (Shape{1}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "per_layer_input_gate.weight"), (Shape{per_layer, c.hidden_size}));
    (full ? saw_full : saw_sliding) = true;
    if (shared) (full ? saw_shared_full : saw_shared_sliding) = true;
  }
  EXPECT_TRUE(saw_full && saw_sliding && saw_shared_full && saw_shared_sliding);
  EXPECT_EQ(shape_of(m.checkpoint, p + "embed_tokens_per_layer.weight"),
            (Shape{vocab_per_layer, c.num_hidden_layers * per_layer}));
  EXPECT_EQ(shape_of(m.checkpoint, p + "per_layer_model_projection.weight"),
            (Shape{c.num_hidden_layers * per_layer, c.hidden_size}));
  EXPECT_EQ(c.root.at("dtype"), "float32");
}

TEST(TestGen, Gemma3nAltupLaurelAndKvSharing) {
  TempDir dir("gemma3n");
  Loaded m = generate_and_load({.family = "gemma3n", .out_dir = dir.str()});
  const hf::ModelConfig& c = m.config;
  const int64_t altup = text_int(c, "altup_num_inputs");
  const int64_t rank = text_int(c, "laurel_rank");
  const std::string p = "model.language_model.";
  EXPECT_LT(text_int(c, "vocab_size_per_layer_input"), c.vocab_size);
  ASSERT_GT(c.num_kv_shared_layers, 0);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string lp = p + "layers." + std::to_string(l) + ".";
    EXPECT_EQ(m.checkpoint.find(lp + "self_attn.k_proj.weight") != nullptr, !is_shared(c, l)) << l;
    EXPECT_EQ(shape_of(m.checkpoint, lp + "mlp.up_proj.weight"),
              (Shape{c.intermediate_size[static_cast<size_t>(l)], c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "altup.prediction_coefs.weight"), (Shape{altup * altup, altup}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "altup.modality_router.weight"), (Shape{altup, c.hidden_size}));
    EXPECT_EQ(shape_of(m.checkpoint, lp + "laurel.linear_left.weight"), (Shape{rank, c.hidden_size}));
  }
  EXPECT_NE(c.intermediate_size[0], c.intermediate_size[1]);
  EXPECT_EQ(shape_of(m.checkpoint, p + "altup_projections." + std::to_string(altup - 2) + ".weight"),
            (Shape{c.hidden_size, c.hidden_size}));
  EXPECT_EQ(m.checkpoint.find(p + "altup_projections." + std::to_string(altup - 1) + ".weight"), nullptr);
  EXPECT_EQ(c.text.at("activation_sparsity_pattern").size(), static_cast<size_t>(c.num_hidden_layers));
}

TEST(TestGen, Gemma3nHubLayoutKeepsKvProjectionsOfSharedLayers) {
  TempDir dir("gemma3n_hub");
  Loaded m = generate_and_load({.family = "gemma3n", .out_dir = dir.str(), .hub_layout = true});
  const int64_t last = m.config.num_hidden_layers - 1;
  EXPECT_NE(m.checkpoint.find("model.language_model.layers." + std::to_string(last) + ".self_attn.k_proj.weight"),
            nullptr);
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count("gemma3n", m.config, true));
}

TEST(TestGen, DtypeIsHonouredForEveryTensorIncludingNorms) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* family : {"llama", "gemma3", "gemma4"}) {
      TempDir dir(std::string("dtype_") + family);
      Loaded m = generate_and_load({.family = family, .out_dir = dir.str(), .dtype = dtype});
      for (const std::string& name : m.checkpoint.names()) EXPECT_EQ(m.checkpoint.find(name)->dtype, dtype) << name;
      EXPECT_EQ(m.config.torch_dtype, dtype == DType::kBF16 ? "bfloat16" : "float16");
    }
  }
}

TEST(TestGen, Bf16IsTheRoundedF32) {
  TempDir f32("round_f32"), bf16("round_bf16");
  Loaded a = generate_and_load({.family = "qwen2", .out_dir = f32.str(), .seed = 3});
  Loaded b = generate_and_load({.family = "qwen2", .out_dir = bf16.str(), .dtype = DType::kBF16, .seed = 3});
  for (const char* name : {"model.layers.2.self_attn.q_proj.bias", "model.norm.weight"}) {
    std::vector<float> x = hf::to_f32(*a.checkpoint.find(name));
    std::vector<float> y = hf::to_f32(*b.checkpoint.find(name));
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], bf16_to_float(float_to_bf16(x[i]))) << name << "[" << i << "]";
  }
}

TEST(TestGen, ShardedCheckpointHasAnIndexWhoseEveryTensorResolves) {
  TempDir single("shard_single"), sharded("shard_many");
  Loaded one = generate_and_load({.family = "gemma3n", .out_dir = single.str(), .seed = 11});
  Loaded many = generate_and_load({.family = "gemma3n", .out_dir = sharded.str(), .seed = 11, .max_shard_bytes = 64 * 1024});
  ASSERT_TRUE(fs::exists(sharded.path() / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(sharded.path() / "model.safetensors"));
  Json index = Json::parse(read_file(sharded.path() / "model.safetensors.index.json"));
  std::set<std::string> shard_files;
  for (const auto& [name, file] : index.at("weight_map").items()) {
    shard_files.insert(file.get<std::string>());
    const hf::TensorView* t = many.checkpoint.find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(fs::path(t->file).filename().string(), file.get<std::string>()) << name;
  }
  EXPECT_GT(shard_files.size(), 1u);
  EXPECT_EQ(index.at("weight_map").size(), one.checkpoint.names().size());
  EXPECT_EQ(many.checkpoint.names(), one.checkpoint.names());
  for (const std::string& name : one.checkpoint.names()) {
    const hf::TensorView* a = one.checkpoint.find(name);
    const hf::TensorView* b = many.checkpoint.find(name);
    ASSERT_EQ(a->nbytes, b->nbytes) << name;
    EXPECT_EQ(std::memcmp(a->data, b->data, a->nbytes), 0) << name;
  }
}

TEST(TestGen, RegeneratingIntoADirectoryRemovesStaleShards) {
  TempDir dir("restale");
  ASSERT_TRUE(generate_checkpoint({.family = "llama", .out_dir = dir.str(), .max_shard_bytes = 16 * 1024}).is_ok());
  ASSERT_TRUE(fs::exists(dir.path() / "model.safetensors.index.json"));
  ASSERT_TRUE(generate_checkpoint({.family = "llama", .out_dir = dir.str()}).is_ok());
  EXPECT_FALSE(fs::exists(dir.path() / "model.safetensors.index.json"));
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("model-", 0), std::string::npos) << entry.path();
  EXPECT_TRUE(hf::Checkpoint::open(dir.str()).is_ok());
}

TEST(TestGen, SameSeedGivesIdenticalBytesOtherSeedDiffers) {
  TempDir a("det_a"), b("det_b"), c("det_c");
  for (const std::string& family : families()) {
    ASSERT_TRUE(generate_checkpoint({.family = family, .out_dir = a.str(), .dtype = DType::kBF16, .seed = 42}).is_ok());
    ASSERT_TRUE(generate_checkpoint({.family = family, .out_dir = b.str(), .dtype = DType::kBF16, .seed = 42}).is_ok());
    ASSERT_TRUE(generate_checkpoint({.family = family, .out_dir = c.str(), .dtype = DType::kBF16, .seed = 43}).is_ok());
    EXPECT_EQ(read_file(a.path() / "model.safetensors"), read_file(b.path() / "model.safetensors")) << family;
    EXPECT_EQ(read_file(a.path() / "config.json"), read_file(b.path() / "config.json")) << family;
    EXPECT_NE(read_file(a.path() / "model.safetensors"), read_file(c.path() / "model.safetensors")) << family;
    EXPECT_EQ(read_file(a.path() / "config.json"), read_file(c.path() / "config.json")) << family;
  }
}

// Pins the generator's output: changing the random stream silently changes every golden
// figure downstream, so it must be a deliberate edit of these numbers. They were computed by
// an independent Python implementation of MT19937-64, splitmix64 and FNV-1a (z = 0.71650200,
// 0.74350301, -0.84014778, 0.57555436), which is also what makes the files reproducible anywhere.
TEST(TestGen, RandomStreamIsPinned) {
  std::vector<float> v = random_values(0, "model.embed_tokens.weight", 4, Init{0.0, 1.0});
  const std::vector<uint32_t> expected_bits = {1060596909u, 1061049911u, 3210154989u, 1058232200u};
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    EXPECT_EQ(bits, expected_bits[i]) << i << ": " << v[i];
  }
}

TEST(TestGen, NormalDeviatesHaveUnitVarianceAndIndependentStreams) {
  const size_t n = 200000;
  std::vector<float> v = random_values(5, "x", n, Init{0.0, 1.0});
  double sum = 0, sq = 0, fourth = 0;
  for (float x : v) {
    sum += x;
    sq += double(x) * x;
    fourth += double(x) * x * x * x;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.02);
  EXPECT_NEAR(fourth / n, 2.9, 0.1);  // Irwin-Hall(12) kurtosis is 3 - 1/10
  std::vector<float> w = random_values(5, "y", n, Init{0.0, 1.0});
  double cross = 0;
  for (size_t i = 0; i < n; ++i) cross += double(v[i]) * w[i];
  EXPECT_NEAR(cross / n, 0.0, 0.01);
  EXPECT_NE(tensor_seed(5, "x"), tensor_seed(6, "x"));
}

double mean_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / v.size();
}
double std_of(const std::vector<float>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / v.size());
}

TEST(TestGen, WeightScalesKeepActivationsOrderOne) {
  TempDir dir("scales"), gdir("scales_gemma");
  Loaded m = generate_and_load({.family = "llama", .out_dir = dir.str(), .seed = 1});
  const double h = static_cast<double>(m.config.hidden_size);
  const double inter = static_cast<double>(m.config.intermediate_size[0]);
  std::vector<float> emb = hf::to_f32(*m.checkpoint.find("model.embed_tokens.weight"));
  EXPECT_NEAR(std_of(emb), 1.0, 0.03);
  std::vector<float> q = hf::to_f32(*m.checkpoint.find("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_NEAR(std_of(q) * std::sqrt(h), 1.5, 0.08);  // q/k gain: attention scores of std ~2
  std::vector<float> v = hf::to_f32(*m.checkpoint.find("model.layers.0.self_attn.v_proj.weight"));
  EXPECT_NEAR(std_of(v) * std::sqrt(h), 1.0, 0.05);
  std::vector<float> head = hf::to_f32(*m.checkpoint.find("lm_head.weight"));
  EXPECT_NEAR(std_of(head) * std::sqrt(h), 3.0, 0.1);  // logits of std ~3
  std::vector<float> down = hf::to_f32(*m.checkpoint.find("model.layers.0.mlp.down_proj.weight"));
  EXPECT_NEAR(std_of(down) * std::sqrt(inter), 1.0, 0.05);
  std::vector<float> norm = hf::to_f32(*m.checkpoint.find("model.layers.0.input_layernorm.weight"));
  EXPECT_NEAR(mean_of(norm), 1.0, 0.05);  // x * w norms around 1
  EXPECT_GT(std_of(norm), 0.05);          // but not constant

  Loaded g = generate_and_load({.family = "gemma2", .out_dir = gdir.str(), .seed = 1});
  std::vector<float> gnorm = hf::to_f32(*g.checkpoint.find("model.layers.0.input_layernorm.weight"));
  EXPECT_NEAR(mean_of(gnorm), 0.0, 0.05);  // (1 + w) norms around 0
  EXPECT_GT(std_of(gnorm), 0.05);
}

TEST(TestGen, OverridesApplyBeforeWeightsAreMade) {
  TempDir dir("override");
  Loaded m = generate_and_load(
      {.family = "mistral", .out_dir = dir.str(), .overrides = {{"num_hidden_layers", 5}, {"sliding_window", 4}}});
  EXPECT_EQ(m.config.num_hidden_layers, 5);
  EXPECT_EQ(m.config.sliding_window, 4);
  EXPECT_NE(m.checkpoint.find("model.layers.4.mlp.up_proj.weight"), nullptr);
  EXPECT_EQ(m.checkpoint.find("model.layers.5.mlp.up_proj.weight"), nullptr);
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count("mistral", m.config, false));
}

// Without a head_dim field transformers uses the config class's default: hidden / heads for
// Llama, 128 for Qwen3Config, 256 for the Gemma configs.
TEST(TestGen, NullOverrideRemovesAFieldAndTheClassDefaultApplies) {
  for (const auto& [family, head_dim] : std::vector<std::pair<std::string, int64_t>>{
           {"llama", 64 / 4}, {"qwen3", 128}, {"gemma2", 256}}) {
    TempDir dir("override_null_" + family);
    Loaded m = generate_and_load({.family = family, .out_dir = dir.str(), .overrides = {{"head_dim", nullptr}}});
    EXPECT_FALSE(Json::parse(read_file(dir.path() / "config.json")).contains("head_dim")) << family;
    EXPECT_EQ(shape_of(m.checkpoint, "model.layers.0.self_attn.q_proj.weight"),
              (Shape{m.config.num_attention_heads * head_dim, m.config.hidden_size}))
        << family;
  }
}

TEST(TestGen, OverridesReachTheTextConfigOfWrappers) {
  TempDir dir("override_wrapped");
  Loaded m = generate_and_load({.family = "gemma3", .out_dir = dir.str(), .overrides = {{"num_hidden_layers", 3}}});
  EXPECT_EQ(m.config.num_hidden_layers, 3);
  EXPECT_FALSE(m.config.root.contains("num_hidden_layers"));
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count("gemma3", m.config, false));
}

TEST(TestGen, LayerFieldsFollowAnOverriddenLayerCount) {
  for (const char* family : {"gemma4", "gemma3n"}) {
    TempDir dir(std::string("relayer_") + family);
    Loaded m = generate_and_load({.family = family, .out_dir = dir.str(), .overrides = {{"num_hidden_layers", 9}}});
    const hf::ModelConfig& c = m.config;
    EXPECT_EQ(c.num_hidden_layers, 9) << family;
    EXPECT_EQ(c.layer_types.size(), 9u) << family;
    EXPECT_EQ(c.intermediate_size.size(), 9u) << family;
    EXPECT_EQ(c.num_kv_shared_layers, 3) << family;
    EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count(family, c, false)) << family;
  }
}

// SmolLM3Config's derivations follow the overrides: no_rope_layers from the interval, then
// layer_types sliding on the NoPE layers with use_sliding_window; an overridden field is kept.
TEST(TestGen, SmolLM3NoRopeLayersAndLayerTypesFollowTheOverrides) {
  const Json tiny = *tiny_config("smollm3");
  EXPECT_EQ(tiny["no_rope_layers"], Json({1, 1, 1, 0, 1}));
  EXPECT_FALSE(tiny.contains("head_dim"));  // as SmolLM3-3B: hidden_size / heads
  TempDir dir("smollm3_derive");
  Loaded m = generate_and_load({.family = "smollm3", .out_dir = dir.str(),
                                .overrides = {{"num_hidden_layers", 6}, {"no_rope_layer_interval", 3},
                                              {"use_sliding_window", true}, {"sliding_window", 4}}});
  const Json file = Json::parse(read_file(dir.path() / "config.json"));
  EXPECT_EQ(file["no_rope_layers"], Json({1, 1, 0, 1, 1, 0}));
  EXPECT_EQ(m.config.layer_types, (std::vector<std::string>{"full_attention", "full_attention", "sliding_attention",
                                                            "full_attention", "full_attention", "sliding_attention"}));
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), expected_tensor_count("smollm3", m.config, false));
  TempDir kept("smollm3_kept");
  generate_and_load({.family = "smollm3", .out_dir = kept.str(), .overrides = {{"no_rope_layers", {0, 1, 1, 1, 1}}}});
  EXPECT_EQ(Json::parse(read_file(kept.path() / "config.json"))["no_rope_layers"], Json({0, 1, 1, 1, 1}));
}

TEST(TestGen, ExplicitLayerTypesOverrideIsKept) {
  TempDir dir("explicit_types");
  Json types = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  Loaded m = generate_and_load({.family = "gemma4",
                                .out_dir = dir.str(),
                                .overrides = {{"num_hidden_layers", 4}, {"layer_types", types}, {"num_kv_shared_layers", 0}}});
  EXPECT_EQ(m.config.layer_types[1], "full_attention");
  EXPECT_EQ(shape_of(m.checkpoint, "model.language_model.layers.1.self_attn.k_proj.weight"),
            (Shape{m.config.num_key_value_heads * text_int(m.config, "global_head_dim"), m.config.hidden_size}));
}

// google/gemma-4-26B-A4B's MoE layers (docs/moe_families.md §1.3): every layer gets the router,
// the fused experts and three more norms beside the dense MLP, under the hub's names; the
// router's scales are not all ones (so the tests see a dropped factor).
TEST(TestGen, Gemma4MixtureOfExpertsTensors) {
  TempDir dir("gemma4_moe");
  Loaded m = generate_and_load({.family = "gemma4",
                                .out_dir = dir.str(),
                                .overrides = {{"enable_moe_block", true}, {"num_experts", 8}, {"top_k_experts", 2},
                                              {"moe_intermediate_size", 16}}});
  const int64_t H = m.config.hidden_size, E = 8, I = 16;
  int64_t dense = expected_tensor_count("gemma4", m.config, false);
  EXPECT_EQ(static_cast<int64_t>(m.checkpoint.names().size()), dense + m.config.num_hidden_layers * 8);
  for (int64_t l = 0; l < m.config.num_hidden_layers; ++l) {
    const std::string p = "model.language_model.layers." + std::to_string(l) + ".";
    EXPECT_EQ(shape_of(m.checkpoint, p + "router.proj.weight"), (Shape{E, H}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "router.scale"), (Shape{H}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "router.per_expert_scale"), (Shape{E}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "experts.gate_up_proj"), (Shape{E, 2 * I, H}));
    EXPECT_EQ(shape_of(m.checkpoint, p + "experts.down_proj"), (Shape{E, H, I}));
    for (const char* n : {"post_feedforward_layernorm_1", "pre_feedforward_layernorm_2", "post_feedforward_layernorm_2"})
      EXPECT_EQ(shape_of(m.checkpoint, p + n + ".weight"), (Shape{H})) << n;
  }
  const hf::TensorView* s = m.checkpoint.find("model.language_model.layers.0.router.per_expert_scale");
  ASSERT_NE(s, nullptr);
  double far = 0;
  for (int64_t e = 0; e < E; ++e) far = std::max(far, std::abs(s->get(e) - 1.0));
  EXPECT_GT(far, 0.1);
  for (const char* key : {"num_experts", "top_k_experts", "moe_intermediate_size"}) {
    Json over = {{"enable_moe_block", true}, {"num_experts", 8}, {"top_k_experts", 2}, {"moe_intermediate_size", 16}};
    over[key] = nullptr;
    Status st = generate_checkpoint({.family = "gemma4", .out_dir = (dir.path() / "bad").string(), .overrides = over});
    EXPECT_FALSE(st.is_ok()) << key;
    EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
  }
}

TEST(TestGen, TieOptionWins) {
  TempDir dir("tie");
  Loaded m = generate_and_load({.family = "llama", .out_dir = dir.str(), .tie_word_embeddings = true});
  EXPECT_TRUE(m.config.tie_word_embeddings);
  EXPECT_EQ(m.checkpoint.find("lm_head.weight"), nullptr);
}

TEST(TestGen, ErrorsNameWhatIsWrong) {
  TempDir dir("errors");
  Status s = generate_checkpoint({.family = "bert", .out_dir = dir.str()});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("'bert'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("gemma3n"), std::string::npos) << s.message();

  s = generate_checkpoint({.family = "llama", .out_dir = dir.str(), .dtype = DType::kI8});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("I8"), std::string::npos) << s.message();

  s = generate_checkpoint({.family = "llama", .out_dir = dir.str(), .overrides = Json::array({1})});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);

  s = generate_checkpoint({.family = "llama", .out_dir = dir.str(), .overrides = {{"num_key_value_heads", 3}}});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("num_key_value_heads"), std::string::npos) << s.message();

  s = generate_checkpoint({.family = "qwen2", .out_dir = dir.str(), .overrides = {{"hidden_size", "wide"}}});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("hidden_size"), std::string::npos) << s.message();

  s = generate_checkpoint({.family = "gemma4", .out_dir = dir.str(), .overrides = {{"num_kv_shared_layers", 4}}});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);  // layers 2..5 shared, no full layer before 2
  EXPECT_NE(s.message().find("kv-shared layer"), std::string::npos) << s.message();

  s = generate_checkpoint({.family = "llama", .out_dir = dir.str(), .overrides = {{"vocab_size", 1 << 20}, {"hidden_size", 4096}}});
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("tiny"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir.path() / "model.safetensors"));

  auto t = tiny_config("nope");
  EXPECT_FALSE(t.is_ok());
}

}  // namespace
}  // namespace og::testgen
