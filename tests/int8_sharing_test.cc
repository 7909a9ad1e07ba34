// Int8 activations shared between linears (Model::plan_int8_inputs, Session::step): the
// linears that read one value with one weight layout share one quantization, filled by the
// first of them in each step, and every reader gets the bits it would get alone.
//
// - The plan: q/k/v share a buffer that q fills, gate/up one that gate fills; o_proj and
//   down_proj fill their own. The same linears run as groups (Model::plan_linear_groups):
//   q with k and v, gate with up, in int8 and in bf16 programs.
// - Only linears of one weight layout share: a row-major k_proj among interleaved q and v
//   (row_block, kernels.h) quantizes the value for itself, and no group forms around it.
// - A value changes every step: decode (every value requantized each step) equals prefill
//   bit for bit.
// - LogitsRows::kLast: a value quantized for all T rows by a reader before the last
//   attention and read again after it, where ops run on the last row only, is read at its
//   last row (a program rewired so: the last layer's up_proj reads the attention's input).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "e2e_support.h"
#include "program/program_file.h"
#include "runtime/model.h"
#include "runtime/session.h"

namespace og {
namespace {

std::string export_int8(const testing::Generated& g, const std::string& name, const std::string& qlinear) {
  exporter::ExportOptions o;
  o.qlinear = qlinear;
  o.qactivations = "int8";
  return testing::export_with(g, name, std::move(o));
}

std::string weight_name(const fb::Program& p, size_t op) {
  const fb::LinearAttrs* a = p.ops()->Get(static_cast<uint32_t>(op))->attrs_as_LinearAttrs();
  return a ? p.tensors()->Get(a->weight())->name()->str() : "";
}

bool ends_with(const std::string& s, const std::string& tail) { return s.size() >= tail.size() && s.ends_with(tail); }

TEST(Int8Sharing, QkvShareOneQuantizationAndGateUpAnother) {
  auto g = testing::generate({.family = "llama", .seed = 5, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  auto model = runtime::Model::load(export_int8(*g, "q.ogp", "4w"));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const auto& ops = (*model)->ops();
  int32_t qkv = -1, gate_up = -1, checked = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = weight_name((*model)->program(), i);
    if (ends_with(w, "q_proj.weight") || ends_with(w, "gate_proj.weight")) {
      EXPECT_TRUE(ops[i].int8_fill) << w;
      EXPECT_EQ(ops[i].group, ends_with(w, "q_proj.weight") ? 3 : 2) << w;
      (ends_with(w, "q_proj.weight") ? qkv : gate_up) = ops[i].int8_buffer;
    } else if (ends_with(w, "k_proj.weight") || ends_with(w, "v_proj.weight")) {
      EXPECT_FALSE(ops[i].int8_fill) << w;
      EXPECT_EQ(ops[i].int8_buffer, qkv) << w;
      EXPECT_EQ(ops[i].group, 0) << w;
      ++checked;
    } else if (ends_with(w, "up_proj.weight")) {
      EXPECT_FALSE(ops[i].int8_fill) << w;
      EXPECT_EQ(ops[i].group, 0) << w;
      EXPECT_EQ(ops[i].int8_buffer, gate_up) << w;
      ++checked;
    } else if (ends_with(w, "o_proj.weight") || ends_with(w, "down_proj.weight")) {
      EXPECT_TRUE(ops[i].int8_fill) << w;
      EXPECT_EQ(ops[i].group, 1) << w;
    }
    if (ops[i].int8_buffer >= 0) {
      EXPECT_LT(ops[i].int8_buffer, static_cast<int32_t>((*model)->int8_buffer_row_bytes().size()));
    }
  }
  EXPECT_EQ(checked, 3 * g->config.num_hidden_layers);
  // Buffers are reused once a value's last reader has run: q/k/v's live while nothing else
  // is quantized, so one buffer serves every linear.
  EXPECT_EQ((*model)->int8_buffer_row_bytes().size(), 1u);
}

// Float programs group the same linears (x packed once), and bf16-activation ones too; the
// LM head, writing the logits, stays alone.
TEST(Int8Sharing, FloatLinearsOfOneValueRunAsGroups) {
  auto g = testing::generate({.family = "llama", .seed = 5,
                              .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  for (const char* qact : {"f32", "bf16"}) {
    exporter::ExportOptions o{.dtype = "bf16", .qactivations = qact};
    auto model = runtime::Model::load(testing::export_with(*g, std::string(qact) + ".ogp", std::move(o)));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const auto& ops = (*model)->ops();
    int32_t groups = 0, members = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != runtime::OpKind::kLinear) {
        EXPECT_EQ(ops[i].group, 1);
        continue;
      }
      const std::string w = weight_name((*model)->program(), i);
      const int32_t want = ends_with(w, "q_proj.weight") ? 3 : ends_with(w, "gate_proj.weight") ? 2
                           : ends_with(w, "k_proj.weight") || ends_with(w, "v_proj.weight") || ends_with(w, "up_proj.weight") ? 0
                                                                                                                           : 1;
      EXPECT_EQ(ops[i].group, want) << qact << " " << w;
      groups += ops[i].group > 1;
      members += ops[i].group == 0;
    }
    EXPECT_EQ(groups, 2 * g->config.num_hidden_layers) << qact;
    EXPECT_EQ(members, 3 * g->config.num_hidden_layers) << qact;
  }
}

TEST(Int8Sharing, DecodeRequantizesEveryStepAndEqualsPrefillBitForBit) {
  auto g = testing::generate({.family = "llama", .seed = 6, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  for (const char* q : {"4w", "8w"}) {
    auto model = runtime::Model::load(export_int8(*g, std::string(q) + ".ogp", q));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const auto ids = testing::test_tokens(12, g->config.vocab_size, 3);
    const auto prefill = testing::run_program(*model, ids, 12), decode = testing::run_program(*model, ids, 1);
    ASSERT_EQ(prefill.size(), decode.size());
    EXPECT_EQ(std::memcmp(prefill.data(), decode.data(), prefill.size() * sizeof(float)), 0) << q;
  }
}

// A program whose k_proj weights (and scales) are the row-major ones of the f32-activation
// export of the same checkpoint, among the interleaved q/v of the int8 export: a valid
// program whose q and k read one value with two weight layouts.
std::string with_row_major_k_proj(const std::string& interleaved, const std::string& row_major, const std::string& out) {
  auto a = program::ProgramFile::open(interleaved), b = program::ProgramFile::open(row_major);
  EXPECT_TRUE(a.is_ok() && b.is_ok());
  fb::ProgramT p, pb;
  (*a)->program().UnPackTo(&p);
  (*b)->program().UnPackTo(&pb);
  EXPECT_EQ(p.tensors.size(), pb.tensors.size());
  std::vector<bool> from_b(p.tensors.size(), false);
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (ends_with(p.tensors[i]->name, "k_proj.weight")) {
      EXPECT_EQ(p.tensors[i]->row_block, 16);
      EXPECT_EQ(pb.tensors[i]->row_block, 0);
      from_b[i] = true;
      if (p.tensors[i]->scales >= 0) from_b[static_cast<size_t>(p.tensors[i]->scales)] = true;
    }
  auto writer = program::ProgramWriter::create(out);
  EXPECT_TRUE(writer.is_ok());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    if (from_b[i]) p.tensors[i] = std::move(pb.tensors[i]);
    const uint8_t* data = (from_b[i] ? *b : *a)->tensor_data(static_cast<int32_t>(i));
    EXPECT_TRUE((*writer)->write_tensor_data(*p.tensors[i], {data, p.tensors[i]->nbytes}).is_ok());
  }
  EXPECT_TRUE((*writer)->finish(p).is_ok());
  return out;
}

TEST(Int8Sharing, LinearsOfOneValueWithDifferentRowBlocksQuantizeItSeparately) {
  auto g = testing::generate({.family = "llama", .seed = 5, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  exporter::ExportOptions f32{.qlinear = "4w", .qactivations = "f32"};
  const std::string prog = with_row_major_k_proj(export_int8(*g, "q.ogp", "4w"), testing::export_with(*g, "f.ogp", f32),
                                                 g->dir.file("mixed.ogp"));
  auto model = runtime::Model::load(prog);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const auto& ops = (*model)->ops();
  int32_t q = -1, checked = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = weight_name((*model)->program(), i);
    if (ends_with(w, "q_proj.weight")) {
      EXPECT_EQ(ops[i].matrix.row_block, 16) << w;
      EXPECT_TRUE(ops[i].int8_fill) << w;
      EXPECT_EQ(ops[i].group, 1) << w;  // k, next, has another layout
      q = ops[i].int8_buffer;
    } else if (ends_with(w, "k_proj.weight")) {
      EXPECT_EQ(ops[i].matrix.row_block, 0) << w;
      EXPECT_TRUE(ops[i].int8_fill) << w;  // its own quantization
      EXPECT_EQ(ops[i].group, 1) << w;
      ++checked;
    } else if (ends_with(w, "v_proj.weight")) {
      EXPECT_EQ(ops[i].matrix.row_block, 16) << w;
      EXPECT_FALSE(ops[i].int8_fill) << w;  // q's
      EXPECT_EQ(ops[i].int8_buffer, q) << w;
      EXPECT_EQ(ops[i].group, 1) << w;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * g->config.num_hidden_layers);

  // A float program so mixed runs q, k and v alone (a group needs one layout), and its
  // prefill equals decode.
  exporter::ExportOptions interleaved{.dtype = "bf16"}, row_major{.dtype = "bf16", .layout = "row-major"};
  const std::string float_prog =
      with_row_major_k_proj(testing::export_with(*g, "fi.ogp", interleaved), testing::export_with(*g, "fr.ogp", row_major),
                            g->dir.file("float_mixed.ogp"));
  auto fm = runtime::Model::load(float_prog);
  ASSERT_TRUE(fm.is_ok()) << fm.status().message();
  for (size_t i = 0; i < (*fm)->ops().size(); ++i)
    if (ends_with(weight_name((*fm)->program(), i), "_proj.weight") &&
        !ends_with(weight_name((*fm)->program(), i), "gate_proj.weight") &&
        !ends_with(weight_name((*fm)->program(), i), "up_proj.weight"))
      EXPECT_EQ((*fm)->ops()[i].group, 1) << weight_name((*fm)->program(), i);
  const auto ids = testing::test_tokens(9, g->config.vocab_size, 8);
  const auto prefill = testing::run_program(*fm, ids, 9), decode = testing::run_program(*fm, ids, 1);
  ASSERT_EQ(prefill.size(), decode.size());
  EXPECT_EQ(std::memcmp(prefill.data(), decode.data(), prefill.size() * sizeof(float)), 0);
}

// A copy of `path` whose last up_proj reads the last q_proj's input (both [T, hidden]
// read with one weight layout): after the last attention, a reader of a value quantized
// for all rows before it.
std::string rewire_last_up_proj(const std::string& path, const std::string& out) {
  auto pf = program::ProgramFile::open(path);
  EXPECT_TRUE(pf.is_ok());
  fb::ProgramT p;
  (*pf)->program().UnPackTo(&p);
  int64_t q = -1, up = -1;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const std::string w = weight_name((*pf)->program(), i);
    if (ends_with(w, "q_proj.weight")) q = static_cast<int64_t>(i);
    if (ends_with(w, "up_proj.weight")) up = static_cast<int64_t>(i);
  }
  EXPECT_TRUE(q >= 0 && up > q);
  p.ops[up]->inputs[0] = p.ops[q]->inputs[0];
  auto writer = program::ProgramWriter::create(out);
  EXPECT_TRUE(writer.is_ok());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const uint8_t* data = (*pf)->tensor_data(static_cast<int32_t>(i));
    EXPECT_TRUE((*writer)->write_tensor_data(*p.tensors[i], {data, p.tensors[i]->nbytes}).is_ok());
  }
  EXPECT_TRUE((*writer)->finish(p).is_ok());
  return out;
}

TEST(Int8Sharing, ALastRowReaderOfAValueQuantizedForEveryRowReadsTheLastRow) {
  auto g = testing::generate({.family = "llama", .seed = 7, .overrides = {{"hidden_size", 128}, {"intermediate_size", 256}}});
  const std::string prog = rewire_last_up_proj(export_int8(*g, "q.ogp", "4w"), g->dir.file("rewired.ogp"));
  auto model = runtime::Model::load(prog);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  // The rewiring holds: the last up_proj, in the row-wise suffix, reuses q_proj's rows.
  const auto& ops = (*model)->ops();
  size_t up = 0;
  for (size_t i = 0; i < ops.size(); ++i)
    if (ends_with(weight_name((*model)->program(), i), "up_proj.weight")) up = i;
  ASSERT_GE(up, (*model)->row_suffix_begin());
  ASSERT_FALSE(ops[up].int8_fill);
  ASSERT_FALSE(ops[up].in_from_suffix[0]);

  const int64_t V = (*model)->vocab_size(), T = 7;
  const auto ids = testing::test_tokens(T, g->config.vocab_size, 4);
  auto all = runtime::Session::create(*model, {.threads = 1});
  auto last = runtime::Session::create(*model, {.threads = 1});
  ASSERT_TRUE(all.is_ok() && last.is_ok());
  auto la = (*all)->append(ids, runtime::LogitsRows::kAll);
  ASSERT_TRUE(la.is_ok()) << la.status().message();
  auto ll = (*last)->append(ids, runtime::LogitsRows::kLast);
  ASSERT_TRUE(ll.is_ok()) << ll.status().message();
  ASSERT_EQ(ll->size(), static_cast<size_t>(V));
  EXPECT_EQ(std::memcmp(la->data() + (T - 1) * V, ll->data(), V * sizeof(float)), 0);
  // And both equal token-by-token decode.
  const auto decode = testing::run_program(*model, ids, 1);
  EXPECT_EQ(std::memcmp(decode.data() + (T - 1) * V, ll->data(), V * sizeof(float)), 0);
}

}  // namespace
}  // namespace og
