// offgraph's subcommands. Each registers its flags on the CLI11 app and returns a runner;
// runners return a Status that main() maps to an exit code (exit_code below).
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "base/status.h"
#include "cli/session_flags.h"
#include "program/layout.h"

namespace og::cli {

using Runner = std::function<Status()>;

// Exit codes: 0 ok, 1 bad usage (flags), 2 bad input or unsupported model, 3 resources
// or internal failure.
int exit_code(const Status& s);

Runner add_layout(CLI::App& app);
Runner add_export(CLI::App& app);
Runner add_inspect(CLI::App& app);
Runner add_logits(CLI::App& app);
Runner add_gen_model(CLI::App& app);
Runner add_reference(CLI::App& app);
Runner add_bench(CLI::App& app);
Runner add_run(CLI::App& app);
Runner add_chat(CLI::App& app);
Runner add_tokenize(CLI::App& app);
Runner add_detokenize(CLI::App& app);
Runner add_serve(CLI::App& app);

std::string layout_table(const program::CacheLayout& l);

// "1,2,3" -> ids; errors name the bad element.
Result<std::vector<int32_t>> parse_token_list(const std::string& s);
// --tokens "1,2,3" or --tokens-file F (commas, whitespace or a JSON array).
Result<std::vector<int32_t>> read_token_args(const std::string& tokens, const std::string& tokens_file);

}  // namespace og::cli
