// What a program says about itself, as JSON: the data `offgraph inspect --json` prints and
// `offgraph.Program.inspect()` returns (metadata, published layout, op counts, weight bytes
// by storage, KV cache bytes at max_ctx_len), and the layout keys `offgraph layout --json`
// shares with it. One builder, so the CLI and the Python module cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>

#include "program/layout.h"
#include "program/program_file.h"

namespace og::runtime {

// n_layers, n_caches, layer_to_cache, kv_heads, head_dims, windows.
nlohmann::ordered_json layout_json(const program::CacheLayout& l);

// Every key of `inspect --json`; `weights_verified` says whether the file was opened with
// Verify::kFull (reported, not checked here).
nlohmann::ordered_json program_info_json(const program::ProgramFile& pf, bool weights_verified);

}  // namespace og::runtime
