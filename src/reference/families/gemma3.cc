// Gemma3's entry; its decoder is gemma.cc's, version 3.
#include "reference/families/families.h"
#include "reference/families/gemma.h"

namespace og::reference {
namespace {

constexpr ModelType kTypes[] = {{"gemma3_text", false}, {"gemma3", true}};

}  // namespace

// Gemma3TextConfig's defaults for keys a config.json may omit (the gemma3 wrapper's
// text_config often lists only what differs).
const Family kGemma3Family{"gemma3", kTypes, true, R"({
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "query_pre_attn_scalar": 256, "sliding_window": 4096,
    "sliding_window_pattern": 6})", &gemma_forward_of<3>, &gemma_windows_of<3>};

}  // namespace og::reference
