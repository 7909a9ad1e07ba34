// Gemma2's entry; its decoder is gemma.cc's, version 2.
#include "reference/families/families.h"
#include "reference/families/gemma.h"

namespace og::reference {
namespace {

constexpr ModelType kTypes[] = {{"gemma2", false}};

}  // namespace

// Gemma2Config's defaults for keys a config.json may omit.
const Family kGemma2Family{"gemma2", kTypes, true, R"({
    "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "query_pre_attn_scalar": 256,
    "sliding_window": 4096, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0})", &gemma_forward_of<2>, &gemma_windows_of<2>};

}  // namespace og::reference
