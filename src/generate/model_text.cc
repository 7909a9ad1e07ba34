#include "generate/model_text.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/mapped_file.h"
#include "program/program_file.h"
#include "toolcall/detect.h"

namespace og::generate {
namespace fs = std::filesystem;

namespace {

Result<tokenizer::Tokenizer> from_program(const fb::Program& p, const std::string& where) {
  if (p.tokenizer_blob() == nullptr || p.tokenizer_blob()->size() == 0)
    return bad_input("{}: the program has no tokenizer (its model directory had no tokenizer.json); pass --tokenizer", where);
  return tokenizer::Tokenizer::deserialize(std::span<const uint8_t>(p.tokenizer_blob()->data(), p.tokenizer_blob()->size()));
}

// The end-of-turn token the template writes after an assistant message: render a
// conversation ending in a marker and take the first token after it, if it is special.
std::optional<int32_t> turn_end_token(const ModelText& t) {
  static const char kMarker[] = "OFFGRAPH_TURN_MARKER";
  std::vector<chat::Message> msgs = {{"user", "hi"}, {"assistant", kMarker}};
  chat::RenderOptions o = t.render;
  o.add_generation_prompt = false;
  auto text = t.chat_template->render(msgs, o);
  if (!text.is_ok()) return std::nullopt;
  const size_t at = text->find(kMarker);
  if (at == std::string::npos) return std::nullopt;
  auto ids = t.tokenizer.encode(text->substr(at + sizeof(kMarker) - 1), false);
  if (!ids.is_ok() || ids->empty() || !t.tokenizer.is_special((*ids)[0])) return std::nullopt;
  return (*ids)[0];
}

}  // namespace

Result<tokenizer::Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return tokenizer::Tokenizer::from_json_file((fs::path(path) / "tokenizer.json").string());
  OG_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  if (file->size() >= 8 && std::memcmp(file->data(), program::kMagic, 8) == 0) {
    OG_ASSIGN_OR_RETURN(auto pf, program::ProgramFile::open(path));
    return from_program(pf->program(), path);
  }
  return tokenizer::Tokenizer::from_json_file(path);
}

Result<ModelText> load_model_text(const runtime::Model& model, const std::string& tokenizer_override) {
  const fb::Program& p = model.program();
  Result<tokenizer::Tokenizer> tok = tokenizer_override.empty() ? from_program(p, model.file().path())
                                                                 : load_tokenizer(tokenizer_override);
  if (!tok.is_ok()) return tok.status();
  ModelText t{.tokenizer = std::move(tok).value()};
  t.grammars = std::make_shared<GrammarCache>(t.tokenizer);
  if (p.bos_token() && p.bos_token()->size() > 0) t.render.bos_token = p.bos_token()->str();
  if (p.eos_token() && p.eos_token()->size() > 0) t.render.eos_token = p.eos_token()->str();
  if (p.chat_template() && p.chat_template()->size() > 0) {
    OG_ASSIGN_OR_RETURN(chat::ChatTemplate ct, chat::ChatTemplate::parse(p.chat_template()->string_view()));
    t.chat_template = std::move(ct);
  }
  if (p.eos_ids())
    for (int32_t id : *p.eos_ids()) t.stop_ids.push_back(id);
  if (p.tool_call_syntax() && p.tool_call_syntax()->size() > 0) {
    const auto j = nlohmann::ordered_json::parse(p.tool_call_syntax()->string_view(), nullptr, false);
    auto s = toolcall::syntax_from_json(j);
    if (!s.is_ok()) return bad_input("{}: the stored tool-call format: {}", model.file().path(), s.status().message());
    t.tool_syntax = std::move(s).value();
  } else if (t.chat_template) {
    t.tool_syntax = toolcall::detect_syntax(*t.chat_template, t.render).syntax;
  }
  if (t.chat_template) {
    if (auto end = turn_end_token(t); end && std::find(t.stop_ids.begin(), t.stop_ids.end(), *end) == t.stop_ids.end())
      t.stop_ids.push_back(*end);
  }
  return t;
}

}  // namespace og::generate
