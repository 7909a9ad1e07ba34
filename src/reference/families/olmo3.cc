// OLMo 3 (Olmo3Config): OLMo 2's layer (output-only norms, q/k norms over the whole
// projection) with sliding-window layers: layer_types, else all but every fourth layer slide
// with sliding_window; sliding layers rotate with the default rope, full layers with the
// configured one. Its decoder is the llama-like one (llama_like.cc), with these switches.
// Followed: models/olmo3/modular_olmo3.py, modeling_olmo3.py + configuration_olmo3.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "olmo3", .sliding = SlidingRule::kOlmo3, .reads_attention_bias = true,
                           .post_norms = true, .rope_by_layer_type = true};
constexpr ModelType kTypes[] = {{"olmo3", false}};

}  // namespace

// Olmo3Config's defaults for keys a config.json may omit (rope_theta: transformers 5's
// default_theta; 4.57's class had 10000, and every published config sets it).
const Family kOlmo3Family{"olmo3", kTypes, false, R"({"rms_norm_eps": 1e-5, "sliding_window": 4096, "rope_theta": 500000.0})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
