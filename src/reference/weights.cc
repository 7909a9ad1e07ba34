#include "reference/weights.h"

namespace og::reference {

Result<const hf::TensorView*> float_tensor(const hf::Checkpoint& ckpt, const std::string& name,
                                           const std::vector<int64_t>& shape) {
  OG_ASSIGN_OR_RETURN(const hf::TensorView* t, ckpt.get(name, shape));
  if (!is_float_dtype(t->dtype))
    return bad_input("{}: tensor '{}' has dtype {}; expected a float dtype", t->file, name, dtype_name(t->dtype));
  return t;
}

Result<std::vector<double>> vector_f64(const hf::Checkpoint& ckpt, const std::string& name, int64_t n) {
  OG_ASSIGN_OR_RETURN(const hf::TensorView* t, float_tensor(ckpt, name, {n}));
  return hf::to_f64(*t);
}

Result<Mat> embed_rows(const hf::TensorView& table, std::span<const int32_t> tokens) {
  const int64_t vocab = table.shape[0], hidden = table.shape[1];
  Mat x(static_cast<int64_t>(tokens.size()), hidden);  // [T, hidden]
  for (size_t t = 0; t < tokens.size(); ++t) {
    const int64_t id = tokens[t];
    if (id < 0 || id >= vocab)
      return bad_input("token {} (position {}) is outside the vocabulary [0, {}) of '{}'", id, t, vocab, table.name);
    for (int64_t i = 0; i < hidden; ++i) x.at(static_cast<int64_t>(t), i) = table.get(id * hidden + i);
  }
  return x;
}

Result<const hf::TensorView*> output_head(const hf::Checkpoint& ckpt, const hf::ModelConfig& config,
                                          const hf::TensorView& embed,
                                          const std::vector<std::string>& lm_head_names) {
  if (config.tie_word_embeddings) return &embed;
  for (const std::string& name : lm_head_names) {
    if (ckpt.find(name) == nullptr) continue;
    return float_tensor(ckpt, name, embed.shape);
  }
  return &embed;
}

Result<std::optional<double>> number_or_null(const hf::ModelConfig& config, const std::string& key,
                                             std::optional<double> fallback) {
  const hf::Json& text = config.text;
  if (!text.contains(key)) return fallback;
  if (text.at(key).is_null()) return std::optional<double>();
  OG_ASSIGN_OR_RETURN(double v, config.text_fields().get_double(key));
  return std::optional<double>(v);
}

Result<std::vector<bool>> sliding_flags_from_layer_types(const hf::ModelConfig& config) {
  std::vector<bool> sliding;
  for (size_t i = 0; i < config.layer_types.size(); ++i) {
    const std::string& type = config.layer_types[i];
    if (type != "full_attention" && type != "sliding_attention")
      return unsupported("{}: field '{}[{}]' = '{}' is not supported by the reference "
                         "(supported: full_attention, sliding_attention)",
                         config.path, config.text_fields().field_name("layer_types"), i, type);
    sliding.push_back(type == "sliding_attention");
  }
  return sliding;
}

Status mlp_width_from(hf::Json& text, const std::string& path, const std::string& width_key, const std::string& hidden_key) {
  if (text.contains("intermediate_size") && !text["intermediate_size"].is_null()) return Status::ok();
  const hf::JsonFields f(text, path);
  if (f.has(width_key)) {
    text["intermediate_size"] = text[width_key];
    return Status::ok();
  }
  OG_ASSIGN_OR_RETURN(const int64_t hidden, f.get_int(hidden_key));
  text["intermediate_size"] = 4 * hidden;
  return Status::ok();
}

Status require_causal(const hf::ModelConfig& config) {
  const hf::JsonFields t = config.text_fields();
  OG_ASSIGN_OR_RETURN(bool bidirectional, t.get_bool("use_bidirectional_attention", false));
  if (bidirectional)
    return unsupported("{}: field '{}' = true (bidirectional attention) is not supported by the reference",
                       config.path, t.field_name("use_bidirectional_attention"));
  OG_ASSIGN_OR_RETURN(bool causal, t.get_bool("is_causal", true));
  if (!causal)
    return unsupported("{}: field '{}' = false (non-causal attention) is not supported by the reference",
                       config.path, t.field_name("is_causal"));
  return Status::ok();
}

}  // namespace og::reference
