// offgraph: export HF causal LMs to stateless step programs and run them.
#include <cstdio>
#include <map>

#include "cli/commands.h"

namespace og::cli {

int exit_code(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kOk: return 0;
    case ErrorCode::kUsage: return 1;
    case ErrorCode::kBadInput:
    case ErrorCode::kUnsupported: return 2;
    default: return 3;
  }
}

}  // namespace og::cli

int main(int argc, char** argv) {
  using namespace og::cli;
  CLI::App app{"offgraph: export HuggingFace causal LMs to stateless step programs and run them on the CPU"};
  app.require_subcommand(1);
  std::map<std::string, Runner> runners;
  runners["layout"] = add_layout(app);
  runners["export"] = add_export(app);
  runners["inspect"] = add_inspect(app);
  runners["logits"] = add_logits(app);
  runners["gen-model"] = add_gen_model(app);
  runners["reference"] = add_reference(app);
  runners["bench"] = add_bench(app);
  runners["run"] = add_run(app);
  runners["chat"] = add_chat(app);
  runners["tokenize"] = add_tokenize(app);
  runners["detokenize"] = add_detokenize(app);
  runners["serve"] = add_serve(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "offgraph: %s\n", e.what());
    return 1;
  }
  for (auto& [name, run] : runners) {
    if (!app.got_subcommand(name)) continue;
    og::Status s = run();
    if (!s.is_ok()) {
      std::fprintf(stderr, "offgraph %s: error: %s\n", name.c_str(), s.message().c_str());
      return exit_code(s);
    }
    return 0;
  }
  return 1;
}
