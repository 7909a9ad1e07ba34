// Phi-3 (Phi3Config): fused qkv_proj and gate_up_proj, partial rotary, sliding_window on
// every layer when set. Its decoder is the llama-like one (llama_like.cc), with these switches.
// Followed: models/phi3/modeling_phi3.py + configuration_phi3.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "phi3",
                           .sliding = SlidingRule::kEveryLayer,
                           .fused = true,
                           .partial_rotary = true,
                           .default_rope_only = true};
constexpr ModelType kTypes[] = {{"phi3", false}};

}  // namespace

// Phi3Config's defaults for keys a config.json may omit.
const Family kPhi3Family{"phi3", kTypes, false, R"({"rms_norm_eps": 1e-5})", &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
