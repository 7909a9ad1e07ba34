// `offgraph inspect FILE [--json]`: what a program says about itself (metadata, layout, op
// counts, weight bytes by storage type).
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "program/program_file.h"
#include "program/validator.h"
#include "runtime/cache/cache_set.h"

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
    nlohmann::ordered_json j = layout_json(layout);
    j["max_ctx_len"] = p.max_ctx_len();
    j["prefill_chunk_size"] = p.prefill_chunk_size();
    j["vocab_size"] = p.vocab_size();
    j["dtype"] = p.dtype() == fb::DType::F32 ? "fp32" : p.dtype() == fb::DType::BF16 ? "bf16" : "fp16";
    j["model_id"] = p.model_id() ? p.model_id()->str() : "";
    j["family"] = p.family() ? p.family()->str() : "";
    j["bos_id"] = p.bos_id();
    std::vector<int32_t> eos;
    if (p.eos_ids())
      for (int32_t e : *p.eos_ids()) eos.push_back(e);
    j["eos_ids"] = eos;
    std::map<std::string, int> counts;
    for (const fb::Op* op : *p.ops()) counts[program::op_name(op->attrs_type())]++;
    j["op_counts"] = counts;
    uint64_t weight_bytes = 0;
    for (const fb::Tensor* t : *p.tensors()) weight_bytes += t->nbytes();
    // Bytes by storage; a quantized matrix's scales count with it ("Q4/g32").
    std::set<int32_t> scale_tensors;
    for (const fb::Tensor* t : *p.tensors())
      if (program::is_quantized(t->dtype())) scale_tensors.insert(t->scales());
    std::map<std::string, std::pair<int, uint64_t>> storage;  // name -> (matrices, bytes)
    for (int32_t i = 0; i < static_cast<int32_t>(p.tensors()->size()); ++i) {
      const fb::Tensor* t = p.tensors()->Get(i);
      if (scale_tensors.contains(i)) continue;
      std::string key = fb::EnumNameDType(t->dtype());
      uint64_t bytes = t->nbytes();
      if (program::is_quantized(t->dtype())) {
        key += fmt::format("/g{}", t->group_size());
        bytes += p.tensors()->Get(t->scales())->nbytes();
      }
      storage[key].first++;
      storage[key].second += bytes;
    }
    // K/V bytes a session allocates at max_ctx_len (sliding caches hold their window, see
    // runtime/cache/cache_set.h), and what they would be if every cache held the context.
    auto kv_bytes = [&](kernels::ElemType t, bool all_full) {
      program::CacheLayout l = layout;
      if (all_full) std::fill(l.windows.begin(), l.windows.end(), 0);
      return runtime::plan_cache_set(l, t, p.max_ctx_len(), p.prefill_chunk_size()).bytes();
    };
    nlohmann::ordered_json by_storage = nlohmann::ordered_json::object();
    for (const auto& [key, v] : storage) by_storage[key] = {{"tensors", v.first}, {"bytes", v.second}};
    j["n_tensors"] = p.tensors()->size();
    j["weight_bytes"] = weight_bytes;
    j["weights_by_storage"] = by_storage;
    int64_t int8_linears = 0;  // linears over quantized weights that take int8 activations
    for (const fb::Op* op : *p.ops())
      if (const fb::LinearAttrs* a = op->attrs_as_LinearAttrs(); a != nullptr && a->int8_activations()) ++int8_linears;
    j["linears_with_int8_activations"] = int8_linears;
    const uint64_t kv_f32 = kv_bytes(kernels::ElemType::kF32, false), kv_bf16 = kv_bytes(kernels::ElemType::kBF16, false);
    const uint64_t kv_full_f32 = kv_bytes(kernels::ElemType::kF32, true);
    j["kv_cache_bytes"] = {{"fp32", kv_f32}, {"bf16", kv_bf16}};
    j["kv_cache_bytes_if_all_full"] = {{"fp32", kv_full_f32}, {"bf16", kv_bytes(kernels::ElemType::kBF16, true)}};
    j["file_bytes"] = pf->file_size();
    j["has_tokenizer"] = p.tokenizer_blob() != nullptr && p.tokenizer_blob()->size() > 0;
    j["has_chat_template"] = p.chat_template() != nullptr && p.chat_template()->size() > 0;
    j["checksum"] = fmt::format("{:016x}", pf->checksum());
    j["weights_verified"] = *verify;
    if (*json) {
      std::cout << j.dump() << "\n";
      return Status::ok();
    }
    std::cout << fmt::format("program {} ({} bytes)\n  model: {} ({})\n  dtype: {}, vocab {}, max_ctx_len {}, prefill_chunk_size {}\n",
                             *file, pf->file_size(), j["model_id"].get<std::string>(), j["family"].get<std::string>(),
                             j["dtype"].get<std::string>(), p.vocab_size(), p.max_ctx_len(), p.prefill_chunk_size());
    std::cout << fmt::format("  weights: {} tensors, {:.1f} MB\n  bos {}, eos {}\n  tokenizer: {}, chat template: {}\n  ops:",
                             p.tensors()->size(), static_cast<double>(weight_bytes) / 1e6, p.bos_id(), j["eos_ids"].dump(),
                             j["has_tokenizer"].get<bool>() ? "yes" : "no", j["has_chat_template"].get<bool>() ? "yes" : "no");
    for (const auto& [name, n] : counts) std::cout << " " << name << "=" << n;
    if (int8_linears > 0) std::cout << fmt::format(" ({} linears with int8 activations)", int8_linears);
    std::cout << "\n  storage:";
    for (const auto& [key, v] : storage)
      std::cout << fmt::format(" {} {} tensors {:.1f} MB;", key, v.first, static_cast<double>(v.second) / 1e6);
    std::cout << fmt::format("\n  KV caches at max_ctx_len: {:.1f} MiB fp32, {:.1f} MiB bf16/fp16 ({:.1f} MiB fp32 if every "
                             "cache held the whole context)",
                             static_cast<double>(kv_f32) / (1 << 20), static_cast<double>(kv_bf16) / (1 << 20),
                             static_cast<double>(kv_full_f32) / (1 << 20));
    std::cout << "\n\n" << layout_table(layout);
    return Status::ok();
  };
}

}  // namespace og::cli
