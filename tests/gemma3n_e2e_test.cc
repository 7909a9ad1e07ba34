// Gemma-3n end to end: tiny generated checkpoints (4 AltUp streams, LAuReL, per-layer inputs,
// gaussian top-k sparsity on the first layers, KV-shared tail, sliding windows shorter than
// the sequences) exported and run, against the float64 reference.
//
// Tolerance. The sparsity cutoff relu(g - (mean + 1.645 std)) is discontinuous in its
// inputs' rounding: an entry of g within rounding of the cutoff may be kept by one computation
// and dropped by another, and the attention softmax over sharp scores amplifies what gets
// through. So the bound for the sparse models is measured, not guessed: each test runs the
// reference again with every activation rounded to float32 (ForwardOptions::float32_activations)
// and requires
//     max|program - f64 reference| <= 4 * max|f32 reference - f64 reference| + 1e-6 * max|logit|
// i.e. the program may not be more than a few times worse than float32 arithmetic itself
// (4x: the program rounds in different places than the f32 reference, e.g. folded constants
// and kernel accumulation orders; the floor covers models where the f32 gap is near zero).
// Measured (seed 31, 26 tokens): program ~1e-5 vs f32 gap ~1e-5 of |logit| ~25, both about 5e-7
// relative. A softened variant (no sparsity, q_norm scaled by 0.05 so attention is near
// uniform) and the sparse ones too must also meet the 1e-4 relative bound of the other families.
// Decode (steps of 1) must equal prefill bit for bit: every kernel computes a row the same
// way whatever the step's token count.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "e2e_support.h"
#include "hf/json_fields.h"

namespace og {
namespace {

using namespace og::testing;

// Multiplies every float32 element of the named tensors in model.safetensors by `factor`
// (testgen writes one fp32 file: 8-byte header length, JSON header, then the data).
void scale_tensors(const Generated& g, const std::string& name_suffix, float factor) {
  const std::string path = g.model_dir() + "/model.safetensors";
  std::string bytes = read_file(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, header_len));
  int scaled = 0;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__" || !name.ends_with(name_suffix)) continue;
    ASSERT_EQ(info["dtype"], "F32") << name;
    const uint64_t begin = 8 + header_len + info["data_offsets"][0].get<uint64_t>();
    const uint64_t end = 8 + header_len + info["data_offsets"][1].get<uint64_t>();
    for (uint64_t o = begin; o < end; o += 4) {
      float f;
      std::memcpy(&f, bytes.data() + o, 4);
      f *= factor;
      std::memcpy(bytes.data() + o, &f, 4);
    }
    ++scaled;
  }
  ASSERT_GT(scaled, 0) << name_suffix;
  write_file(path, bytes);
}

std::vector<double> reference_f32(const Generated& g, const std::vector<int32_t>& ids) {
  auto ck = hf::Checkpoint::open(g.model_dir());
  EXPECT_TRUE(ck.is_ok()) << ck.status().message();
  reference::ForwardOptions o;
  o.float32_activations = true;
  auto r = reference::forward(g.config, *ck, ids, o);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : std::vector<double>{};
}

// Ids below vocab_size_per_layer_input (256 in testgen's config): the ids above it belong to
// the vision and audio towers, whose embedders the tiny checkpoints do not have.
std::vector<int32_t> text_tokens(int64_t n, uint32_t seed = 5) { return test_tokens(n, 256, seed); }

// Exports with the default and a 3-token prefill chunk, runs in steps of 1, 3 and the whole
// chunk, and checks every run against `want` within `bound` (absolute), decode == prefill.
void expect_program_matches(const Generated& g, const std::vector<int32_t>& ids, const std::vector<double>& want,
                            double bound, const std::string& what) {
  for (int64_t program_chunk : {int64_t{0}, int64_t{3}}) {
    auto model = runtime::Model::load(export_to(g, "p.ogp", "fp32", program_chunk));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const std::vector<float> decode = run_program(*model, ids, 1);
    for (int64_t step : {int64_t{1}, int64_t{3}, int64_t{(*model)->prefill_chunk_size()}}) {
      const std::vector<float> got = run_program(*model, ids, step);
      const Diff d = compare(got, want, g.config.vocab_size);
      EXPECT_LE(d.max_abs, bound) << what << " chunk " << program_chunk << " step " << step;
      EXPECT_LE(d.relative(), 1e-4) << what << " chunk " << program_chunk << " step " << step;
      EXPECT_EQ(got, decode) << what << ": steps of " << step << " differ from decode";
      ::testing::Test::RecordProperty(what + "_program_relative_step" + std::to_string(step),
                                      std::to_string(d.relative()));
    }
  }
}

