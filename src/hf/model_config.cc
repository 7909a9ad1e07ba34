#include "hf/model_config.h"

#include <array>

#include "base/mapped_file.h"

namespace og::hf {
namespace {

struct ModelTypeInfo {
  const char* model_type;
  const char* family;
  bool wrapper;  // text model under text_config
  bool tie_default;
};

// transformers' defaults for tie_word_embeddings differ by family.
constexpr std::array<ModelTypeInfo, 12> kModelTypes{{
    {"llama", "llama", false, false},
    {"mistral", "mistral", false, false},
    {"qwen2", "qwen2", false, false},
    {"qwen3", "qwen3", false, false},
    {"phi3", "phi3", false, false},
    {"gemma2", "gemma2", false, true},
    {"gemma3_text", "gemma3", false, true},
    {"gemma3", "gemma3", true, true},
    {"gemma3n", "gemma3n", true, true},
    {"gemma3n_text", "gemma3n", false, true},
    {"gemma4", "gemma4", true, true},
    {"gemma4_text", "gemma4", false, true},
}};

const ModelTypeInfo* find_model_type(const std::string& t) {
  for (const auto& info : kModelTypes)
    if (t == info.model_type) return &info;
  return nullptr;
}

// transformers' configuration defaults for fields that published configs omit (the
// multimodal wrappers' text_config often lists only what differs from the defaults).
// Only absent keys are filled; an explicit null stays null.
void apply_family_defaults(const std::string& family, Json& text) {
  static const Json kGemma2 = {{"vocab_size", 256000}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                               {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"head_dim", 256}, {"max_position_embeddings", 8192}, {"rms_norm_eps", 1e-6},
                               {"rope_theta", 10000.0}, {"query_pre_attn_scalar", 256}, {"sliding_window", 4096},
                               {"final_logit_softcapping", 30.0}, {"attn_logit_softcapping", 50.0},
                               {"hidden_activation", "gelu_pytorch_tanh"}};
  static const Json kGemma3 = {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                               {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"head_dim", 256}, {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-6},
                               {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0},
                               {"query_pre_attn_scalar", 256}, {"sliding_window", 4096}, {"sliding_window_pattern", 6},
                               {"hidden_activation", "gelu_pytorch_tanh"}};
  static const Json kGemma4 = {{"vocab_size", 262144}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                               {"num_hidden_layers", 30}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"head_dim", 256}, {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-6},
                               {"sliding_window", 512}, {"hidden_activation", "gelu_pytorch_tanh"}};
  static const Json kGemma3n = {{"head_dim", 256}, {"num_key_value_heads", 2}, {"num_kv_shared_layers", 15},
                                {"hidden_activation", "gelu_pytorch_tanh"}, {"rms_norm_eps", 1e-6}};
  static const Json kQwen3 = {{"head_dim", 128}};
  static const Json kPhi3 = {{"rms_norm_eps", 1e-5}};
  static const Json kMistral = {{"num_key_value_heads", 8}, {"sliding_window", 4096}};
  const Json* d = family == "gemma2"   ? &kGemma2
                  : family == "gemma3" ? &kGemma3
                  : family == "gemma4" ? &kGemma4
                  : family == "gemma3n" ? &kGemma3n
                  : family == "qwen3"  ? &kQwen3
                  : family == "phi3"   ? &kPhi3
                  : family == "mistral" ? &kMistral
                                       : nullptr;
  if (d == nullptr || !text.is_object()) return;
  for (auto it = d->begin(); it != d->end(); ++it)
    if (!text.contains(it.key())) text[it.key()] = it.value();
}

}  // namespace

std::string supported_model_types() {
  std::string out;
  for (const auto& info : kModelTypes) {
    if (!out.empty()) out += ", ";
    out += info.model_type;
  }
  return out;
}

