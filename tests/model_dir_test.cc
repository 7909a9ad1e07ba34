// --model resolution (directory, config.json, hub id in the local HF cache) and
// config.json file errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "hf/model_config.h"
#include "hf/model_dir.h"
#include "test_util.h"

namespace og {
namespace {

using og::testing::TempDir;
using og::testing::write_file;

const char* kTinyConfig = R"({"model_type":"llama","vocab_size":32,"hidden_size":16,"intermediate_size":32,
  "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2})";

TEST(ModelDir, DirectoryAndConfigPathResolve) {
  TempDir d;
  write_file(d.file("config.json"), kTinyConfig);
  auto a = hf::resolve_model(d.path());
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->config_path, d.file("config.json"));
  auto b = hf::resolve_model(d.file("config.json"));
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->dir, d.path());
}

TEST(ModelDir, HubIdIsFoundInTheCacheThroughRefsMain) {
  TempDir cache;
  const std::string repo = cache.file("models--acme--tiny-llama");
  std::filesystem::create_directories(repo + "/refs");
  std::filesystem::create_directories(repo + "/snapshots/abc123");
  std::filesystem::create_directories(repo + "/snapshots/old999");
  write_file(repo + "/refs/main", "abc123");
  write_file(repo + "/snapshots/abc123/config.json", kTinyConfig);
  ::setenv("HF_HUB_CACHE", cache.path().c_str(), 1);
  auto loc = hf::resolve_model("acme/tiny-llama");
  ASSERT_TRUE(loc.is_ok()) << loc.status().message();
  EXPECT_EQ(loc->dir, repo + "/snapshots/abc123");
  EXPECT_EQ(loc->model_id, "acme/tiny-llama");
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HF_HOME", cache.path().c_str(), 1);
  EXPECT_EQ(hf::hub_cache_dir(), cache.path() + "/hub");
  ::unsetenv("HF_HOME");
}

TEST(ModelDir, MissingHubIdSaysWhereItLookedAndHowToDownload) {
  TempDir cache;
  ::setenv("HF_HUB_CACHE", cache.path().c_str(), 1);
  auto loc = hf::resolve_model("unsloth/gemma-3-1b-it");
  ::unsetenv("HF_HUB_CACHE");
  ASSERT_FALSE(loc.is_ok());
  EXPECT_NE(loc.status().message().find(cache.path() + "/models--unsloth--gemma-3-1b-it"), std::string::npos);
  EXPECT_NE(loc.status().message().find("hf download unsloth/gemma-3-1b-it"), std::string::npos);
}

TEST(ModelDir, DirectoryWithoutConfigAndMissingPathsAreErrors) {
  TempDir d;
  EXPECT_NE(hf::resolve_model(d.path()).status().message().find("no config.json"), std::string::npos);
  EXPECT_NE(hf::resolve_model(d.file("nope/config.json")).status().message().find("no such file"), std::string::npos);
}

// These errors come before the model_type is looked at: any reading will do.
Result<hf::ConfigReading> any_model_type(const std::string&, const std::string&) { return hf::ConfigReading{}; }

TEST(ConfigFile, MissingEmptyTruncatedAndGarbageFilesAreNamed) {
  TempDir d;
  EXPECT_NE(hf::load_model_config(d.file("config.json"), any_model_type).status().message().find("cannot open"), std::string::npos);
  write_file(d.file("config.json"), "");
  EXPECT_NE(hf::load_model_config(d.file("config.json"), any_model_type).status().message().find("empty"), std::string::npos);
  write_file(d.file("config.json"), std::string(kTinyConfig).substr(0, 40));
  auto truncated = hf::load_model_config(d.file("config.json"), any_model_type);
  EXPECT_NE(truncated.status().message().find("invalid JSON"), std::string::npos);
  EXPECT_NE(truncated.status().message().find(d.file("config.json")), std::string::npos);
  write_file(d.file("config.json"), "\x01\x02garbage\xff");
  EXPECT_NE(hf::load_model_config(d.file("config.json"), any_model_type).status().message().find("invalid JSON"), std::string::npos);
  EXPECT_NE(hf::load_model_config(d.path(), any_model_type).status().message().find("is a directory"), std::string::npos);
}

// Values no model can have are errors naming the field (not a confusing failure later, when
// the program is built or validated).
TEST(ConfigFile, ImpossibleValuesNameTheirField) {
  TempDir d;
  for (const auto& [patch, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"rms_norm_eps": -1e-6})", "'rms_norm_eps'"},
           {R"({"max_position_embeddings": 0})", "'max_position_embeddings'"},
           {R"({"num_hidden_layers": "two"})", "'num_hidden_layers'"},
           {R"({"hidden_size": -16})", "'hidden_size'"},
           {R"({"vocab_size": 0})", "'vocab_size'"},
           {R"({"num_hidden_layers": 100000})", "'num_hidden_layers'"}}) {
    nlohmann::json c = nlohmann::json::parse(kTinyConfig);
    c.merge_patch(nlohmann::json::parse(patch));
    write_file(d.file("config.json"), c.dump());
    auto r = hf::load_model_config(d.file("config.json"), any_model_type);
    ASSERT_FALSE(r.is_ok()) << patch;
    EXPECT_NE(r.status().message().find(field), std::string::npos) << patch << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace og
