// `offgraph inspect FILE [--json]`: what a program says about itself (metadata, layout, op
// counts, weight bytes by storage type).
#include <iostream>

#include "cli/commands.h"
#include "program/program_file.h"
#include "program/validator.h"
#include "runtime/program_info.h"

namespace og::cli {

Runner add_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Print a program's metadata, layout and op counts");
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("file", *file, "program file")->required();
  cmd->add_flag("--json", *json, "print one JSON object");
  auto verify = std::make_shared<bool>(false);
  cmd->add_flag("--verify", *verify, "also verify the checksum of every weight byte (reads the whole file)");
  return [file, json, verify]() -> Status {
    OG_ASSIGN_OR_RETURN(auto pf, program::ProgramFile::open(*file, *verify ? program::ProgramFile::Verify::kFull
                                                                           : program::ProgramFile::Verify::kHeader));
    const fb::Program& p = pf->program();
    const program::CacheLayout layout = program::layout_from_fb(*p.layout());
    const nlohmann::ordered_json j = runtime::program_info_json(*pf, *verify);
    if (*json) {
      std::cout << j.dump() << "\n";
      return Status::ok();
    }
    std::cout << fmt::format("program {} ({} bytes)\n  model: {} ({})\n  dtype: {}, vocab {}, max_ctx_len {}, prefill_chunk_size {}\n",
                             *file, pf->file_size(), j["model_id"].get<std::string>(), j["family"].get<std::string>(),
                             j["dtype"].get<std::string>(), p.vocab_size(), p.max_ctx_len(), p.prefill_chunk_size());
    std::cout << fmt::format("  weights: {} tensors, {:.1f} MB\n  bos {}, eos {}\n  tokenizer: {}, chat template: {}\n",
                             p.tensors()->size(), j["weight_bytes"].get<double>() / 1e6, p.bos_id(), j["eos_ids"].dump(),
                             j["has_tokenizer"].get<bool>() ? "yes" : "no", j["has_chat_template"].get<bool>() ? "yes" : "no");
    if (j.contains("tool_call_syntax"))
      std::cout << "  tool calls: " << j["tool_call_syntax"].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    std::cout << "  ops:";
    for (const auto& [name, n] : j["op_counts"].items()) std::cout << " " << name << "=" << n.get<int>();
    if (const int64_t int8_linears = j["linears_with_int8_activations"]; int8_linears > 0)
      std::cout << fmt::format(" ({} linears with int8 activations)", int8_linears);
    if (const int64_t bf16_linears = j["linears_with_bf16_activations"]; bf16_linears > 0)
      std::cout << fmt::format(" ({} linears with bf16 activations)", bf16_linears);
    if (const uint64_t active = j["parameter_bytes"]["active_per_token"]; active != j["weight_bytes"])
      std::cout << fmt::format("\n  mixture of experts: {:.1f} MB of weights read per token (of {:.1f} MB)",
                               static_cast<double>(active) / 1e6, j["weight_bytes"].get<double>() / 1e6);
    std::cout << "\n  storage:";
    for (const auto& [key, v] : j["weights_by_storage"].items())
      std::cout << fmt::format(" {} {} tensors {:.1f} MB;", key, v["tensors"].get<int>(), v["bytes"].get<double>() / 1e6);
    if (const int64_t interleaved = j["interleaved_tensors"]; interleaved > 0)
      std::cout << fmt::format(" {} matrices interleaved (format version {})", interleaved, j["format_version"].get<uint32_t>());
    std::cout << fmt::format("\n  KV caches at max_ctx_len: {:.1f} MiB fp32, {:.1f} MiB bf16/fp16 ({:.1f} MiB fp32 if every "
                             "cache held the whole context)",
                             j["kv_cache_bytes"]["fp32"].get<double>() / (1 << 20),
                             j["kv_cache_bytes"]["bf16"].get<double>() / (1 << 20),
                             j["kv_cache_bytes_if_all_full"]["fp32"].get<double>() / (1 << 20));
    std::cout << "\n\n" << layout_table(layout);
    return Status::ok();
  };
}

}  // namespace og::cli
