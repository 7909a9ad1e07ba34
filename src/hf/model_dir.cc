#include "hf/model_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

namespace og::hf {
namespace fs = std::filesystem;

std::string hub_cache_dir() {
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("HF_HOME"); v && *v) return (fs::path(v) / "hub").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/root") / ".cache" / "huggingface" / "hub").string();
}

Result<ModelLocation> resolve_model(const std::string& spec) {
  if (spec.empty()) return usage_error("--model is empty: give a model directory, a config.json or a hub id");
  std::error_code ec;
  fs::path p(spec);
  if (fs::is_directory(p, ec)) {
    fs::path cfg = p / "config.json";
    if (!fs::exists(cfg, ec)) return bad_input("{}: directory has no config.json", spec);
    return ModelLocation{p.string(), cfg.string(), spec};
  }
  if (fs::exists(p, ec)) {
    fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    return ModelLocation{dir.string(), p.string(), spec};
  }
  // A hub id: ORG/NAME (no further slashes, not a relative path that simply does not exist).
  static const std::regex kHubId(R"(^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$)");
  if (!std::regex_match(spec, kHubId) || spec.ends_with(".json"))
    return bad_input("{}: no such file or directory", spec);
  const std::string cache = hub_cache_dir();
  std::string org = spec.substr(0, spec.find('/')), name = spec.substr(spec.find('/') + 1);
  fs::path repo = fs::path(cache) / ("models--" + org + "--" + name);
  auto not_found = [&](const std::string& why) {
    return bad_input("{}: not a local path and not in the HuggingFace cache ({}: {}); download it with `hf download {}`",
                     spec, repo.string(), why, spec);
  };
  if (!fs::is_directory(repo, ec)) return not_found("no such directory");
  fs::path snapshot;
  std::ifstream ref(repo / "refs" / "main");
  std::string hash;
  if (ref && std::getline(ref, hash) && !hash.empty() && hash.find('/') == std::string::npos) {
    snapshot = repo / "snapshots" / hash;
  } else {
    // No refs/main: accept a single snapshot.
    int n = 0;
    for (const auto& e : fs::directory_iterator(repo / "snapshots", ec)) {
      if (e.is_directory()) { snapshot = e.path(); ++n; }
    }
    if (n != 1) return not_found("no refs/main and no single snapshot");
  }
  if (!fs::exists(snapshot / "config.json", ec)) return not_found("snapshot " + snapshot.filename().string() + " has no config.json");
  return ModelLocation{snapshot.string(), (snapshot / "config.json").string(), spec};
}

}  // namespace og::hf
