// `offgraph logits --program FILE (--tokens 1,2,3 | --tokens-file F) --out OUT.npy [--chunk C] [--last N] [--kv-dtype D] [--threads N]`
// Feeds the tokens in steps of at most C and writes float32 [T, V]: row t = logits after token t
// (with --last N only the last N rows, [N, V]: a long context's tail without its whole matrix).
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/mapped_file.h"
#include "base/npy.h"
#include "cli/commands.h"
#include "runtime/session.h"

namespace og::cli {

Result<std::vector<int32_t>> parse_token_list(const std::string& s) {
  std::vector<int32_t> ids;
  std::string item;
  std::stringstream ss(s);
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t\r\n"), e = item.find_last_not_of(" \t\r\n");
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > INT32_MAX) return usage_error("token '{}' is not a non-negative integer", item);
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

Result<std::vector<int32_t>> read_token_args(const std::string& tokens, const std::string& tokens_file) {
  if (tokens.empty() && tokens_file.empty()) return usage_error("give --tokens or --tokens-file");
  std::string text = tokens;
  if (!tokens_file.empty()) {
    OG_ASSIGN_OR_RETURN(text, read_text_file(tokens_file));
    for (char& c : text)  // a JSON array or whitespace-separated ids read as a comma list
      if (c == '\n' || c == ' ' || c == '\t' || c == '[' || c == ']') c = ',';
  }
  OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, parse_token_list(text));
  if (ids.empty()) return usage_error("no tokens given");
  return ids;
}

Runner add_logits(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Run a program on tokens and write all logits to a .npy file");
  struct Opts {
    std::string program, tokens, tokens_file, out;
    int64_t chunk = 0;
    int64_t last = 0;
    SessionFlags session;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--program,-m", o->program, "program file")->required();
  auto* tok = cmd->add_option("--tokens", o->tokens, "comma-separated token ids");
  auto* tokf = cmd->add_option("--tokens-file", o->tokens_file, "file of token ids (comma or whitespace separated)");
  tok->excludes(tokf);
  cmd->add_option("--out,-o", o->out, "output .npy [T, vocab] float32")->required();
  auto* chunk_opt = cmd->add_option("--chunk", o->chunk,
                                    "tokens per step, 1 .. prefill_chunk_size (default prefill_chunk_size; 1 = decode)");
  auto* last_opt = cmd->add_option("--last", o->last, "write only the last N rows (default: all T)");
  add_session_flags(cmd, o->session);
  return [o, chunk_opt, last_opt]() -> Status {
    // Checked before anything is loaded: 0 is not "the default", the default is leaving it out.
    if (chunk_opt->count() > 0 && o->chunk < 1)
      return usage_error("--chunk {} must be at least 1 (leave it out for the program's prefill_chunk_size)", o->chunk);
    OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, read_token_args(o->tokens, o->tokens_file));
    const auto T = static_cast<int64_t>(ids.size());
    if (last_opt->count() > 0 && (o->last < 1 || o->last > T))
      return usage_error("--last {} must be between 1 and the number of tokens {}", o->last, T);
    const int64_t rows = last_opt->count() > 0 ? o->last : T;
    OG_ASSIGN_OR_RETURN(StorageType kv, check_session_flags(o->session));
    OG_ASSIGN_OR_RETURN(auto model, runtime::Model::load(o->program, residency_of(o->session), math_of(o->session)));
    const int64_t chunk = chunk_opt->count() > 0 ? o->chunk : model->prefill_chunk_size();
    if (chunk > model->prefill_chunk_size())
      return usage_error("--chunk {} must be between 1 and the program's prefill_chunk_size {}", o->chunk,
                         model->prefill_chunk_size());
    OG_ASSIGN_OR_RETURN(auto session, runtime::Session::create(model, {.kv_dtype = kv, .threads = o->session.threads}));
    const int64_t V = model->vocab_size(), first = T - rows;
    std::vector<float> kept(static_cast<size_t>(rows * V));  // [rows, V]: tokens first .. T - 1
    for (int64_t t = 0; t < T; t += chunk) {
      const int64_t n = std::min(chunk, T - t);
      OG_ASSIGN_OR_RETURN(auto logits, session->append(std::span<const int32_t>(ids.data() + t, static_cast<size_t>(n))));
      const int64_t from = std::max(t, first);  // this step's rows that are kept
      if (from < t + n)
        std::copy(logits.begin() + (from - t) * V, logits.begin() + n * V, kept.begin() + (from - first) * V);
    }
    return write_npy_f32(o->out, kept.data(), {rows, V});
  };
}

}  // namespace og::cli
