#include "export/exporter.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "base/mapped_file.h"
#include "chat/chat_template.h"
#include "export/build_context.h"
#include "export/family.h"
#include "hf/json_fields.h"
#include "hf/model_dir.h"
#include "program/validator.h"
#include "tokenizer/tokenizer.h"
#include "toolcall/detect.h"

namespace og::exporter {
namespace {

namespace fs = std::filesystem;

// --dtype names an unquantized storage type (quantization has its own flags).
Result<fb::DType> parse_dtype(const std::string& s) {
  const std::optional<StorageType> t = storage_type_from_name(s);
  auto float_weights = [](const StorageTypeInfo& i) { return is_weight_type(i.type) && !is_quantized(i.type); };
  if (!t || !float_weights(storage_info(*t))) return usage_error("--dtype '{}': expected {}", s, storage_type_names(float_weights));
  return program::program_dtype(*t);
}

// tokenizer.json and the chat template, when the model directory has them.
Status read_tokenizer_files(const std::string& dir, fb::ProgramT& p) {
  std::error_code ec;
  if (dir.empty()) return Status::ok();
  const fs::path tok = fs::path(dir) / "tokenizer.json";
  if (fs::exists(tok, ec)) {
    OG_ASSIGN_OR_RETURN(tokenizer::Tokenizer t, tokenizer::Tokenizer::from_json_file(tok.string()));
    p.tokenizer_blob = t.serialize();
  }
  const fs::path jinja = fs::path(dir) / "chat_template.jinja";
  const fs::path tok_cfg = fs::path(dir) / "tokenizer_config.json";
  if (fs::exists(jinja, ec)) {
    OG_ASSIGN_OR_RETURN(p.chat_template, read_text_file(jinja.string()));
  } else if (fs::exists(tok_cfg, ec)) {
    OG_ASSIGN_OR_RETURN(std::string text, read_text_file(tok_cfg.string()));
    OG_ASSIGN_OR_RETURN(hf::Json j, hf::parse_json(text, tok_cfg.string()));
    if (j.is_object() && j.contains("chat_template") && j["chat_template"].is_string())
      p.chat_template = j["chat_template"].get<std::string>();
  }
  // bos_token / eos_token text for the template: a string or an AddedToken {"content": ...}.
  if (fs::exists(tok_cfg, ec)) {
    OG_ASSIGN_OR_RETURN(std::string text, read_text_file(tok_cfg.string()));
    OG_ASSIGN_OR_RETURN(hf::Json j, hf::parse_json(text, tok_cfg.string()));
    auto token_text = [&](const char* key) -> std::string {
      if (!j.is_object() || !j.contains(key)) return "";
      const hf::Json& v = j[key];
      if (v.is_string()) return v.get<std::string>();
      if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
      return "";
    };
    p.bos_token = token_text("bos_token");
    p.eos_token = token_text("eos_token");
  }
  return Status::ok();
}

// The template's tool-call and reasoning syntax (toolcall/detect.h), or the one given; stored
// as data. A template this renderer cannot parse is stored without one (chat refuses it later).
Status store_tool_call_syntax(const std::string& override_arg, fb::ProgramT& p, std::string& note) {
  if (!override_arg.empty()) {
    OG_ASSIGN_OR_RETURN(toolcall::ToolCallSyntax s, toolcall::parse_tool_call_format(override_arg));
    p.tool_call_syntax = toolcall::to_json(s).dump();
    note = s.format + " (given)";
    return Status::ok();
  }
  if (p.chat_template.empty()) return Status::ok();
  auto tmpl = chat::ChatTemplate::parse(p.chat_template);
  if (!tmpl.is_ok()) return Status::ok();
  chat::RenderOptions o;
  if (!p.bos_token.empty()) o.bos_token = p.bos_token;
  if (!p.eos_token.empty()) o.eos_token = p.eos_token;
  const toolcall::Detection d = toolcall::detect_syntax(*tmpl, o);
  p.tool_call_syntax = toolcall::to_json(d.syntax).dump();
  note = d.syntax.format + " (" + d.why + ")";
  return Status::ok();
}

// EOS ids: config.json's, plus generation_config.json's when present (as generate() does).
Status read_special_ids(const hf::ModelConfig& c, const std::string& dir, fb::ProgramT& p) {
  p.bos_id = c.bos_token_id ? static_cast<int32_t>(*c.bos_token_id) : -1;
  std::set<int64_t> eos(c.eos_token_ids.begin(), c.eos_token_ids.end());
  std::error_code ec;
  const fs::path gen = fs::path(dir) / "generation_config.json";
  if (!dir.empty() && fs::exists(gen, ec)) {
    OG_ASSIGN_OR_RETURN(std::string text, read_text_file(gen.string()));
    OG_ASSIGN_OR_RETURN(hf::Json j, hf::parse_json(text, gen.string()));
    hf::JsonFields f(j, gen.string());
    if (f.has("eos_token_id")) {
      OG_ASSIGN_OR_RETURN(auto ids, f.get_int_list("eos_token_id"));
      eos.insert(ids.begin(), ids.end());
    }
  }
  for (int64_t id : eos) {
    if (id < 0 || id >= c.vocab_size) return bad_input("{}: eos_token_id {} is outside the vocabulary ({})", c.path, id, c.vocab_size);
    p.eos_ids.push_back(static_cast<int32_t>(id));
  }
  if (p.bos_id >= c.vocab_size) return bad_input("{}: bos_token_id {} is outside the vocabulary", c.path, p.bos_id);
  return Status::ok();
}

}  // namespace

Result<ExportSummary> export_program(const ExportOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  OG_ASSIGN_OR_RETURN(fb::DType dtype, parse_dtype(o.dtype));
  OG_ASSIGN_OR_RETURN(hf::ModelLocation loc, hf::resolve_model(o.model));
  OG_ASSIGN_OR_RETURN(std::string config_text, read_text_file(loc.config_path));
  OG_ASSIGN_OR_RETURN(hf::ModelConfig config, parse_model_config(config_text, loc.config_path));
  const Family* family = family_of(config);
  if (family == nullptr) return unsupported("{}: no exporter for '{}'", loc.config_path, config.model_type);
  OG_ASSIGN_OR_RETURN(auto layers, resolve_layer_attention(config));
  OG_ASSIGN_OR_RETURN(program::CacheLayout layout, resolve_layout(config));

  int64_t max_ctx = o.max_ctx_len > 0 ? o.max_ctx_len : std::min<int64_t>(config.max_position_embeddings, 4096);
  if (o.max_ctx_len < 0) return usage_error("--max-ctx-len {} must be positive", o.max_ctx_len);
  if (max_ctx > (1 << 30)) return usage_error("--max-ctx-len {} is too large", max_ctx);
  int64_t chunk = o.prefill_chunk_size > 0 ? o.prefill_chunk_size : std::min<int64_t>(512, max_ctx);
  if (o.prefill_chunk_size < 0 || chunk > max_ctx)
    return usage_error("--prefill-chunk-size {} must be between 1 and max_ctx_len ({})", o.prefill_chunk_size, max_ctx);

  QuantOptions quant;
  OG_ASSIGN_OR_RETURN(quant.linear, parse_quant_bits(o.qlinear, "--qlinear"));
  OG_ASSIGN_OR_RETURN(quant.embedding, parse_quant_bits(o.qembedding, "--qembedding"));
  OG_ASSIGN_OR_RETURN(quant.head, parse_quant_bits(o.qhead, "--qhead"));
  if (o.qhead.empty() && quant.linear != QuantBits::kNone) quant.head = QuantBits::k8;
  if (o.qgroup_size != 32 && o.qgroup_size != 64 && o.qgroup_size != 128)
    return usage_error("--qlinear-group-size {}: expected 32, 64 or 128", o.qgroup_size);
  quant.group_size = o.qgroup_size;
  if (o.qactivations != "int8" && o.qactivations != "f32" && o.qactivations != "bf16")
    return usage_error("--qactivations '{}': expected int8, bf16 or f32", o.qactivations);
  quant.int8_activations = o.qactivations != "f32";
  quant.bf16_activations = o.qactivations == "bf16";
  if (quant.bf16_activations && dtype != fb::DType::BF16)
    return usage_error("--qactivations bf16 is for bf16 weights: pass --dtype bf16 (not {})", o.dtype);
  if (quant.bf16_activations && o.layout == "row-major")
    return usage_error("--qactivations bf16 needs --layout interleaved");
  quant.method = o.qround_to_nearest ? QuantMethod::kRoundToNearest : QuantMethod::kFit;
  if (o.layout != "interleaved" && o.layout != "row-major")
    return usage_error("--layout '{}': expected interleaved or row-major", o.layout);
  quant.interleave = o.layout == "interleaved";

  OG_ASSIGN_OR_RETURN(hf::Checkpoint ckpt, hf::Checkpoint::open(loc.dir));
  std::string prefix = family->text_prefix != nullptr ? family->text_prefix : "";
  if (family->find_prefix != nullptr) {
    OG_ASSIGN_OR_RETURN(prefix, family->find_prefix(ckpt));
  } else if (family->text_prefix == nullptr) {
    OG_ASSIGN_OR_RETURN(prefix, find_text_prefix(ckpt));
  }

  fb::ProgramT p;
  p.model_id = loc.model_id;
  p.source_config = config_text;
  p.family = family->name;
  p.dtype = dtype;
  p.vocab_size = static_cast<int32_t>(config.vocab_size);
  p.max_ctx_len = static_cast<int32_t>(max_ctx);
  p.prefill_chunk_size = static_cast<int32_t>(chunk);
  p.layout = program::layout_to_fb(layout);
  OG_TRY(read_special_ids(config, loc.dir, p));
  OG_TRY(read_tokenizer_files(loc.dir, p));
  std::string tool_note;
  OG_TRY(store_tool_call_syntax(o.tool_call_format, p, tool_note));

  // Write to a temporary name and rename at the end, so a failed export leaves no half file.
  const std::string tmp = o.output + ".partial";
  OG_ASSIGN_OR_RETURN(auto writer, program::ProgramWriter::create(tmp));
  GraphBuilder g(*writer, p, dtype, o.show_progress && ::isatty(2), ckpt.names().size(), quant);
  if (o.on_progress)
    g.set_progress_callback([&o](int64_t written, int64_t expected, uint64_t bytes) {
      o.on_progress({.tensors_written = written, .tensors_expected = expected, .bytes_written = bytes});
    });
  BuildContext ctx{config, ckpt, layers, layout, g, prefix, max_ctx};
  Status built = family->build(ctx);
  if (built.is_ok()) built = g.write_weights();
  g.finish_progress();
  // A tensor of the text model that no op uses means the builder misses a feature of
  // this checkpoint (a bias, an extra norm): refuse rather than write a wrong program.
  if (built.is_ok()) {
    for (const std::string& name : ckpt.names()) {
      const bool in_text = name.starts_with(prefix) || name == "lm_head.weight";
      const bool tied_head = name == "lm_head.weight" && config.tie_word_embeddings;
      const bool buffer = name.ends_with("rotary_emb.inv_freq") || (family->is_buffer != nullptr && family->is_buffer(name));
      if (in_text && !tied_head && !g.used_tensors().contains(name) && !buffer) {
        built = unsupported("{}: tensor '{}' is not used by the {} graph; this checkpoint has a feature offgraph does not "
                            "implement", ckpt.dir(), name, family->name);
        break;
      }
    }
  }
  if (built.is_ok()) built = program::validate_program(*[&] {
                               // Validate the header we are about to write, through a packed copy.
                               static thread_local flatbuffers::FlatBufferBuilder fbb;
                               fbb.Clear();
                               fbb.Finish(fb::Program::Pack(fbb, &p));
                               return fb::GetProgram(fbb.GetBufferPointer());
                             }(), writer->bytes_written());
  if (built.is_ok()) built = writer->finish(p);
  std::error_code ec;
  if (!built.is_ok()) {
    writer.reset();
    fs::remove(tmp, ec);
    return built;
  }
  fs::rename(tmp, o.output, ec);
  if (ec) return resource_error("{}: cannot rename from {}: {}", o.output, tmp, ec.message());
  ExportSummary s;
  s.n_tensors = static_cast<int64_t>(p.tensors.size());
  s.bytes = fs::file_size(o.output, ec);
  s.n_ops = static_cast<int32_t>(p.ops.size());
  s.n_quantized = g.n_quantized();
  s.n_not_quantizable = g.n_not_quantizable();
  s.tool_calls = tool_note;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace og::exporter
