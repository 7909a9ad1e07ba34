// Falcon (FalconConfig; transformers models/falcon/modeling_falcon.py + configuration_falcon.py),
// computed here from its own modules:
//   qkv = query_key_value(n) split by _split_heads:
//     new_decoder_architecture: viewed [num_kv_heads, heads / num_kv_heads + 2, head_dim]: each
//       group's q heads, then its k, then its v (k and v shared by the group's q heads);
//     else multi_query: viewed [heads + 2, head_dim]: every q head, then the one k and v;
//     else viewed [heads, 3, head_dim]: per head q, k, v;
//   rotate-half rope on the whole head (rope_theta); a = dense(attention(q, k, v))
//   block: new_decoder_architecture: x + a(ln_attn(x)) + mlp(ln_mlp(x)) (num_ln_in_parallel_attn
//     2, the default there), or both from input_layernorm (1); else parallel_attn (default):
//     x + a(ln(x)) + mlp(ln(x)) with the one input_layernorm; else x += a(input_layernorm(x)),
//     x += mlp(post_attention_layernorm(x)).
//   mlp(h) = dense_4h_to_h(act(dense_h_to_4h(h))) (activation, gelu; ffn_hidden_size, 4 hidden);
//   every projection biased iff `bias`; LayerNorms with biases (layer_norm_epsilon);
//   logits = ln_f(x) word_embeddingsᵀ (lm_head.weight when untied). alibi refused.
#include <cmath>
#include <string>

#include "reference/families/families.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

Result<std::vector<int64_t>> falcon_windows(const hf::ModelConfig& c) {
  return std::vector<int64_t>(static_cast<size_t>(c.num_hidden_layers), 0);
}

struct Ln {
  std::vector<double> w, b;
};

