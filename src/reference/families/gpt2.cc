// GPT-2 (GPT2Config; transformers models/gpt2/modeling_gpt2.py + configuration_gpt2.py) and
// GPTBigCode (StarCoder, SantaCoder; models/gpt_bigcode/, GPT-2's block with nn.Linear projections
// and multi-query attention), computed here from their own modules (reference/families/gpt2_like.h):
//   x = wte[ids] + wpe[positions]                                  (positions 0 .. T - 1)
//   per block h.N: a = attn.c_proj(attention(split(attn.c_attn(ln_1(x))))); x = x + a
//                  x = x + mlp.c_proj(act(mlp.c_fc(ln_2(x))))
//   logits = ln_f(x) wteᵀ (lm_head.weight when untied)
// GPT-2's projections are Conv1D, y = x W + b with W [in, out] (transformers.pytorch_utils.Conv1D),
// and c_attn's output columns are q, k, v one after the other (its split(embed_dim, dim=2)), each
// [T, heads * head_dim]. GPTBigCode's are nn.Linear ([out, in]); with multi_query (its default)
// c_attn's outputs are q [heads * head_dim], then one k and one v [head_dim] (key_value.split),
// else per head [q_h, k_h, v_h] (its view(..., heads, 3 * head_dim)). head_dim = n_embd / n_head;
// no rotary embedding. The scores are q·k / sqrt(head_dim) when scale_attn_weights (else q·k),
// divided further by layer + 1 when GPT-2's scale_attn_by_inverse_layer_idx (GPTBigCode's
// softmax upcast unscales and rescales by layer + 1, the same scores). LayerNorms with biases
// (layer_norm_epsilon); the MLP is n_inner wide (4 n_embd when null) with activation_function. A
// position at or past n_positions has no row in wpe: refused.
#include <cmath>
#include <string>

#include "reference/families/families.h"
#include "reference/families/gpt2_like.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

struct Ln {
  std::vector<double> w, b;
};

}  // namespace

Result<std::vector<int64_t>> gpt2_like_windows(const hf::ModelConfig& c) {
  return std::vector<int64_t>(static_cast<size_t>(c.num_hidden_layers), 0);
}

