// Multi-head latent attention (DeepSeek-V2's, kept by DeepSeek-V3, GLM-4.7-Flash and their
// kin; transformers' DeepseekV2Attention / DeepseekV3Attention), per token x and head h:
//   q   = q_b_proj(q_a_layernorm(q_a_proj x))   (or q_proj x without q_lora_rank) [nh, dn + dr]
//   c   = kv_a_proj_with_mqa x = [ckv (kv_lora_rank) | k_pe (dr, one for all heads)]
//   kv  = kv_b_proj(kv_a_layernorm ckv) [nh, dn + dv] = [k_nope | v]
//   k_h = [k_nope_h | rope(k_pe)], q_h = [q_nope_h | rope(q_pe_h)]: softmax(q k / s) v
// (dn = qk_nope_head_dim, dr = qk_rope_head_dim, dv = v_head_dim; the two latent norms take
// RMSNorm's default eps 1e-6, not rms_norm_eps; the rope on the dr dims only, on interleaved
// pairs when rope_interleave (always, for DeepSeek-V2's complex-number rope), else rotate-half;
// 1/s = (dn + dr)^-0.5, times mscale(factor, mscale_all_dim)^2 under a scaled rope). The
// program keeps the attention as transformers computes it, k and v per head in the cache (kv
// heads = heads, head_dim dn + dr):
//   q  = linear(q's input, q rows per head reordered to [pe | nope], pe in rotate-half order)
//   k  = linear([k_pe | kv_a_layernorm ckv], per head [identity on k_pe | k_nope rows of kv_b_proj])
//   v  = linear(kv_a_layernorm ckv, per head [v rows of kv_b_proj | zeros]), so v's head is as
//        wide as k's and the attention's output carries zeros after each head's dv values
//   o  = linear(attention, o_proj's columns per head followed by zero columns)
// and the rope rotates the first dr dims of q's and k's heads. These four made matrices keep
// the program's float dtype under --qlinear (an identity block or a zero padding quantized
// would not stay one); the latents' own projections are quantized. attention_bias is refused
// (no published model sets it).
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
// Family::kv_geometry: heads kv heads of qk_nope_head_dim + qk_rope_head_dim.
Result<KvGeometry> mla_kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type);

}  // namespace og::exporter
