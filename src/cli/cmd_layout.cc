// `offgraph layout MODEL [--json]`: the cache layout config.json implies (DESIGN.md §3).
#include <iostream>

#include "cli/commands.h"
#include "export/layout_resolver.h"
#include "runtime/program_info.h"

namespace og::cli {

std::string layout_table(const program::CacheLayout& l) {
  std::string out = fmt::format("{} layers, {} caches\n\n{:>5}  {:>8}  {:>8}  {:>8}  {:>8}  {}\n", l.n_layers, l.n_caches(),
                                "cache", "kv_heads", "head_dim", "window", "owner", "read by layers");
  for (int32_t c = 0; c < l.n_caches(); ++c) {
    std::string readers;
    for (int32_t layer = 0; layer < l.n_layers; ++layer)
      if (l.layer_to_cache[layer] == c) readers += (readers.empty() ? "" : ",") + std::to_string(layer);
    out += fmt::format("{:>5}  {:>8}  {:>8}  {:>8}  {:>8}  {}\n", c, l.kv_heads[c], l.head_dims[c],
                       l.windows[c] == 0 ? std::string("full") : std::to_string(l.windows[c]), l.owner_layer(c), readers);
  }
  int32_t shared = 0;
  for (int32_t c = 0; c < l.n_caches(); ++c) shared += l.values_are_keys(c) ? 1 : 0;
  if (shared > 0) out += fmt::format("\n{} of {} caches keep v as their k (one copy for both)\n", shared, l.n_caches());
  return out;
}

Runner add_layout(CLI::App& app) {
  auto* cmd = app.add_subcommand("layout", "Print the KV-cache layout a model's config.json implies");
  auto model = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("model", *model, "model directory, config.json, or hub id in the local HF cache");
  cmd->add_option("--model,-m", *model, "same as the positional MODEL");
  cmd->add_flag("--json", *json, "print one JSON object");
  return [model, json]() -> Status {
    if (model->empty()) return usage_error("layout needs a MODEL (directory, config.json or hub id)");
    OG_ASSIGN_OR_RETURN(exporter::ModelLayout m, exporter::resolve_model_layout(*model));
    if (*json) {
      std::cout << runtime::layout_json(m.layout).dump() << "\n";
    } else {
      std::cout << m.model_id << " (" << m.model_type << ")\n" << layout_table(m.layout);
    }
    return Status::ok();
  };
}

}  // namespace og::cli