Result<ModelConfig> parse_model_config(const std::string& json_text, const std::string& path) {
  ModelConfig c;
  c.path = path;
  OG_ASSIGN_OR_RETURN(c.root, parse_json(json_text, path));
  if (!c.root.is_object()) return bad_input("{}: expected a JSON object at top level", path);
  JsonFields root(c.root, path);
  OG_ASSIGN_OR_RETURN(c.model_type, root.get_string("model_type"));
  const ModelTypeInfo* info = find_model_type(c.model_type);
  if (info == nullptr)
    return unsupported("{}: unsupported model_type '{}' (supported: {})", path, c.model_type,
                       supported_model_types());
  c.family = info->family;
  c.is_wrapped = info->wrapper;
  if (info->wrapper) {
    OG_ASSIGN_OR_RETURN(JsonFields tc, root.get_object("text_config"));
    (void)tc;
    c.text = c.root.at("text_config");
  } else {
    c.text = c.root;
  }
  apply_family_defaults(c.family, c.text);
  JsonFields t = c.text_fields();
  c.text_model_type = c.model_type;
  if (info->wrapper) { OG_ASSIGN_OR_RETURN(c.text_model_type, t.get_string("model_type", c.model_type)); }

  OG_ASSIGN_OR_RETURN(c.vocab_size, t.get_int("vocab_size"));
  OG_ASSIGN_OR_RETURN(c.hidden_size, t.get_int("hidden_size"));
  OG_ASSIGN_OR_RETURN(c.num_hidden_layers, t.get_int("num_hidden_layers"));
  OG_ASSIGN_OR_RETURN(c.num_attention_heads, t.get_int("num_attention_heads"));
  OG_ASSIGN_OR_RETURN(c.num_key_value_heads, t.get_int("num_key_value_heads", c.num_attention_heads));
  auto positive = [&](const char* key, int64_t v) -> Status {
    if (v <= 0) return t.invalid(key, "a positive integer");
    return Status::ok();
  };
  OG_TRY(positive("vocab_size", c.vocab_size));
  OG_TRY(positive("hidden_size", c.hidden_size));
  OG_TRY(positive("num_hidden_layers", c.num_hidden_layers));
  OG_TRY(positive("num_attention_heads", c.num_attention_heads));
  OG_TRY(positive("num_key_value_heads", c.num_key_value_heads));
  if (c.num_hidden_layers > 4096) return t.invalid("num_hidden_layers", "at most 4096");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return bad_input("{}: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})", path,
                     c.num_attention_heads, c.num_key_value_heads);
  if (t.has("head_dim")) {
    OG_ASSIGN_OR_RETURN(c.head_dim, t.get_int("head_dim"));
    OG_TRY(positive("head_dim", c.head_dim));
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      return bad_input("{}: hidden_size ({}) is not a multiple of num_attention_heads ({}) and head_dim is absent",
                       path, c.hidden_size, c.num_attention_heads);
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (t.has("intermediate_size")) {
    OG_ASSIGN_OR_RETURN(c.intermediate_size, t.get_int_list("intermediate_size"));
    if (c.intermediate_size.size() == 1)
      c.intermediate_size.assign(static_cast<size_t>(c.num_hidden_layers), c.intermediate_size[0]);
    if (static_cast<int64_t>(c.intermediate_size.size()) != c.num_hidden_layers)
      return t.invalid("intermediate_size", fmt::format("an integer or a list of {} integers", c.num_hidden_layers));
    for (int64_t v : c.intermediate_size)
      if (v <= 0) return t.invalid("intermediate_size", "positive");
  } else {
    return t.missing("intermediate_size");
  }
  OG_ASSIGN_OR_RETURN(c.rms_norm_eps, t.get_double("rms_norm_eps", 1e-6));
  OG_ASSIGN_OR_RETURN(c.max_position_embeddings, t.get_int("max_position_embeddings", 4096));
  OG_ASSIGN_OR_RETURN(c.sliding_window, t.get_optional_int("sliding_window"));
  if (c.sliding_window && *c.sliding_window <= 0) return t.invalid("sliding_window", "a positive integer or null");
  if (t.has("layer_types")) {
    OG_ASSIGN_OR_RETURN(c.layer_types, t.get_string_list("layer_types"));
    if (static_cast<int64_t>(c.layer_types.size()) != c.num_hidden_layers)
      return t.invalid("layer_types", fmt::format("a list of {} layer types (num_hidden_layers)", c.num_hidden_layers));
  }
  OG_ASSIGN_OR_RETURN(c.num_kv_shared_layers, t.get_int("num_kv_shared_layers", 0));
  if (c.num_kv_shared_layers < 0 || c.num_kv_shared_layers >= c.num_hidden_layers)
    return t.invalid("num_kv_shared_layers", fmt::format("between 0 and {}", c.num_hidden_layers - 1));

  // Tying: the text config's flag, else the wrapper's, else the family's default.
  bool tie = info->tie_default;
  if (root.has("tie_word_embeddings")) { OG_ASSIGN_OR_RETURN(tie, root.get_bool("tie_word_embeddings", tie)); }
  if (t.has("tie_word_embeddings")) { OG_ASSIGN_OR_RETURN(tie, t.get_bool("tie_word_embeddings", tie)); }
  c.tie_word_embeddings = tie;

  if (t.has("bos_token_id")) { OG_ASSIGN_OR_RETURN(c.bos_token_id, t.get_optional_int("bos_token_id")); }
  else { OG_ASSIGN_OR_RETURN(c.bos_token_id, root.get_optional_int("bos_token_id")); }
  if (root.has("eos_token_id")) { OG_ASSIGN_OR_RETURN(c.eos_token_ids, root.get_int_list("eos_token_id")); }
  else if (t.has("eos_token_id")) { OG_ASSIGN_OR_RETURN(c.eos_token_ids, t.get_int_list("eos_token_id")); }
  std::string dtype_key = t.has("torch_dtype") ? "torch_dtype" : "dtype";
  OG_ASSIGN_OR_RETURN(c.torch_dtype, t.get_string(dtype_key, ""));
  if (c.torch_dtype.empty()) {
    dtype_key = root.has("torch_dtype") ? "torch_dtype" : "dtype";
    OG_ASSIGN_OR_RETURN(c.torch_dtype, root.get_string(dtype_key, ""));
  }
  return c;
}

Result<ModelConfig> load_model_config(const std::string& path) {
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_model_config(text, path);
}

}  // namespace og::hf
