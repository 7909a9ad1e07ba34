#include "runtime/program_info.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "kernels/kernels.h"
#include "program/ops.h"
#include "program/validator.h"
#include "runtime/cache/cache_set.h"

namespace og::runtime {

nlohmann::ordered_json layout_json(const program::CacheLayout& l) {
  nlohmann::ordered_json j;
  j["n_layers"] = l.n_layers;
  j["n_caches"] = l.n_caches();
  j["layer_to_cache"] = l.layer_to_cache;
  j["kv_heads"] = l.kv_heads;
  j["head_dims"] = l.head_dims;
  j["windows"] = l.windows;
  if (!l.value_is_key.empty()) {
    std::vector<bool> v;
    for (uint8_t b : l.value_is_key) v.push_back(b != 0);
    j["value_is_key"] = v;
  }
  return j;
}

nlohmann::ordered_json program_info_json(const program::ProgramFile& pf, bool weights_verified) {
  const fb::Program& p = pf.program();
  const program::CacheLayout layout = program::layout_from_fb(*p.layout());
  nlohmann::ordered_json j = layout_json(layout);
  j["max_ctx_len"] = p.max_ctx_len();
  j["prefill_chunk_size"] = p.prefill_chunk_size();
  j["vocab_size"] = p.vocab_size();
  j["dtype"] = storage_type_name(program::storage_type_of(p.dtype()).value_or(StorageType::kF32));
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
  auto kv_bytes = [&](StorageType t, bool all_full) {
    program::CacheLayout l = layout;
    if (all_full) std::fill(l.windows.begin(), l.windows.end(), 0);
    return plan_cache_set(l, t, p.max_ctx_len(), p.prefill_chunk_size()).bytes();
  };
  nlohmann::ordered_json by_storage = nlohmann::ordered_json::object();
  for (const auto& [key, v] : storage) by_storage[key] = {{"tensors", v.first}, {"bytes", v.second}};
  j["n_tensors"] = p.tensors()->size();
  j["weight_bytes"] = weight_bytes;
  // Bytes a token reads: everything but the experts a mixture of experts does not choose
  // (of each moe op's experts, the top_k largest count as read; embedding and head whole).
  auto matrix_bytes = [&](int32_t t) {
    const fb::Tensor* w = p.tensors()->Get(t);
    return w->nbytes() + (program::is_quantized(w->dtype()) ? p.tensors()->Get(w->scales())->nbytes() : 0);
  };
  uint64_t unchosen = 0;
  for (const fb::Op* op : *p.ops())
    if (const fb::MoeAttrs* a = op->attrs_as_MoeAttrs(); a != nullptr) {
      std::vector<uint64_t> experts;  // [n_experts] bytes of gate + up + down
      for (uint32_t e = 0; e < a->gate()->size(); ++e)
        experts.push_back(matrix_bytes(a->gate()->Get(e)) + matrix_bytes(a->up()->Get(e)) + matrix_bytes(a->down()->Get(e)));
      std::sort(experts.begin(), experts.end(), std::greater<>());
      for (size_t e = static_cast<size_t>(a->top_k()); e < experts.size(); ++e) unchosen += experts[e];
    }
  j["parameter_bytes"] = {{"total", weight_bytes}, {"active_per_token", weight_bytes - unchosen}};
  j["weights_by_storage"] = by_storage;
  int64_t interleaved = 0;  // matrices stored in blocks of 16 rows (row_block, program.fbs)
  for (const fb::Tensor* t : *p.tensors()) interleaved += t->row_block() != 0;
  j["interleaved_tensors"] = interleaved;
  j["format_version"] = pf.format_version();
  int64_t int8_linears = 0, bf16_linears = 0;  // linears taking int8 / bf16 activations
  int64_t fast_capable = 0;                    // linears --math fast runs on bf16 activations
  for (const fb::Op* op : *p.ops())
    if (const fb::LinearAttrs* a = op->attrs_as_LinearAttrs(); a != nullptr) {
      int8_linears += a->int8_activations();
      bf16_linears += a->bf16_activations();
      const fb::Tensor* w = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(a->weight()));
      fast_capable += w->dtype() == fb::DType::BF16 && w->row_block() != 0;
    }
  j["linears_with_int8_activations"] = int8_linears;
  j["linears_with_bf16_activations"] = bf16_linears;
  j["linears_fast_math_can_run_in_bf16"] = fast_capable;
  // What `--math auto` (the default of run, chat, serve, bench, logits) runs on this CPU.
  const bool auto_fast = kernels::bf16_dot_outruns_fma() ? fast_capable > 0 : bf16_linears > 0;
  j["math_auto_here"] = auto_fast ? "fast" : "exact";
  j["kv_cache_bytes"] = nlohmann::ordered_json::object();
  j["kv_cache_bytes_if_all_full"] = nlohmann::ordered_json::object();
  for (const StorageTypeInfo& kv : kStorageTypes) {
    if (!kv.kv) continue;
    j["kv_cache_bytes"][std::string(kv.name)] = kv_bytes(kv.type, false);
    j["kv_cache_bytes_if_all_full"][std::string(kv.name)] = kv_bytes(kv.type, true);
  }
  j["file_bytes"] = pf.file_size();
  j["has_tokenizer"] = p.tokenizer_blob() != nullptr && p.tokenizer_blob()->size() > 0;
  j["has_chat_template"] = p.chat_template() != nullptr && p.chat_template()->size() > 0;
  // The stored tool-call syntax (toolcall/syntax.h), as JSON: what --tool-call-format takes.
  if (p.tool_call_syntax() && p.tool_call_syntax()->size() > 0)
    j["tool_call_syntax"] = nlohmann::ordered_json::parse(p.tool_call_syntax()->string_view(), nullptr, false);
  j["checksum"] = fmt::format("{:016x}", pf.checksum());
  j["weights_verified"] = weights_verified;
  return j;
}

}  // namespace og::runtime
