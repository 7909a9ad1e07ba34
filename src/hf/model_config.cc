#include "hf/model_config.h"

#include <cmath>

#include "base/mapped_file.h"

namespace og::hf {
namespace {

// Fills the keys of `defaults` that `text` lacks; an explicit null stays null.
void fill_absent(const Json& defaults, Json& text) {
  if (!defaults.is_object() || !text.is_object()) return;
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (!text.contains(it.key())) text[it.key()] = it.value();
}

// Copies aliased keys to their name where only the alias is present.
void apply_aliases(const Json& aliases, Json& text) {
  if (!aliases.is_object() || !text.is_object()) return;
  for (auto it = aliases.begin(); it != aliases.end(); ++it)
    if (it.value().is_string() && !text.contains(it.value().get<std::string>()) && text.contains(it.key()))
      text[it.value().get<std::string>()] = text.at(it.key());
}

}  // namespace

Result<ModelConfig> parse_model_config(const std::string& json_text, const std::string& path,
                                       const ConfigReadingFor& reading_for) {
  ModelConfig c;
  c.path = path;
  OG_ASSIGN_OR_RETURN(c.root, parse_json(json_text, path));
  if (!c.root.is_object()) return bad_input("{}: expected a JSON object at top level", path);
  JsonFields root(c.root, path);
  OG_ASSIGN_OR_RETURN(c.model_type, root.get_string("model_type"));
  OG_ASSIGN_OR_RETURN(const ConfigReading reading, reading_for(c.model_type, path));
  c.is_wrapped = reading.text_in_text_config;
  if (c.is_wrapped) {
    OG_ASSIGN_OR_RETURN(JsonFields tc, root.get_object("text_config"));
    (void)tc;
    c.text = c.root.at("text_config");
  } else {
    c.text = c.root;
  }
  apply_aliases(reading.aliases, c.text);
  fill_absent(reading.defaults, c.text);
  if (reading.derive != nullptr) OG_TRY(reading.derive(c.text, path));
  JsonFields t = c.text_fields();
  c.text_model_type = c.model_type;
  if (c.is_wrapped) { OG_ASSIGN_OR_RETURN(c.text_model_type, t.get_string("model_type", c.model_type)); }

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
  if (!(c.rms_norm_eps >= 0) || !std::isfinite(c.rms_norm_eps)) return t.invalid("rms_norm_eps", "a finite number >= 0");
  OG_ASSIGN_OR_RETURN(c.max_position_embeddings, t.get_int("max_position_embeddings", 4096));
  if (c.max_position_embeddings <= 0) return t.invalid("max_position_embeddings", "a positive integer");
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

  // Tying: the text config's flag, else the wrapper's, else the caller's default.
  bool tie = reading.tie_word_embeddings_default;
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

Result<ModelConfig> load_model_config(const std::string& path, const ConfigReadingFor& reading_for) {
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return parse_model_config(text, path, reading_for);
}

}  // namespace og::hf
