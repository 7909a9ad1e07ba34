// The offgraph binary as a user meets it: outputs, one-line errors, exit codes
// (0 ok, 1 bad usage, 2 bad input or unsupported model).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/npy.h"
#include "test_util.h"

namespace og {
namespace {

using og::testing::run_offgraph;
using og::testing::TempDir;
using og::testing::write_file;

const std::string kConfigs = std::string(OG_TEST_DATA) + "/configs/";

TEST(CliLayout, JsonHasExactlyTheLayoutKeys) {
  auto r = run_offgraph("layout " + kConfigs + "gemma-4-E2B-it.json --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n_layers"], 35);
  EXPECT_EQ(j["n_caches"], 15);
  EXPECT_EQ(j["layer_to_cache"].size(), 35u);
  EXPECT_EQ(j["windows"].size(), 15u);
  EXPECT_EQ(j.size(), 6u);
}

TEST(CliLayout, TableNamesCachesAndReaders) {
  auto r = run_offgraph("layout " + kConfigs + "gemma-3n-E2B.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("30 layers, 20 caches"), std::string::npos) << r.out;
}

TEST(CliLayout, ErrorsAreOneLineOnStderrWithExitCode2) {
  TempDir d;
  auto missing = run_offgraph("layout " + d.file("nothing"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(missing.out.empty());
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  write_file(d.file("config.json"), R"({"model_type": "bert", "vocab_size": 3})");
  auto unknown = run_offgraph("layout " + d.path());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unsupported model_type 'bert'"), std::string::npos);
  write_file(d.file("config.json"), "{");
  EXPECT_EQ(run_offgraph("layout " + d.path()).exit_code, 2);
  auto hub = run_offgraph("layout nobody/nothing-here");
  EXPECT_EQ(hub.exit_code, 2);
  EXPECT_NE(hub.err.find("hf download nobody/nothing-here"), std::string::npos);
}

TEST(CliInspect, ReportsStorageBytesAndWindowedCacheBytes) {
  TempDir d;
  ASSERT_EQ(run_offgraph("gen-model --family gemma2 --out " + d.file("m") +
                         " --set '{\"sliding_window\": 4, \"hidden_size\": 64, \"intermediate_size\": 128}'").exit_code, 0);
  auto ex = run_offgraph("export -m " + d.file("m") + " -o " + d.file("q.ogp") +
                         " --qlinear 4w --qembedding 8w --max-ctx-len 64 --prefill-chunk-size 8");
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  auto inspect = run_offgraph("inspect --json " + d.file("q.ogp"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  auto j = nlohmann::json::parse(inspect.out);
  ASSERT_TRUE(j["weights_by_storage"].contains("Q4/g32")) << inspect.out;
  ASSERT_TRUE(j["weights_by_storage"].contains("Q8/g32")) << inspect.out;  // the tied table
  uint64_t sum = 0;
  for (const auto& [k, v] : j["weights_by_storage"].items()) sum += v["bytes"].get<uint64_t>();
  EXPECT_EQ(sum, j["weight_bytes"].get<uint64_t>());
  // Every cache at the full context, from the layout: an upper bound the sliding caches beat.
  uint64_t full = 0;
  for (size_t c = 0; c < j["kv_heads"].size(); ++c)
    full += 2ull * j["kv_heads"][c].get<uint64_t>() * j["head_dims"][c].get<uint64_t>() * 64 * 4;
  EXPECT_EQ(j["kv_cache_bytes_if_all_full"]["fp32"].get<uint64_t>(), full);
  EXPECT_LT(j["kv_cache_bytes"]["fp32"].get<uint64_t>(), full);
  EXPECT_EQ(j["kv_cache_bytes"]["bf16"].get<uint64_t>() * 2, j["kv_cache_bytes"]["fp32"].get<uint64_t>());
}

TEST(CliUsage, BadFlagsExitWith1) {
  EXPECT_EQ(run_offgraph("layout --no-such-flag x").exit_code, 1);
  EXPECT_EQ(run_offgraph("").exit_code, 1);
  EXPECT_EQ(run_offgraph("frobnicate").exit_code, 1);
  EXPECT_EQ(run_offgraph("layout").exit_code, 1);
}

TEST(CliEndToEnd, GenExportInspectLogits) {
  TempDir d;
  ASSERT_EQ(run_offgraph("gen-model --family gemma2 --out " + d.file("m") + " --set '{\"sliding_window\": 4}'").exit_code, 0);
  auto ex = run_offgraph("export -m " + d.file("m") + " -o " + d.file("p.ogp") + " --prefill-chunk-size 5");
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  auto inspect = run_offgraph("inspect --json " + d.file("p.ogp"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  auto layout = run_offgraph("layout --json " + d.file("m"));
  auto ij = nlohmann::json::parse(inspect.out), lj = nlohmann::json::parse(layout.out);
  for (const auto& [key, value] : lj.items()) EXPECT_EQ(ij[key], value) << key;
  EXPECT_EQ(ij["prefill_chunk_size"], 5);
  EXPECT_EQ(ij["op_counts"]["update_and_attend"], lj["n_layers"]);
  EXPECT_EQ(ij["dtype"], "fp32");

  auto lg = run_offgraph("logits --program " + d.file("p.ogp") + " --tokens 1,2,3,4,5,6,7 --chunk 3 --out " + d.file("l.npy"));
  ASSERT_EQ(lg.exit_code, 0) << lg.err;
  auto a = read_npy_f32(d.file("l.npy"));
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{7, ij["vocab_size"].get<int64_t>()}));
  auto rf = run_offgraph("reference -m " + d.file("m") + " --tokens 1,2,3,4,5,6,7 --out " + d.file("r.npy"));
  ASSERT_EQ(rf.exit_code, 0) << rf.err;
  auto r = read_npy_f32(d.file("r.npy"));
  double max_abs = 0, max_ref = 0;
  for (size_t i = 0; i < a->data.size(); ++i) {
    max_abs = std::max(max_abs, std::abs(double(a->data[i]) - r->data[i]));
    max_ref = std::max(max_ref, std::abs(double(r->data[i])));
  }
  EXPECT_LE(max_abs, 1e-4 * max_ref);
}

TEST(CliErrors, LogitsAndExportInputErrors) {
  TempDir d;
  ASSERT_EQ(run_offgraph("gen-model --family llama --out " + d.file("m")).exit_code, 0);
  ASSERT_EQ(run_offgraph("export -m " + d.file("m") + " -o " + d.file("p.ogp")).exit_code, 0);
  const std::string p = " --program " + d.file("p.ogp") + " --out " + d.file("l.npy");
  auto oov = run_offgraph("logits --tokens 1,99999" + p);
  EXPECT_EQ(oov.exit_code, 2);
  EXPECT_NE(oov.err.find("outside the vocabulary"), std::string::npos);
  EXPECT_EQ(run_offgraph("logits --tokens 1,x,3" + p).exit_code, 1);
  EXPECT_EQ(run_offgraph("logits --tokens 1,2 --chunk 100000" + p).exit_code, 1);
  EXPECT_EQ(run_offgraph("logits --tokens 1,2 --kv-dtype int4" + p).exit_code, 1);
  EXPECT_EQ(run_offgraph("logits --tokens-file " + d.file("none") + p).exit_code, 2);
  auto notprog = run_offgraph("logits --tokens 1 --program " + d.file("m/config.json") + " --out " + d.file("l.npy"));
  EXPECT_EQ(notprog.exit_code, 2);
  EXPECT_NE(notprog.err.find("not an offgraph program"), std::string::npos);
  EXPECT_EQ(run_offgraph("export -m " + d.file("m") + " -o " + d.file("q.ogp") + " --dtype int2").exit_code, 1);
  EXPECT_EQ(run_offgraph("export -m " + d.file("nothing") + " -o " + d.file("q.ogp")).exit_code, 2);
  EXPECT_EQ(run_offgraph("inspect " + d.path()).exit_code, 2);
  // A Gemma-3n config the exporter cannot honour: exit 2, the field named, no file left.
  ASSERT_EQ(run_offgraph("gen-model --family gemma3n --out " + d.file("g3n") + " --set '{\"altup_active_idx\": 7}'").exit_code, 0);
  auto g3n = run_offgraph("export -m " + d.file("g3n") + " -o " + d.file("g3n.ogp"));
  EXPECT_EQ(g3n.exit_code, 2);
  EXPECT_NE(g3n.err.find("text_config.altup_active_idx"), std::string::npos) << g3n.err;
  EXPECT_FALSE(std::filesystem::exists(d.file("g3n.ogp")));
}

}  // namespace
}  // namespace og
