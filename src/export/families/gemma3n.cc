// Gemma-3n text (gemma3n wrapper or gemma3n_text): full attention at layers with
// (i + 1) % 5 == 0 unless layer_types is given; a KV-shared tail of num_kv_shared_layers.
// The graph (AltUp, LAuReL, per-layer inputs, activation sparsity) is not built yet:
// export says so instead of writing a wrong program.
#include "export/build_context.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class Gemma3nFamily final : public Family {
 public:
  const char* name() const override { return "gemma3n"; }
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    std::vector<std::string> types;
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      types.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
    return types;
  }
  Status build(BuildContext& ctx) const override {
    return unsupported("{}: model_type '{}': exporting Gemma-3n graphs (AltUp, LAuReL, per-layer inputs) is not "
                       "implemented yet; `offgraph layout` works for it",
                       ctx.config.path, ctx.config.model_type);
  }
};

}  // namespace

const Family& gemma3n_family() {
  static const Gemma3nFamily f;
  return f;
}

}  // namespace og::exporter
