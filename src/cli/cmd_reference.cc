// `offgraph reference --model DIR (--tokens ... | --tokens-file F) --out OUT.npy`
// The float64 cache-free reference forward, written as float32 .npy (developer command).
#include "base/mapped_file.h"
#include "base/npy.h"
#include "cli/commands.h"
#include "hf/model_config.h"
#include "hf/model_dir.h"
#include "reference/reference.h"

namespace og::cli {

Runner add_reference(CLI::App& app) {
  auto* cmd = app.add_subcommand("reference", "Float64 reference logits from a HF checkpoint (no cache)");
  struct Opts { std::string model, tokens, tokens_file, out; };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--model,-m", o->model, "model directory")->required();
  cmd->add_option("--tokens", o->tokens, "comma-separated token ids");
  cmd->add_option("--tokens-file", o->tokens_file, "file of token ids");
  cmd->add_option("--out,-o", o->out, "output .npy")->required();
  return [o]() -> Status {
    OG_ASSIGN_OR_RETURN(std::vector<int32_t> ids, read_token_args(o->tokens, o->tokens_file));
    OG_ASSIGN_OR_RETURN(hf::ModelLocation loc, hf::resolve_model(o->model));
    OG_ASSIGN_OR_RETURN(hf::ModelConfig config, reference::load_model_config(loc.config_path));
    OG_ASSIGN_OR_RETURN(hf::Checkpoint ckpt, hf::Checkpoint::open(loc.dir));
    for (int32_t id : ids)
      if (id >= config.vocab_size) return bad_input("token id {} is outside the vocabulary ({})", id, config.vocab_size);
    OG_ASSIGN_OR_RETURN(std::vector<double> logits, reference::forward(config, ckpt, ids));
    std::vector<float> f(logits.begin(), logits.end());
    return write_npy_f32(o->out, f.data(), {static_cast<int64_t>(ids.size()), config.vocab_size});
  };
}

}  // namespace og::cli
