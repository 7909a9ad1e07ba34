// MiniMax-M2 (MiniMaxM2Config): Llama's pre-norm block with q_norm/k_norm over the whole q and k
// projections (FlexOlmoAttention), the rope on the first rotary_dim dims of each head
// (rotate_half; the config class turns rotary_dim into partial_rotary_factor), and on every
// layer MiniMaxM2SparseMoeBlock: sigmoid(block_sparse_moe.gate x), the experts picked by it plus
// block_sparse_moe.e_score_correction_bias, weighted by their sigmoids renormalized to sum 1,
// experts block_sparse_moe.experts.E.{w1,w3,w2} intermediate_size wide. Its decoder is the
// llama-like one (llama_like.cc). Followed: models/minimax_m2/modular_minimax_m2.py +
// configuration_minimax_m2.py (convert_rope_params_to_dict).
#include <string>

#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "minimax_m2", .partial_rotary = true, .moe = MoeKind::kMiniMaxM2, .qk_norm_whole = true};
constexpr ModelType kTypes[] = {{"minimax_m2", false}};

// rope_parameters["partial_rotary_factor"] = rotary_dim / head_dim unless a factor is given.
Status derive(hf::Json& text, const std::string& path) {
  if (!text.contains("rotary_dim") || !text["rotary_dim"].is_number_integer() || text.contains("partial_rotary_factor"))
    return Status::ok();
  if (!text.contains("head_dim") || !text["head_dim"].is_number_integer() || text["head_dim"].get<int64_t>() < 1)
    return bad_input("{}: rotary_dim needs a positive head_dim", path);
  text["partial_rotary_factor"] = text["rotary_dim"].get<double>() / text["head_dim"].get<double>();
  return Status::ok();
}

}  // namespace

// MiniMaxM2Config's defaults for keys a config.json may omit (num_experts: num_local_experts).
const Family kMiniMaxM2Family{"minimax_m2", kTypes, false,
                              R"({"rms_norm_eps": 1e-6, "rope_theta": 5000000.0, "head_dim": 128, "num_key_value_heads": 8,
                                  "intermediate_size": 1536, "num_local_experts": 256, "num_experts_per_tok": 8})",
                              &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr,
                              R"({"num_experts": "num_local_experts"})", derive};

}  // namespace og::reference
