// Resolves what a user passes as --model: a model directory, a config.json path, or a hub
// id (ORG/NAME) found in the local HuggingFace cache at
// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub:
// models--ORG--NAME/snapshots/<the hash in refs/main>/.
#pragma once

#include <string>

#include "base/status.h"

namespace og::hf {

struct ModelLocation {
  std::string dir;          // directory holding the checkpoint (may be empty for a bare config.json)
  std::string config_path;  // config.json
  std::string model_id;     // the hub id when resolved from the cache, else the path given
};

Result<ModelLocation> resolve_model(const std::string& spec);

// The hub cache root used for lookups, following HF's environment variables.
std::string hub_cache_dir();

}  // namespace og::hf
