// Multi-head latent attention (DeepSeek-V2's, kept by DeepSeek-V3, GLM-4.7-Flash and their
// kin; transformers' DeepseekV2Attention / DeepseekV3Attention), per token x and head h:
//   q   = q_b_proj(q_a_layernorm(q_a_proj x))   (or q_proj x without q_lora_rank) [nh, dn + dr]
//   c   = kv_a_proj_with_mqa x = [ckv (kv_lora_rank) | k_pe (dr, one for all heads)]
//   kv  = kv_b_proj(kv_a_layernorm ckv) [nh, dn + dv] = [k_nope | v]
//   k_h = [k_nope_h | rope(k_pe)], q_h = [q_nope_h | rope(q_pe_h)]: softmax(q k / s) v
// (dn = qk_nope_head_dim, dr = qk_rope_head_dim, dv = v_head_dim, R = kv_lora_rank; the two
// latent norms take RMSNorm's default eps 1e-6, not rms_norm_eps; the rope on the dr dims only,
// on interleaved pairs when rope_interleave (always, for DeepSeek-V2's complex-number rope),
// else rotate-half; 1/s = (dn + dr)^-0.5, times mscale(factor, mscale_all_dim)^2 under a scaled
// rope).
//
// The program caches the latent, not the heads (kv_b_proj absorbed, as DeepSeek's own
// inference code and llama.cpp do): one kv head of R + dr values per token, [ckv | rope(k_pe)],
// shared by every head, where transformers keeps nh heads of dn + dr keys and dv values
// (DeepSeek-V3: 576 values a token and layer in K and again in V, against 128 x 320):
//   q_h = [W_UK_h^T q_nope_h | rope(q_pe_h)]          head_linear per head, then a grouped concat
//   k = v = [ckv | rope(k_pe)]                         (W_UK_h, W_UV_h: head h's k_nope and v rows
//   o = o_proj(W_UV_h a_h[:R] for each head h)          of kv_b_proj, [dn, R] and [dv, R])
// q_h . k = q_nope_h . (W_UK_h ckv) + q_pe_h . k_pe, transformers' score; a_h[:R] = sum_j p_j
// ckv_j, so W_UV_h a_h[:R] is its sum_j p_j v_hj. W_UK (transposed) and W_UV keep the
// program's float dtype under --qlinear (head_linear reads float matrices); every other
// projection is an ordinary linear. attention_bias is refused (no published model sets it),
// and so is qk_nope_head_dim 0.
#pragma once
#include <cstdint>
#include <functional>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {

struct MlaConfig {
  int64_t heads = 0, q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v = 0;
  bool interleave = true;
  int64_t qk() const { return nope + rope; }
};

// Where the rope's pairing comes from: the config's rope_interleave (default true), or always
// interleaved pairs (DeepSeek-V2's view_as_complex rope, which has no such field).
enum class MlaRopePairs { kFromConfig, kInterleaved };

// The attention's fields, each checked and named when no model can have it.
Result<MlaConfig> read_mla(const hf::ModelConfig& c, MlaRopePairs pairs);
// DecoderOptions::attention for it.
std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> mla_attention(MlaConfig m);
// Family::kv_geometry: one kv head of kv_lora_rank + qk_rope_head_dim (the latent), v = k.
Result<KvGeometry> mla_kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type);

}  // namespace og::exporter
