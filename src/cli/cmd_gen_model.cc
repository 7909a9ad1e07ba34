// `offgraph gen-model --family F --out DIR [--dtype] [--seed] [--shard-bytes N] [--set JSON]`
// Developer command: a tiny random-weight checkpoint in exact HF format (tests use the same library).
#include <iostream>

#include "cli/commands.h"
#include "hf/json_fields.h"
#include "testgen/testgen.h"

namespace og::cli {

Runner add_gen_model(CLI::App& app) {
  auto* cmd = app.add_subcommand("gen-model", "Write a tiny random-weight HF checkpoint (for tests and demos)");
  struct Opts {
    std::string family, out, dtype = "fp32", overrides = "{}";
    uint64_t seed = 0, shard_bytes = 0;
    int64_t zero_from = 0, fp8_block = 0;
    std::string tie;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--family", o->family, "one of: " + [] {
    std::string s;
    for (const auto& f : testgen::generator_families()) s += (s.empty() ? "" : ", ") + f;
    return s;
  }())->required();
  cmd->add_option("--out,-o", o->out, "directory to write")->required();
  cmd->add_option("--dtype", o->dtype, "fp32, bf16 or fp16")->capture_default_str();
  cmd->add_option("--seed", o->seed, "random seed")->capture_default_str();
  cmd->add_option("--shard-bytes", o->shard_bytes, "shard size limit (0: one file)");
  cmd->add_option("--tie", o->tie, "tie embeddings: true or false (default: the family's)");
  cmd->add_option("--zero-tensors-from", o->zero_from,
                  "tensors of at least N elements are zeros written as file holes (full-size shapes)");
  cmd->add_option("--fp8-block", o->fp8_block,
                  "store the layers' linear weights as F8_E4M3 with a scale per N x N block (an FP8 checkpoint; 0: none)");
  cmd->add_option("--set", o->overrides, "JSON object merged into the (text) config, e.g. '{\"sliding_window\": 4}'");
  return [o]() -> Status {
    testgen::GenOptions g;
    g.family = o->family;
    g.out_dir = o->out;
    g.seed = o->seed;
    g.max_shard_bytes = o->shard_bytes;
    if (o->zero_from < 0) return usage_error("--zero-tensors-from {} must be >= 0", o->zero_from);
    g.zero_tensors_from = o->zero_from;
    if (o->fp8_block < 0) return usage_error("--fp8-block {} must be >= 0", o->fp8_block);
    g.fp8_block = o->fp8_block;
    if (o->dtype == "fp32") g.dtype = DType::kF32;
    else if (o->dtype == "bf16") g.dtype = DType::kBF16;
    else if (o->dtype == "fp16") g.dtype = DType::kF16;
    else return usage_error("--dtype '{}': expected fp32, bf16 or fp16", o->dtype);
    if (o->tie == "true") g.tie_word_embeddings = true;
    else if (o->tie == "false") g.tie_word_embeddings = false;
    else if (!o->tie.empty()) return usage_error("--tie '{}': expected true or false", o->tie);
    OG_ASSIGN_OR_RETURN(g.overrides, hf::parse_json(o->overrides, "--set"));
    if (!g.overrides.is_object()) return usage_error("--set must be a JSON object");
    OG_TRY(testgen::generate_checkpoint(g));
    std::cerr << "wrote " << o->family << " checkpoint to " << o->out << "\n";
    return Status::ok();
  };
}

}  // namespace og::cli
