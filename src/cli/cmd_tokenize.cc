// `offgraph tokenize` and `offgraph detokenize`: text <-> ids with a tokenizer.json (or a
// directory holding one), giving HuggingFace tokenizers' exact ids (src/tokenizer).
//
//   offgraph tokenize --tokenizer T (--text S | --text-file F | --batch F.json) [--add-special]
//       prints the ids as one JSON array; with --batch (a JSON array of strings) one array per line
//   offgraph detokenize --tokenizer T --ids 1,2,3 [--skip-special]
//       prints the decoded text and a newline
#include <cstdio>
#include <iostream>

#include "base/mapped_file.h"
#include "cli/commands.h"
#include "generate/model_text.h"
#include "tokenizer/tokenizer.h"

namespace og::cli {
namespace {

using tokenizer::Tokenizer;

std::string ids_json(const std::vector<int32_t>& ids) { return fmt::format("[{}]", fmt::join(ids, ",")); }

// Each string of a --batch file, with errors naming the file and the element.
Result<std::vector<std::string>> read_batch(const std::string& path) {
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return bad_input("{}: not valid JSON: {}", path, e.what());
  }
  if (!j.is_array()) return bad_input("{}: expected a JSON array of strings", path);
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) return bad_input("{}: element {} is not a string", path, i);
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

}  // namespace

Runner add_tokenize(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of text as a JSON array (HuggingFace tokenizers' ids)");
  struct Opts {
    std::string tokenizer, text, text_file, batch;
    bool add_special = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--tokenizer,-t", o->tokenizer, "program file, tokenizer.json, or a directory holding one")->required();
  auto* text = cmd->add_option("--text", o->text, "the text to tokenize");
  auto* file = cmd->add_option("--text-file", o->text_file, "a file whose whole content (UTF-8) is the text");
  auto* batch = cmd->add_option("--batch", o->batch, "a JSON file holding an array of strings; one id array per line");
  text->excludes(file)->excludes(batch);
  file->excludes(batch);
  cmd->add_flag("--add-special", o->add_special, "apply the post-processor (BOS etc.), as add_special_tokens=True");
  return [o, text, file, batch]() -> Status {
    if (text->count() + file->count() + batch->count() != 1) return usage_error("tokenize needs one of --text, --text-file, --batch");
    OG_ASSIGN_OR_RETURN(Tokenizer tok, generate::load_tokenizer(o->tokenizer));
    if (batch->count() > 0) {
      OG_ASSIGN_OR_RETURN(std::vector<std::string> items, read_batch(o->batch));
      std::string out;
      for (size_t i = 0; i < items.size(); ++i) {
        auto ids = tok.encode(items[i], o->add_special);
        if (!ids.is_ok()) return ids.status().with_context(fmt::format("{}: element {}", o->batch, i));
        out += ids_json(*ids) + "\n";
      }
      std::cout << out;
      return Status::ok();
    }
    std::string input = o->text;
    if (file->count() > 0) { OG_ASSIGN_OR_RETURN(input, read_text_file(o->text_file)); }
    auto ids = tok.encode(input, o->add_special);
    if (!ids.is_ok()) return ids.status().with_context(file->count() > 0 ? o->text_file : std::string("--text"));
    std::cout << ids_json(*ids) << "\n";
    return Status::ok();
  };
}

Runner add_detokenize(CLI::App& app) {
  auto* cmd = app.add_subcommand("detokenize", "Print the text of token ids (HuggingFace tokenizers' decode)");
  struct Opts {
    std::string tokenizer, ids;
    bool skip_special = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--tokenizer,-t", o->tokenizer, "program file, tokenizer.json, or a directory holding one")->required();
  cmd->add_option("--ids", o->ids, "comma-separated token ids")->required();
  cmd->add_flag("--skip-special", o->skip_special, "leave out special tokens, as skip_special_tokens=True");
  return [o]() -> Status {
    OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, parse_token_list(o->ids));
    OG_ASSIGN_OR_RETURN(Tokenizer tok, generate::load_tokenizer(o->tokenizer));
    // tokenizers silently drops unknown ids; a user asking for one most likely made a mistake.
    for (int32_t id : ids)
      if (!tok.id_to_token(id)) return bad_input("--ids: {} is not a token id of {} (vocab_size {})", id, o->tokenizer, tok.vocab_size());
    std::cout << tok.decode(ids, o->skip_special) << "\n";
    return Status::ok();
  };
}

}  // namespace og::cli
