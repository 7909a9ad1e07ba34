// GPT-NeoX (GPTNeoXConfig; transformers models/gpt_neox/modeling_gpt_neox.py +
// configuration_gpt_neox.py), computed here from its own modules rather than through the
// shared decoders, as its names and its fused projection differ from all of theirs:
//   qkv = query_key_value(ln1(x)) viewed as [T, heads, 3 * head_dim], chunked into q, k, v
//         per head; rotate-half rope on the first int(head_dim * rotary_pct) dims (base
//         rotary_emb_base); a = dense(attention(q, k, v))
//   use_parallel_residual: x = mlp(ln2(x)) + a + x;  else: x = x + a; x = mlp(ln2(x)) + x
//   mlp(h) = dense_4h_to_h(act(dense_h_to_4h(h))), every projection biased (the attention's iff
//   attention_bias); LayerNorms with biases (layer_norm_eps); logits = embed_out(final_layer_norm(x)).
#include <cmath>
#include <string>

#include "reference/blocks.h"
#include "reference/families/families.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

Result<std::vector<int64_t>> neox_windows(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(std::vector<bool> given, sliding_flags_from_layer_types(c));
  for (size_t i = 0; i < given.size(); ++i)
    if (given[i]) return unsupported("{}: layer {} is sliding_attention, which GPT-NeoX never applies", c.path, i);
  return std::vector<int64_t>(static_cast<size_t>(c.num_hidden_layers), 0);
}

struct Ln {
  std::vector<double> w, b;
};

Result<std::vector<double>> neox_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                         const ForwardOptions&) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(require_causal(c));
  const int64_t H = c.hidden_size, heads = c.num_attention_heads, D = H / heads, T = static_cast<int64_t>(tokens.size());
  if (D * heads != H) return unsupported("{}: hidden_size {} is not a multiple of num_attention_heads {}", c.path, H, heads);
  OG_ASSIGN_OR_RETURN(double eps, t.get_double("layer_norm_eps", 1e-5));
  OG_ASSIGN_OR_RETURN(bool attention_bias, t.get_bool("attention_bias", true));
  OG_ASSIGN_OR_RETURN(bool parallel, t.get_bool("use_parallel_residual", true));
  OG_ASSIGN_OR_RETURN(std::string act_name, t.get_string("hidden_act", "gelu"));
  OG_ASSIGN_OR_RETURN(Activation act, parse_activation(act_name, c.path + ": field '" + t.field_name("hidden_act") + "'"));
  OG_ASSIGN_OR_RETURN(RopeSpec rope, parse_uniform_rope(c, 10000.0));
  OG_ASSIGN_OR_RETURN(double pct, t.get_double("rotary_pct", 0.25));
  const int64_t rotary_dim = static_cast<int64_t>(static_cast<double>(D) * pct);
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    return unsupported("{}: rotary width int(head_dim {} * rotary_pct {}) = {} is not positive and even", c.path, D, pct,
                       rotary_dim);
  OG_TRY(check_rope_width(rope, rotary_dim, c.path));
  const std::vector<double> inv_freq = rope_inv_freq(rope, rotary_dim);
  if (!rope_long_inv_freq(rope, rotary_dim).empty())
    return unsupported("{}: rope type '{}' is not supported for gpt_neox", c.path, rope.type);

  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };
  auto layer_norm_of = [&](const std::string& name) -> Result<Ln> {
    Ln ln;
    OG_ASSIGN_OR_RETURN(ln.w, vector_f64(ckpt, name + ".weight", H));
    OG_ASSIGN_OR_RETURN(ln.b, vector_f64(ckpt, name + ".bias", H));
    return ln;
  };
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, tensor("gpt_neox.embed_in.weight", {c.vocab_size, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H]
  const AttentionParams params{.n_heads = heads, .n_kv_heads = heads, .head_dim = D,
                               .scale = 1.0 / std::sqrt(static_cast<double>(D)), .softcap = 0, .window = 0};

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string pre = "gpt_neox.layers." + std::to_string(l) + ".";
    OG_ASSIGN_OR_RETURN(Ln ln1, layer_norm_of(pre + "input_layernorm"));
    OG_ASSIGN_OR_RETURN(Ln ln2, layer_norm_of(pre + "post_attention_layernorm"));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wqkv, tensor(pre + "attention.query_key_value.weight", {3 * H, H}));
    const hf::TensorView *bqkv = nullptr, *bo = nullptr;
    if (attention_bias) {
      OG_ASSIGN_OR_RETURN(bqkv, tensor(pre + "attention.query_key_value.bias", {3 * H}));
      OG_ASSIGN_OR_RETURN(bo, tensor(pre + "attention.dense.bias", {H}));
    }
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wo, tensor(pre + "attention.dense.weight", {H, H}));
    const int64_t I = c.intermediate_size[static_cast<size_t>(l)];
    MlpWeights mw{.intermediate = I, .act = act};  // plain: dense_4h_to_h(act(dense_h_to_4h(h)))
    OG_ASSIGN_OR_RETURN(mw.up, tensor(pre + "mlp.dense_h_to_4h.weight", {I, H}));
    OG_ASSIGN_OR_RETURN(mw.up_bias, tensor(pre + "mlp.dense_h_to_4h.bias", {I}));
    OG_ASSIGN_OR_RETURN(mw.down, tensor(pre + "mlp.dense_4h_to_h.weight", {H, I}));
    OG_ASSIGN_OR_RETURN(mw.down_bias, tensor(pre + "mlp.dense_4h_to_h.bias", {H}));

    // Attention: the fused projection's columns for head h are [q_h | k_h | v_h], D each.
    const Mat qkv = linear(layer_norm(x, ln1.w, ln1.b, eps, H), *wqkv, bqkv);  // [T, 3H]
    Mat q(T, H), k(T, H), v(T, H);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < D; ++d) {
          q.at(r, h * D + d) = qkv.at(r, h * 3 * D + d);
          k.at(r, h * D + d) = qkv.at(r, h * 3 * D + D + d);
          v.at(r, h * D + d) = qkv.at(r, h * 3 * D + 2 * D + d);
        }
    apply_rope(q, heads, D, inv_freq, rope.attention_factor);
    apply_rope(k, heads, D, inv_freq, rope.attention_factor);
    const Mat a = linear(attention(q, k, v, params), *wo, bo);  // [T, H]

    if (parallel) {
      const Mat m = plain_mlp(layer_norm(x, ln2.w, ln2.b, eps, H), mw);
      for (size_t i = 0; i < x.v.size(); ++i) x.v[i] = m.v[i] + a.v[i] + x.v[i];
    } else {
      add_inplace(x, a);
      add_inplace(x, plain_mlp(layer_norm(x, ln2.w, ln2.b, eps, H), mw));
    }
  }
  OG_ASSIGN_OR_RETURN(Ln final_norm, layer_norm_of("gpt_neox.final_layer_norm"));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *embed, {"embed_out.weight"}));
  return linear(layer_norm(x, final_norm.w, final_norm.b, eps, H), *head).v;
}

constexpr ModelType kTypes[] = {{"gpt_neox", false}};

}  // namespace

// GPTNeoXConfig's defaults for keys a config.json may omit (tie_word_embeddings=False).
const Family kGptNeoxFamily{"gpt_neox", kTypes, false,
                            R"({"layer_norm_eps": 1e-5, "hidden_act": "gelu", "rotary_pct": 0.25, "rotary_emb_base": 10000,
                                "attention_bias": true, "use_parallel_residual": true})",
                            &neox_forward, &neox_windows, nullptr, R"({"rotary_emb_base": "rope_theta"})"};

}  // namespace og::reference