Result<std::vector<double>> falcon_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                           const ForwardOptions&) {
  const hf::JsonFields t = c.text_fields();
  const int64_t H = c.hidden_size, heads = c.num_attention_heads, T = static_cast<int64_t>(tokens.size());
  if (heads <= 0 || H % heads != 0) return unsupported("{}: hidden_size {} is not a multiple of num_attention_heads {}", c.path, H, heads);
  const int64_t D = H / heads;
  OG_ASSIGN_OR_RETURN(const bool alibi, t.get_bool("alibi", false));
  if (alibi) return unsupported("{}: alibi is not supported", c.path);
  OG_ASSIGN_OR_RETURN(const bool new_arch, t.get_bool("new_decoder_architecture", false));
  OG_ASSIGN_OR_RETURN(const bool multi_query, t.get_bool("multi_query", true));
  OG_ASSIGN_OR_RETURN(const bool parallel, t.get_bool("parallel_attn", true));
  OG_ASSIGN_OR_RETURN(const int64_t n_ln, t.get_int("num_ln_in_parallel_attn", new_arch ? 2 : 1));
  OG_ASSIGN_OR_RETURN(const bool bias, t.get_bool("bias", false));
  OG_ASSIGN_OR_RETURN(const double eps, t.get_double("layer_norm_epsilon", 1e-5));
  OG_ASSIGN_OR_RETURN(const std::string act_name, t.get_string("activation", "gelu"));
  OG_ASSIGN_OR_RETURN(Activation act, parse_activation(act_name, c.path + ": field 'activation'"));
  OG_ASSIGN_OR_RETURN(int64_t kv_heads, t.get_int("num_kv_heads", heads));
  if (!new_arch && multi_query) kv_heads = 1;
  if (kv_heads <= 0 || heads % kv_heads != 0) return unsupported("{}: {} heads in {} kv groups", c.path, heads, kv_heads);
  if (!new_arch && !multi_query && kv_heads != heads) return unsupported("{}: per-head q, k, v with {} kv heads", c.path, kv_heads);
  if (new_arch && !parallel) return unsupported("{}: new_decoder_architecture without parallel_attn", c.path);
  OG_ASSIGN_OR_RETURN(RopeSpec rope, parse_uniform_rope(c, 10000.0));
  OG_TRY(check_rope_width(rope, D, c.path));
  if (!rope_long_inv_freq(rope, D).empty()) return unsupported("{}: rope type '{}' is not supported for falcon", c.path, rope.type);
  const std::vector<double> inv_freq = rope_inv_freq(rope, D);

  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, "transformer." + name, shape); };
  auto optional = [&](const std::string& name, int64_t n) -> Result<const hf::TensorView*> {
    if (!bias) return nullptr;
    return tensor(name, {n});
  };
  auto layer_norm_of = [&](const std::string& name) -> Result<Ln> {
    Ln ln;
    OG_ASSIGN_OR_RETURN(ln.w, vector_f64(ckpt, "transformer." + name + ".weight", H));
    OG_ASSIGN_OR_RETURN(ln.b, vector_f64(ckpt, "transformer." + name + ".bias", H));
    return ln;
  };
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, tensor("word_embeddings.weight", {c.vocab_size, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H]
  const int64_t KV = kv_heads * D, fused = H + 2 * KV, per_kv = heads / kv_heads;
  const AttentionParams params{.n_heads = heads, .n_kv_heads = kv_heads, .head_dim = D,
                               .scale = 1.0 / std::sqrt(static_cast<double>(D)), .softcap = 0, .window = 0};

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string b = "h." + std::to_string(l) + ".";
    const int64_t inner = c.intermediate_size[static_cast<size_t>(l)];  // ffn_hidden_size (falcon_derive)
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wqkv, tensor(b + "self_attention.query_key_value.weight", {fused, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* bqkv, optional(b + "self_attention.query_key_value.bias", fused));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wo, tensor(b + "self_attention.dense.weight", {H, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* bo, optional(b + "self_attention.dense.bias", H));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* up, tensor(b + "mlp.dense_h_to_4h.weight", {inner, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* up_b, optional(b + "mlp.dense_h_to_4h.bias", inner));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* down, tensor(b + "mlp.dense_4h_to_h.weight", {H, inner}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* down_b, optional(b + "mlp.dense_4h_to_h.bias", H));
    auto mlp = [&](const Mat& h) {
      Mat m = linear(h, *up, up_b);
      for (double& e : m.v) e = activate(act, e);
      return linear(m, *down, down_b);
    };
    auto attend = [&](const Mat& n) {
      const Mat qkv = linear(n, *wqkv, bqkv);  // [T, H + 2 KV]
      Mat q(T, H), k(T, KV), v(T, KV);
      for (int64_t r = 0; r < T; ++r) {
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < D; ++d) {
            int64_t at = h * D + d;                                          // multi_query: q heads first
            if (new_arch) at = (h / per_kv) * (per_kv + 2) * D + (h % per_kv) * D + d;
            else if (!multi_query) at = h * 3 * D + d;
            q.at(r, h * D + d) = qkv.at(r, at);
          }
        for (int64_t g = 0; g < kv_heads; ++g)
          for (int64_t d = 0; d < D; ++d) {
            int64_t kat = H + d, vat = H + D + d;                            // multi_query: after every q
            if (new_arch) kat = g * (per_kv + 2) * D + per_kv * D + d, vat = kat + D;
            else if (!multi_query) kat = g * 3 * D + D + d, vat = kat + D;
            k.at(r, g * D + d) = qkv.at(r, kat);
            v.at(r, g * D + d) = qkv.at(r, vat);
          }
      }
      apply_rope(q, heads, D, inv_freq, rope.attention_factor);
      apply_rope(k, kv_heads, D, inv_freq, rope.attention_factor);
      return linear(attention(q, k, v, params), *wo, bo);
    };
    if (new_arch && n_ln == 2) {
      OG_ASSIGN_OR_RETURN(Ln ln_attn, layer_norm_of(b + "ln_attn"));
      OG_ASSIGN_OR_RETURN(Ln ln_mlp, layer_norm_of(b + "ln_mlp"));
      const Mat a = attend(layer_norm(x, ln_attn.w, ln_attn.b, eps, H));
      Mat m = mlp(layer_norm(x, ln_mlp.w, ln_mlp.b, eps, H));
      add_inplace(m, a);  // mlp_output += attention_output
      add_inplace(x, m);
    } else if (parallel) {
      OG_ASSIGN_OR_RETURN(Ln ln, layer_norm_of(b + "input_layernorm"));
      const Mat n = layer_norm(x, ln.w, ln.b, eps, H);
      const Mat a = attend(n);
      Mat m = mlp(n);
      add_inplace(m, a);
      add_inplace(x, m);
    } else {
      OG_ASSIGN_OR_RETURN(Ln ln1, layer_norm_of(b + "input_layernorm"));
      OG_ASSIGN_OR_RETURN(Ln ln2, layer_norm_of(b + "post_attention_layernorm"));
      add_inplace(x, attend(layer_norm(x, ln1.w, ln1.b, eps, H)));
      add_inplace(x, mlp(layer_norm(x, ln2.w, ln2.b, eps, H)));
    }
  }
  OG_ASSIGN_OR_RETURN(Ln final_norm, layer_norm_of("ln_f"));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *embed, {"lm_head.weight"}));
  return linear(layer_norm(x, final_norm.w, final_norm.b, eps, H), *head).v;
}

// ffn_hidden_size null: 4 hidden (FalconConfig), as intermediate_size for the shared readers.
Status falcon_derive(hf::Json& text, const std::string& path) { return mlp_width_from(text, path, "ffn_hidden_size", "hidden_size"); }

constexpr ModelType kTypes[] = {{"falcon", false}};

}  // namespace

// FalconConfig's defaults for keys a config.json may omit (tie_word_embeddings=True).
const Family kFalconFamily{"falcon", kTypes, true,
                           R"({"vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
                               "layer_norm_epsilon": 1e-5, "alibi": false, "new_decoder_architecture": false,
                               "multi_query": true, "parallel_attn": true, "bias": false, "max_position_embeddings": 2048,
                               "rope_theta": 10000.0, "activation": "gelu"})",
                           &falcon_forward, &falcon_windows, nullptr, R"({"n_embed": "hidden_size"})", &falcon_derive};

}  // namespace og::reference
