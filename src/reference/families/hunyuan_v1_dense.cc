// HunYuan dense (HunYuanDenseV1Config: Hunyuan-0.5B to -7B): Llama's decoder whose attention
// norms each head of q and k over head_dim after the rotation (query_layernorm,
// key_layernorm: RMSNorms of eps rms_norm_eps), and whose rope, for rope_scaling "dynamic" with
// an alpha, rotates with base rope_theta * alpha^(head_dim / (head_dim - 2)) (its
// DynamicNTKAlphaRotary; attention scaling 1). Its decoder is the llama-like one.
// Followed: models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py + configuration.
#include <cmath>

#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "hunyuan_v1_dense", .qk_norm = true, .qk_norm_after_rope = true};
constexpr ModelType kTypes[] = {{"hunyuan_v1_dense", false}};

// The NTK-alpha rope as a plain rope of a larger base (the class computes inv_freq once from it).
Status derive(hf::Json& text, const std::string& path) {
  const char* key = text.contains("rope_parameters") && text["rope_parameters"].is_object() ? "rope_parameters"
                    : text.contains("rope_scaling") && text["rope_scaling"].is_object()   ? "rope_scaling"
                                                                                          : nullptr;
  if (key == nullptr) return Status::ok();
  const hf::Json& r = text[key];
  const std::string type = r.value("rope_type", r.value("type", std::string("default")));
  if (type != "dynamic" || !r.contains("alpha") || !r["alpha"].is_number() || r["alpha"].get<double>() == 0)
    return Status::ok();  // anything else is the rope reader's to take or refuse
  const double alpha = r["alpha"].get<double>();
  double d = 0;
  if (text.contains("head_dim") && text["head_dim"].is_number_integer()) {
    d = text["head_dim"].get<double>();
  } else if (text.contains("hidden_size") && text.contains("num_attention_heads")) {
    d = std::floor(text["hidden_size"].get<double>() / text["num_attention_heads"].get<double>());
  }
  if (!(d > 2) || !(alpha > 0)) return bad_input("{}: the NTK-alpha rope needs head_dim > 2 and alpha > 0", path);
  const double theta = r.contains("rope_theta") ? r["rope_theta"].get<double>() : text.value("rope_theta", 10000.0);
  text["rope_theta"] = theta * std::pow(alpha, d / (d - 2));
  text.erase("rope_parameters");
  text["rope_scaling"] = nullptr;
  return Status::ok();
}

}  // namespace

// HunYuanDenseV1Config's defaults for keys a config.json may omit.
const Family kHunYuanDenseFamily{"hunyuan_v1_dense", kTypes, false,
                                 R"({"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
                                     "attention_bias": false, "tie_word_embeddings": false})",
                                 &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr,
                                 "{}", derive};

}  // namespace og::reference
