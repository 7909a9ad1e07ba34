// GPT-2 (GPT2LMHeadModel, modeling_gpt2.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/gpt2.h"

namespace og::testgen {

Result<std::vector<TensorSpec>> gpt2_like_tensors(const Json& text, const FamilyContext& ctx, bool linear) {
  const hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(const int64_t vocab, f.get_int("vocab_size"));
  OG_ASSIGN_OR_RETURN(const int64_t hidden, f.get_int("n_embd"));
  OG_ASSIGN_OR_RETURN(const int64_t layers, f.get_int("n_layer"));
  OG_ASSIGN_OR_RETURN(const int64_t heads, f.get_int("n_head"));
  OG_ASSIGN_OR_RETURN(const int64_t positions, f.get_int("n_positions", 1024));  // GPT2Config's default
  OG_ASSIGN_OR_RETURN(const int64_t inner, f.has("n_inner") ? f.get_int("n_inner") : Result<int64_t>(4 * hidden));
  OG_ASSIGN_OR_RETURN(const bool tie, f.get_bool("tie_word_embeddings", ctx.tie_default));
  for (auto [key, v] : {std::pair{"vocab_size", vocab}, std::pair{"n_embd", hidden}, std::pair{"n_layer", layers},
                        std::pair{"n_head", heads}, std::pair{"n_positions", positions}, std::pair{"n_inner", inner}})
    if (v <= 0) return f.invalid(key, "a positive integer");
  if (hidden % heads != 0) return f.invalid("n_embd", "a multiple of n_head");
  bool multi_query = false;
  if (linear) { OG_ASSIGN_OR_RETURN(multi_query, f.get_bool("multi_query", true)); }
  const int64_t kv = multi_query ? hidden / heads : hidden;  // k's (and v's) width
  const std::string pre = ctx.hub_layout ? "" : "transformer.";
  SpecList s;
  auto layer_norm = [&](const std::string& prefix) {
    s.norm(prefix, hidden, kUnitNormInit);
    s.add(prefix + ".bias", {hidden}, kBiasInit);
  };
  auto projection = [&](const std::string& prefix, int64_t in, int64_t out, double gain = 1.0) {
    if (linear) return s.linear(prefix, out, in, true, gain);
    s.add(prefix + ".weight", {in, out}, linear_init(in, gain));  // Conv1D
    s.add(prefix + ".bias", {out}, kBiasInit);
  };
  s.add(pre + "wte.weight", {vocab, hidden}, kEmbeddingInit);
  s.add(pre + "wpe.weight", {positions, hidden}, kEmbeddingInit);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = fmt::format("{}h.{}.", pre, i);
    layer_norm(p + "ln_1");
    projection(p + "attn.c_attn", hidden, hidden + 2 * kv, kQkGain);
    projection(p + "attn.c_proj", hidden, hidden);
    layer_norm(p + "ln_2");
    projection(p + "mlp.c_fc", hidden, inner);
    projection(p + "mlp.c_proj", inner, hidden);
  }
  layer_norm(pre + "ln_f");
  if (!tie) s.add("lm_head.weight", {vocab, hidden}, linear_init(hidden, kHeadGain));
  return s.take();
}

Status gpt2_like_derive(Json& text, const Json&, const FamilyContext&) {
  for (auto [usual, own] : {std::pair{"hidden_size", "n_embd"}, std::pair{"num_hidden_layers", "n_layer"},
                            std::pair{"num_attention_heads", "n_head"}, std::pair{"intermediate_size", "n_inner"},
                            std::pair{"max_position_embeddings", "n_positions"}})
    if (text.contains(usual)) {
      text[own] = text[usual];
      text.erase(usual);
    }
  return Status::ok();
}

namespace {

Result<std::vector<TensorSpec>> gpt2_tensors(const Json& text, const FamilyContext& ctx) {
  return gpt2_like_tensors(text, ctx, false);
}

// openai-community/gpt2's field set (gelu_new, layer_norm_epsilon 1e-5, n_inner absent, tied)
// at n_embd 64, 4 heads, 4096 positions (the context the tests export by default).
Json gpt2_config() {
  return {
      {"activation_function", "gelu_new"},
      {"architectures", {"GPT2LMHeadModel"}},
      {"attn_pdrop", 0.1},
      {"bos_token_id", 0},
      {"embd_pdrop", 0.1},
      {"eos_token_id", 0},
      {"initializer_range", 0.02},
      {"layer_norm_epsilon", 1e-05},
      {"model_type", "gpt2"},
      {"n_ctx", 4096},
      {"n_embd", 64},
      {"n_head", 4},
      {"n_layer", 4},
      {"n_positions", 4096},
      {"resid_pdrop", 0.1},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> gpt2_generators() {
  return {
      {"gpt2", false, "torch_dtype", true, 0, 0, gpt2_config, gpt2_like_derive, gpt2_tensors},
  };
}

}  // namespace og::testgen