Result<std::vector<double>> gpt2_like_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                              std::span<const int32_t> tokens, const Gpt2Style& style) {
  const hf::JsonFields t = c.text_fields();
  const int64_t H = c.hidden_size, heads = c.num_attention_heads, T = static_cast<int64_t>(tokens.size());
  if (heads <= 0 || H % heads != 0) return unsupported("{}: n_embd {} is not a multiple of n_head {}", c.path, H, heads);
  const int64_t D = H / heads;
  OG_ASSIGN_OR_RETURN(const double eps, t.get_double("layer_norm_epsilon", 1e-5));
  OG_ASSIGN_OR_RETURN(const std::string act_name, t.get_string("activation_function", style.default_activation));
  OG_ASSIGN_OR_RETURN(Activation act, parse_activation(act_name, c.path + ": field 'activation_function'"));
  OG_ASSIGN_OR_RETURN(const bool scaled, t.get_bool("scale_attn_weights", true));
  bool by_layer = false, multi_query = false;
  if (style.linear) {
    OG_ASSIGN_OR_RETURN(multi_query, t.get_bool("multi_query", true));
  } else {
    OG_ASSIGN_OR_RETURN(by_layer, t.get_bool("scale_attn_by_inverse_layer_idx", false));
  }
  const int64_t kv_heads = multi_query ? 1 : heads, KV = kv_heads * D;
  OG_ASSIGN_OR_RETURN(const int64_t n_positions, t.get_int("n_positions", 1024));
  if (T > n_positions) return bad_input("{}: {} tokens but wpe holds {} positions (n_positions)", c.path, T, n_positions);

  // transformer. (GPT2LMHeadModel saved by transformers) or the top level (the original files).
  const std::string pre = ckpt.find("transformer.wte.weight") != nullptr ? "transformer." : "";
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, pre + name, shape); };
  auto layer_norm_of = [&](const std::string& name) -> Result<Ln> {
    Ln ln;
    OG_ASSIGN_OR_RETURN(ln.w, vector_f64(ckpt, pre + name + ".weight", H));
    OG_ASSIGN_OR_RETURN(ln.b, vector_f64(ckpt, pre + name + ".bias", H));
    return ln;
  };
  OG_ASSIGN_OR_RETURN(const hf::TensorView* wte, tensor("wte.weight", {c.vocab_size, H}));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* wpe, tensor("wpe.weight", {n_positions, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*wte, tokens));  // [T, H]
  for (int64_t p = 0; p < T; ++p)
    for (int64_t i = 0; i < H; ++i) x.at(p, i) += wpe->get(p * H + i);

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string b = "h." + std::to_string(l) + ".";
    const int64_t inner = c.intermediate_size[static_cast<size_t>(l)];  // n_inner (gpt2_like_derive)
    OG_ASSIGN_OR_RETURN(Ln ln1, layer_norm_of(b + "ln_1"));
    OG_ASSIGN_OR_RETURN(Ln ln2, layer_norm_of(b + "ln_2"));
    // A projection's weight, [in, out] (Conv1D) or [out, in] (nn.Linear), and x through it.
    auto weight = [&](const std::string& name, int64_t in, int64_t out) {
      return style.linear ? tensor(name, {out, in}) : tensor(name, {in, out});
    };
    auto project = [&](const Mat& in, const hf::TensorView& w, const hf::TensorView* bias) {
      return style.linear ? linear(in, w, bias) : conv1d(in, w, bias);
    };
    OG_ASSIGN_OR_RETURN(const hf::TensorView* c_attn, weight(b + "attn.c_attn.weight", H, H + 2 * KV));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* c_attn_b, tensor(b + "attn.c_attn.bias", {H + 2 * KV}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* a_proj, weight(b + "attn.c_proj.weight", H, H));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* a_proj_b, tensor(b + "attn.c_proj.bias", {H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* c_fc, weight(b + "mlp.c_fc.weight", H, inner));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* c_fc_b, tensor(b + "mlp.c_fc.bias", {inner}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* m_proj, weight(b + "mlp.c_proj.weight", inner, H));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* m_proj_b, tensor(b + "mlp.c_proj.bias", {H}));

    const Mat qkv = project(layer_norm(x, ln1.w, ln1.b, eps, H), *c_attn, c_attn_b);  // [T, H + 2 KV]
    Mat q(T, H), k(T, KV), v(T, KV);
    for (int64_t r = 0; r < T; ++r) {
      for (int64_t i = 0; i < H; ++i) {
        // Per head [q_h, k_h, v_h] (GPTBigCode without multi_query), else q, k, v in blocks.
        const int64_t h = i / D, d = i % D;
        const bool per_head = style.linear && !multi_query;
        q.at(r, i) = qkv.at(r, per_head ? h * 3 * D + d : i);
        if (i < KV) {
          k.at(r, i) = qkv.at(r, per_head ? h * 3 * D + D + d : H + i);
          v.at(r, i) = qkv.at(r, per_head ? h * 3 * D + 2 * D + d : H + KV + i);
        }
      }
    }
    double scale = scaled ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;
    if (by_layer) scale /= static_cast<double>(l + 1);
    const AttentionParams params{.n_heads = heads, .n_kv_heads = kv_heads, .head_dim = D, .scale = scale, .softcap = 0, .window = 0};
    add_inplace(x, project(attention(q, k, v, params), *a_proj, a_proj_b));

    Mat m = project(layer_norm(x, ln2.w, ln2.b, eps, H), *c_fc, c_fc_b);  // [T, inner]
    for (double& e : m.v) e = activate(act, e);
    add_inplace(x, project(m, *m_proj, m_proj_b));
  }
  OG_ASSIGN_OR_RETURN(Ln final_norm, layer_norm_of("ln_f"));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *wte, {"lm_head.weight"}));
  return linear(layer_norm(x, final_norm.w, final_norm.b, eps, H), *head).v;
}

Status gpt2_like_derive(hf::Json& text, const std::string& path) { return mlp_width_from(text, path, "n_inner", "n_embd"); }

namespace {

Result<std::vector<double>> gpt2_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                         const ForwardOptions&) {
  return gpt2_like_forward(c, ckpt, tokens, {.linear = false, .default_activation = "gelu_new"});
}

constexpr ModelType kTypes[] = {{"gpt2", false}};

}  // namespace

// GPT2Config's defaults for keys a config.json may omit (tie_word_embeddings=True, the
// PretrainedConfig default), and its attribute_map as aliases.
const Family kGpt2Family{"gpt2", kTypes, true,
                         R"({"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
                             "n_inner": null, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                             "scale_attn_weights": true, "scale_attn_by_inverse_layer_idx": false})",
                         &gpt2_forward, &gpt2_like_windows, nullptr,
                         R"({"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                             "n_positions": "max_position_embeddings"})",
                         &gpt2_like_derive};

}  // namespace og::reference