// Donors that are not the last two layers before the shared block: full layers at 1 and 3;
// layers 6 (sliding, donor 5) and 7 (full, donor 3) share.
nlohmann::json scattered_donors() {
  return {{"num_hidden_layers", 8},
          {"layer_types", {"sliding_attention", "full_attention", "sliding_attention", "full_attention",
                           "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}},
          {"num_kv_shared_layers", 2},
          {"activation_sparsity_pattern", {0.95, 0.95, 0.95, 0.0, 0.0, 0.0, 0.0, 0.0}},
          {"sliding_window", 5}};
}

TEST(Gemma3n, SparseModelsAreWithinAFewTimesTheFloat32GapOfTheReference) {
  for (const nlohmann::json& shape : {nlohmann::json::object(), scattered_donors()}) {
    auto g = generate({.family = "gemma3n", .seed = 31, .overrides = shape});
    const auto ids = text_tokens(26);
    const std::vector<double> want = reference_logits(*g, ids);
    const Diff f32_gap = compare(reference_f32(*g, ids), want, g->config.vocab_size);
    ASSERT_LT(f32_gap.relative(), 1e-3) << "float32 reference far from float64: " << shape.dump();
    const double bound = 4 * f32_gap.max_abs + 1e-6 * f32_gap.max_ref;
    RecordProperty("f32_reference_relative_" + std::to_string(g->config.num_hidden_layers),
                   std::to_string(f32_gap.relative()));
    std::printf("gemma3n %s: float32 reference vs float64: max_abs %.3g (relative %.3g); bound %.3g\n",
                shape.dump().c_str(), f32_gap.max_abs, f32_gap.relative(), bound);
    expect_program_matches(*g, ids, want, bound, "sparse" + std::to_string(g->config.num_hidden_layers));
    auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32"));
    ASSERT_TRUE(model.is_ok());
    const Diff d = compare(run_program(*model, ids, 4), want, g->config.vocab_size);
    std::printf("gemma3n %s: program vs float64: max_abs %.3g (relative %.3g)\n", shape.dump().c_str(), d.max_abs,
                d.relative());
  }
}

TEST(Gemma3n, SoftenedAttentionWithoutSparsityMatchesTheReferenceTo1e4) {
  const nlohmann::json dense = {{"activation_sparsity_pattern", {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}}};
  auto g = generate({.family = "gemma3n", .seed = 32, .overrides = dense});
  scale_tensors(*g, "self_attn.q_norm.weight", 0.05f);  // scores ~0.05x: near-uniform attention
  const auto ids = text_tokens(26, 9);
  const std::vector<double> want = reference_logits(*g, ids);
  const Diff f32_gap = compare(reference_f32(*g, ids), want, g->config.vocab_size);
  std::printf("gemma3n softened: float32 reference vs float64 relative %.3g\n", f32_gap.relative());
  expect_program_matches(*g, ids, want, 1e-4 * f32_gap.max_ref, "softened");
}

TEST(Gemma3n, HubLayoutKeepsUnusedKvTensorsOnSharedLayersAndMatches) {
  auto g = generate({.family = "gemma3n", .seed = 33, .hub_layout = true});
  const auto ids = text_tokens(20, 11);
  const std::vector<double> want = reference_logits(*g, ids);
  const Diff f32_gap = compare(reference_f32(*g, ids), want, g->config.vocab_size);
  expect_program_matches(*g, ids, want, 4 * f32_gap.max_abs + 1e-6 * f32_gap.max_ref, "hub");
}

// gemma-3n-E2B's layer pattern (30 layers, full every 5th, the last 10 KV-shared, sparsity
// on the first 10) at tiny width.
nlohmann::json e2b_shape() {
  nlohmann::json types = nlohmann::json::array(), sparsity = nlohmann::json::array();
  for (int i = 0; i < 30; ++i) {
    types.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
    sparsity.push_back(i < 10 ? 0.95 : 0.0);
  }
  return {{"num_hidden_layers", 30},
          {"layer_types", types},
          {"num_kv_shared_layers", 10},
          {"activation_sparsity_pattern", sparsity},
          {"sliding_window", 6}};
}

TEST(Gemma3n, E2BShapedProgramHas20CachesAndInspectReportsThem) {
  auto g = generate({.family = "gemma3n", .seed = 34, .overrides = e2b_shape()});
  const std::string program = export_to(*g, "p.ogp", "fp32", 8, 256);
  auto model = runtime::Model::load(program);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const program::CacheLayout& l = (*model)->layout();
  EXPECT_EQ(l.n_layers, 30);
  ASSERT_EQ(l.n_caches(), 20);
  for (int32_t i = 20; i < 30; ++i) EXPECT_EQ(l.layer_to_cache[i], (i + 1) % 5 == 0 ? 19 : 18) << "layer " << i;

  auto inspect = run_offgraph("inspect --json " + program);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  auto j = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(j["n_caches"], 20);
  EXPECT_EQ(j["n_layers"], 30);
  EXPECT_EQ(j["op_counts"]["update_and_attend"], 30);
  EXPECT_EQ(j["op_counts"]["gaussian_top_k"], 10);
  auto layout = run_offgraph("layout --json " + g->model_dir());
  ASSERT_EQ(layout.exit_code, 0) << layout.err;
  const nlohmann::json lj = nlohmann::json::parse(layout.out);
  EXPECT_EQ(lj["n_caches"], 20);
  for (const auto& [key, value] : lj.items()) EXPECT_EQ(j[key], value) << key;

  const auto ids = text_tokens(20, 13);
  const std::vector<float> decode = run_program(*model, ids, 1);
  EXPECT_EQ(decode, run_program(*model, ids, 8));
  const std::vector<double> want = reference_logits(*g, ids);
  const Diff f32_gap = compare(reference_f32(*g, ids), want, g->config.vocab_size);
  const Diff d = compare(decode, want, g->config.vocab_size);
  std::printf("gemma3n E2B-shaped: program %.3g, float32 reference %.3g (relative)\n", d.relative(),
              f32_gap.relative());
  EXPECT_LE(d.max_abs, 4 * f32_gap.max_abs + 1e-6 * f32_gap.max_ref);
}

TEST(Gemma3n, ConfigsItCannotHonourAreRefusedNamingTheField) {
  struct Case {
    nlohmann::json set;
    std::string field;
  };
  for (const Case& c : {Case{{{"altup_active_idx", 4}}, "text_config.altup_active_idx"},
                        Case{{{"partial_rotary_factor", 0.5}}, "partial_rotary_factor"},
                        Case{{{"hidden_activation", "relu"}}, "text_config.hidden_activation"}}) {
    auto g = generate({.family = "gemma3n", .seed = 35});
    auto j = hf::parse_json(read_file(g->model_dir() + "/config.json"), "config.json");
    for (const auto& [k, v] : c.set.items()) (*j)["text_config"][k] = v;
    write_file(g->model_dir() + "/config.json", j->dump());
    exporter::ExportOptions o{.model = g->model_dir(), .output = g->dir.file("x.ogp")};
    auto s = exporter::export_program(o);
    ASSERT_FALSE(s.is_ok()) << c.set.dump();
    EXPECT_NE(s.status().message().find(c.field), std::string::npos) << s.status().message();
    EXPECT_FALSE(std::ifstream(o.output).good());
  }
}

}  // namespace
}  // namespace og
