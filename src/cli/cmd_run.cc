// `offgraph run -m FILE -p PROMPT [...]` and `offgraph chat -m FILE [...]`: text in, text out.
// The generated text, and only it, goes to stdout; the speed report goes to stderr.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/memory_stats.h"
#include "cli/commands.h"
#include "generate/conversation.h"
#include "generate/generator.h"
#include "generate/model_text.h"
#include "generate/text_generation.h"

namespace og::cli {
namespace {

struct RunOptions {
  std::string program, prompt, system, tokenizer, json_schema;
  int32_t n = 256;
  SessionFlags session;
  int64_t max_ctx_len = 0;
  bool chat = false, no_report = false;
  generate::SamplingParams sampling;
};

void add_common(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--model,-m", o.program, "program file")->required();
  cmd->add_option("-n,--n-predict", o.n, "tokens to generate (-1: until EOS or the context is full)")->capture_default_str();
  cmd->add_option("--temp", o.sampling.temperature, "temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", o.sampling.top_k, "top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", o.sampling.top_p, "top-p in (0, 1]")->capture_default_str();
  cmd->add_option("--min-p", o.sampling.min_p, "min-p in [0, 1]")->capture_default_str();
  cmd->add_option("--repeat-penalty", o.sampling.repetition_penalty, "repetition penalty (1: off)")->capture_default_str();
  cmd->add_option("--repeat-last-n", o.sampling.repeat_last_n, "tokens the penalty looks at (-1: all)")->capture_default_str();
  cmd->add_option("--seed", o.sampling.seed, "random seed")->capture_default_str();
  cmd->add_option("--system", o.system, "system prompt (chat template)");
  cmd->add_option("--tokenizer", o.tokenizer, "tokenizer.json, model directory or program to use instead of the program's");
  add_session_flags(cmd, o.session);
  cmd->add_option("--max-ctx-len,-c", o.max_ctx_len, "context capacity (default: the program's)");
  cmd->add_flag("--no-report", o.no_report, "do not print the speed report");
  cmd->add_option("--json-schema,-j", o.json_schema,
                  "constrain the reply to the JSON texts a JSON Schema accepts: the schema's text, or a file holding it");
}

void report(const generate::GenerateStats& s, double load_s, const runtime::Session& session) {
  std::fprintf(stderr,
               "\n\nload time        %9.2f ms\n"
               "prompt tokens    %9lld   prefill %8.2f ms  (%8.2f tok/s)\n"
               "first token      %9.2f ms\n"
               "generated tokens %9lld   decode  %8.2f ms  (%8.2f tok/s)\n"
               "KV cache         %9.2f MiB (%lld of %lld positions used)\n"
               "peak resident    %9.2f MiB (program file %.2f MiB, %s)\n",
               load_s * 1e3, static_cast<long long>(s.prompt_tokens), s.prefill_seconds * 1e3, s.prefill_tok_s(),
               s.first_token_seconds * 1e3, static_cast<long long>(s.generated_tokens), s.decode_seconds * 1e3,
               s.decode_tok_s(), static_cast<double>(session.cache_bytes()) / (1 << 20),
               static_cast<long long>(session.length()), static_cast<long long>(session.max_ctx_len()),
               static_cast<double>(peak_resident_bytes()) / (1 << 20),
               static_cast<double>(session.model().file().file_size()) / (1 << 20),
               session.model().file().residency() == Residency::kMapped ? "mapped" : "read into huge pages");
}

struct Loaded {
  std::shared_ptr<const runtime::Model> model;
  std::unique_ptr<runtime::Session> session;
  generate::ModelText text;
  double seconds = 0;
  std::shared_ptr<const constrain::GrammarMasks> grammar;  // --json-schema
};

// --json-schema: JSON text (it starts with '{', or is true/false), else a file's path.
Result<nlohmann::ordered_json> read_schema(const std::string& arg) {
  const size_t first = arg.find_first_not_of(" \t\r\n");
  const bool inline_json = first != std::string::npos && (arg[first] == '{' || arg.compare(first, 4, "true") == 0 ||
                                                          arg.compare(first, 5, "false") == 0);
  std::string text = arg;
  if (!inline_json) {
    std::ifstream in(arg, std::ios::binary);
    if (!in) return usage_error("--json-schema '{}': not JSON and no such file", arg);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const std::exception& e) {
    return usage_error("--json-schema: invalid JSON: {}", e.what());
  }
}

Result<Loaded> load(const RunOptions& o) {
  OG_TRY(o.sampling.validate());
  OG_ASSIGN_OR_RETURN(StorageType kv, check_session_flags(o.session));
  if (o.n < -1) return usage_error("-n {} must be >= -1", o.n);
  const auto start = std::chrono::steady_clock::now();
  OG_ASSIGN_OR_RETURN(auto model, runtime::Model::load(o.program, residency_of(o.session), math_of(o.session)));
  OG_ASSIGN_OR_RETURN(auto session, runtime::Session::create(
                                        model, {.kv_dtype = kv, .max_ctx_len = o.max_ctx_len, .threads = o.session.threads}));
  OG_ASSIGN_OR_RETURN(generate::ModelText text, generate::load_model_text(*model, o.tokenizer));
  std::shared_ptr<const constrain::GrammarMasks> grammar;
  if (!o.json_schema.empty()) {
    OG_ASSIGN_OR_RETURN(nlohmann::ordered_json schema, read_schema(o.json_schema));
    auto masks = text.grammars->json_schema(schema);
    if (!masks.is_ok()) return masks.status().with_context("--json-schema");
    grammar = *masks;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Loaded{std::move(model), std::move(session), std::move(text), secs, std::move(grammar)};
}

}  // namespace

Runner add_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  auto o = std::make_shared<RunOptions>();
  add_common(cmd, *o);
  cmd->add_option("--prompt,-p", o->prompt, "the prompt")->required();
  cmd->add_flag("--chat", o->chat, "wrap the prompt in the program's chat template (as a user message)");
  return [o]() -> Status {
    OG_ASSIGN_OR_RETURN(Loaded l, load(*o));
    generate::GenerateOptions g{.max_tokens = o->n, .sampling = o->sampling, .stop_ids = l.text.stop_ids};
    g.sampling.grammar = l.grammar;
    auto print = [](const std::string& piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
    generate::GenerateStats stats;
    if (o->chat) {
      generate::Conversation conv(*l.session, l.text, o->system);
      OG_ASSIGN_OR_RETURN(stats, conv.turn(o->prompt, g, print));
    } else {
      OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, generate::prompt_tokens(l.text, o->prompt));
      OG_ASSIGN_OR_RETURN(stats, generate::generate_text(*l.session, l.text, ids, g, [&](const std::string& piece) {
        print(piece);
        return true;
      }));
    }
    std::fputc('\n', stdout);
    if (!o->no_report) report(stats, l.seconds, *l.session);
    return Status::ok();
  };
}

Runner add_chat(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Interactive multi-turn chat (/reset, /undo, /save FILE, /load FILE, /quit)");
  auto o = std::make_shared<RunOptions>();
  add_common(cmd, *o);
  return [o]() -> Status {
    OG_ASSIGN_OR_RETURN(Loaded l, load(*o));
    generate::Conversation conv(*l.session, l.text, o->system);
    generate::GenerateOptions g{.max_tokens = o->n, .sampling = o->sampling, .stop_ids = l.text.stop_ids};
    g.sampling.grammar = l.grammar;
    std::string line;
    std::fprintf(stderr, "offgraph chat: %s (/reset, /undo, /save FILE, /load FILE, /quit)\n", o->program.c_str());
    while (true) {
      std::fprintf(stderr, "> ");
      if (!std::getline(std::cin, line)) break;
      if (line.empty()) continue;
      if (line == "/quit" || line == "/exit") break;
      if (line == "/reset") {
        conv.reset();
        std::fprintf(stderr, "[conversation cleared]\n");
        continue;
      }
      if (line == "/undo") {
        std::fprintf(stderr, conv.undo() ? "[last exchange removed]\n" : "[nothing to undo]\n");
        continue;
      }
      if (line.rfind("/save ", 0) == 0 || line.rfind("/load ", 0) == 0) {
        const std::string path = line.substr(6);
        Status s = line[1] == 's' ? conv.save(path) : conv.load(path);
        std::fprintf(stderr, "%s\n", s.is_ok() ? "[ok]" : ("[error] " + s.message()).c_str());
        continue;
      }
      auto stats = conv.turn(line, g, [](const std::string& piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      });
      std::fputc('\n', stdout);
      if (!stats.is_ok()) {
        std::fprintf(stderr, "[error] %s\n", stats.status().message().c_str());
        continue;
      }
      if (!o->no_report)
        std::fprintf(stderr, "[%lld prompt tokens at %.1f tok/s, %lld generated at %.1f tok/s]\n",
                     static_cast<long long>(stats->prompt_tokens), stats->prefill_tok_s(),
                     static_cast<long long>(stats->generated_tokens), stats->decode_tok_s());
    }
    return Status::ok();
  };
}

}  // namespace og::cli
