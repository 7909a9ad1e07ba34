// `offgraph export --model MODEL --output FILE [--dtype ...] [--qlinear 4w|8w] [--qhead 4w|8w] [--qlinear-group-size G]
//  [--qembedding 4w|8w] [--qactivations int8|bf16|f32] [--layout interleaved|row-major] [--max-ctx-len N]
//  [--prefill-chunk-size C] [--tool-call-format generic_json|JSON|FILE]`
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "export/exporter.h"

namespace og::cli {

Runner add_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Export a HF checkpoint to a program file");
  auto o = std::make_shared<exporter::ExportOptions>();
  cmd->add_option("--model,-m", o->model, "model directory, config.json, or hub id in the local HF cache")->required();
  cmd->add_option("--output,-o", o->output, "program file to write")->required();
  cmd->add_option("--dtype", o->dtype, "weight dtype: fp32, bf16 or fp16")->capture_default_str();
  cmd->add_option("--qlinear", o->qlinear, "quantize linear weights: 4w or 8w (group-wise, f16 scales; the LM head: --qhead)");
  cmd->add_option("--qhead", o->qhead,
                  "quantize the LM head (a tied embedding table too, unless --qembedding): 4w or 8w (default: 8w with --qlinear)");
  cmd->add_option("--qlinear-group-size", o->qgroup_size, "values per quantization group: 32, 64 or 128")
      ->capture_default_str();
  cmd->add_option("--qembedding", o->qembedding, "quantize embedding tables: 4w or 8w");
  cmd->add_option("--qactivations", o->qactivations,
                  "how linears meet their input: int8 (quantized weights, per group, as llama.cpp; fast), bf16 (int8 "
                  "and, for bf16 weights, x rounded to bf16 as llama.cpp; vdpbf16ps) or f32 (exact)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "matrix storage: interleaved (blocks of 16 rows, what the fast kernels read) or row-major")
      ->capture_default_str();
  cmd->add_option("--max-ctx-len", o->max_ctx_len, "context capacity (default min(max_position_embeddings, 4096))");
  cmd->add_option("--prefill-chunk-size", o->prefill_chunk_size, "largest T of one step (default min(512, max-ctx-len))");
  cmd->add_option("--tool-call-format", o->tool_call_format,
                  "tool-call syntax to store: generic_json, or a JSON object (or file) as `inspect` shows it "
                  "(default: read from the chat template)");
  return [o]() -> Status {
    o->show_progress = ::isatty(2);
    OG_ASSIGN_OR_RETURN(exporter::ExportSummary s, exporter::export_program(*o));
    std::cerr << fmt::format("exported {} -> {}: {} tensors, {} ops, {:.1f} MB in {:.2f} s\n", o->model, o->output,
                             s.n_tensors, s.n_ops, static_cast<double>(s.bytes) / 1e6, s.seconds);
    if (!s.tool_calls.empty()) std::cerr << "tool calls: " << s.tool_calls << "\n";
    if (s.n_not_quantizable > 0)
      std::cerr << fmt::format("note: {} matrices kept in {} (columns not a multiple of the group size {})\n",
                               s.n_not_quantizable, o->dtype, o->qgroup_size);
    return Status::ok();
  };
}

}  // namespace og::cli
