// safetensors reading: valid single-file and sharded checkpoints are read in place, and
// every malformed file is refused with a message naming the file and tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "base/half.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"
#include "test_util.h"

namespace og {
namespace {

using og::testing::TempDir;
using og::testing::write_file;

// A safetensors file from a header JSON text and a data segment.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string f32_bytes(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

std::string open_error(const std::string& bytes) {
  TempDir d;
  write_file(d.file("model.safetensors"), bytes);
  auto f = hf::SafetensorsFile::open(d.file("model.safetensors"));
  EXPECT_FALSE(f.is_ok());
  return f.is_ok() ? "" : f.status().message();
}

TEST(Safetensors, ReadsTensorsInPlaceWithTheirValues) {
  TempDir d;
  const std::string data = f32_bytes({1, 2, 3, 4, 5, 6});
  write_file(d.file("model.safetensors"),
             make_file(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                       R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[16,24]}})",
                       data));
  auto ck = hf::Checkpoint::open(d.path());
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  auto a = ck->get("a", {2, 2});
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ((*a)->get(3), 4.0);
  EXPECT_EQ((*a)->nbytes, 16u);
  auto b = ck->get("b");
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ((*b)->dtype, DType::kBF16);
  // Shape disagreeing with the config names tensor, shape and expectation.
  auto wrong = ck->get("a", {4, 1});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("tensor 'a' has shape [2, 2]; config implies [4, 1]"), std::string::npos);
  EXPECT_NE(ck->get("nope").status().message().find("'nope' not found"), std::string::npos);
}

// float8_e4m3fn, every code against the format's definition computed another way: sign,
// then 2^(E - 7) * (1 + M/8) for E in 1..15, 2^-6 * M/8 for E = 0; 0x7f and 0xff are NaN.
TEST(Safetensors, Fp8E4M3CodesDecodeAsTheFormatDefines) {
  for (int code = 0; code < 256; ++code) {
    const int e = (code >> 3) & 15, m = code & 7;
    const double sign = code & 0x80 ? -1.0 : 1.0;
    const float got = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    if (e == 15 && m == 7) {
      EXPECT_TRUE(std::isnan(got)) << code;
      continue;
    }
    const double want = sign * (e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7));
    EXPECT_EQ(static_cast<double>(got), want) << "code " << code;
  }
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.0f);  // the largest
  EXPECT_EQ(fp8_e4m3_to_float(0x01), 0x1p-9f);  // the smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0xb8), -1.0f);
}

// An FP8 checkpoint (config.json's quantization_config fp8, weight_block_size [2, 3]): a [3, 4]
// F8_E4M3 weight reads as code value × its block's scale from W_scale_inv [2, 2] (the blocks at
// the edges partial), and the scale tensor leaves the checkpoint's names.
TEST(Safetensors, Fp8WeightsReadTimesTheirBlockScale) {
  TempDir d;
  // codes: 0x38 = 1.0, 0x40 = 2.0, 0xc4 = -3.0, 0x00 = 0, 0x7e = 448
  const std::string codes = std::string("\x38\x40\xc4\x00" "\x7e\x38\x40\x38" "\x38\x40\x38\xc4", 12);
  const std::string data = codes + f32_bytes({0.5f, 2.0f, 4.0f, 0.25f});
  write_file(d.file("model.safetensors"),
             make_file(R"({"w.weight":{"dtype":"F8_E4M3","shape":[3,4],"data_offsets":[0,12]},)"
                       R"("w.weight_scale_inv":{"dtype":"F32","shape":[2,2],"data_offsets":[12,28]}})",
                       data));
  write_file(d.file("config.json"),
             R"({"quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                 "weight_block_size": [2, 3]}})");
  auto ck = hf::Checkpoint::open(d.path());
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  EXPECT_EQ(ck->names(), std::vector<std::string>{"w.weight"});
  auto w = ck->get("w.weight", {3, 4});
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  // Rows 0-1 take scale row 0, row 2 scale row 1; columns 0-2 scale column 0, column 3 column 1.
  const std::vector<double> want = {0.5, 1.0, -1.5, 0.0,   // 1, 2, -3 × 0.5; 0 × 2
                                    224, 0.5, 1.0, 2.0,    // 448, 1, 2 × 0.5; 1 × 2
                                    4.0, 8.0, 4.0, -0.75};  // 1, 2, 1 × 4; -3 × 0.25
  EXPECT_EQ(hf::to_f64(**w), want);
  // Without the fp8 quantization_config the codes read as themselves, the scales as a tensor.
  std::filesystem::remove(d.file("config.json"));
  auto plain = hf::Checkpoint::open(d.path());
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->names().size(), 2u);
  EXPECT_EQ((*plain->get("w.weight"))->get(2), -3.0);
}

TEST(SafetensorsErrors, Fp8CheckpointProblemsAreNamed) {
  auto error = [](const std::string& header, const std::string& data, const std::string& quant) {
    TempDir d;
    write_file(d.file("model.safetensors"), make_file(header, data));
    write_file(d.file("config.json"), R"({"quantization_config": )" + quant + "}");
    auto ck = hf::Checkpoint::open(d.path());
    EXPECT_FALSE(ck.is_ok());
    return ck.is_ok() ? std::string() : ck.status().message();
  };
  const std::string fp8 = R"({"quant_method": "fp8", "weight_block_size": [2, 2]})";
  const std::string one = R"({"w.weight":{"dtype":"F8_E4M3","shape":[2,2],"data_offsets":[0,4]})";
  EXPECT_NE(error(one + "}", std::string(4, '\x38'), fp8).find("FP8 tensor 'w.weight' has no 'w.weight_scale_inv'"),
            std::string::npos);
  const std::string bad_scale = one + R"(,"w.weight_scale_inv":{"dtype":"F32","shape":[2,1],"data_offsets":[4,12]}})";
  EXPECT_NE(error(bad_scale, std::string(4, '\x38') + f32_bytes({1, 1}), fp8).find("need a float [1, 1]"),
            std::string::npos);
  const std::string good = one + R"(,"w.weight_scale_inv":{"dtype":"F32","shape":[1,1],"data_offsets":[4,8]}})";
  const std::string bytes = std::string(4, '\x38') + f32_bytes({1});
  EXPECT_NE(error(good, bytes, R"({"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [2, 2]})")
                .find("activation_scheme"),
            std::string::npos);
  EXPECT_NE(error(good, bytes, R"({"quant_method": "fp8", "fmt": "e5m2", "weight_block_size": [2, 2]})").find("fmt"),
            std::string::npos);
  EXPECT_NE(error(good, bytes, R"({"quant_method": "fp8", "weight_block_size": null})").find("weight_block_size"),
            std::string::npos);
}

TEST(Safetensors, WriterRoundTripsShardedCheckpoints) {
  TempDir d;
  std::vector<hf::OwnedTensor> ts;
  for (int i = 0; i < 5; ++i) {
    hf::OwnedTensor t{"t" + std::to_string(i), DType::kF32, {4}, {}};
    std::string b = f32_bytes({float(i), float(i + 1), float(i + 2), float(i + 3)});
    t.bytes.assign(b.begin(), b.end());
    ts.push_back(t);
  }
  ASSERT_TRUE(hf::write_checkpoint(d.path(), ts, 40).is_ok());
  EXPECT_TRUE(std::filesystem::exists(d.file("model.safetensors.index.json")));
  EXPECT_TRUE(std::filesystem::exists(d.file("model-00001-of-00003.safetensors")));
  auto ck = hf::Checkpoint::open(d.path());
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  EXPECT_EQ(ck->names().size(), 5u);
  EXPECT_EQ((*ck->get("t4"))->get(2), 6.0);
}

TEST(Safetensors, ZeroTensorsAreWrittenAsHolesAndReadAsZeros) {
  // A zero tensor between two others and one at the end (the file must still be extended).
  TempDir d;
  std::vector<hf::OwnedTensor> ts(4);
  ts[0] = {"a", DType::kF32, {2}, {}};
  const std::string a = f32_bytes({1.5f, -2});
  ts[0].bytes.assign(a.begin(), a.end());
  ts[1] = {"hole", DType::kBF16, {1024, 64}, {}, 1024 * 64 * 2};
  ts[2] = {"b", DType::kF32, {1}, {}};
  const std::string b = f32_bytes({7});
  ts[2].bytes.assign(b.begin(), b.end());
  ts[3] = {"tail", DType::kF32, {4096}, {}, 4096 * 4};
  ASSERT_TRUE(hf::write_checkpoint(d.path(), ts).is_ok());
  auto ck = hf::Checkpoint::open(d.path());
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  EXPECT_EQ((*ck->get("a"))->get(1), -2.0);
  EXPECT_EQ((*ck->get("b"))->get(0), 7.0);
  const hf::TensorView* hole = *ck->get("hole", {1024, 64});
  const hf::TensorView* tail = *ck->get("tail", {4096});
  for (int64_t i : {int64_t{0}, int64_t{777}, hole->numel() - 1}) EXPECT_EQ(hole->get(i), 0.0);
  EXPECT_EQ(tail->get(4095), 0.0);
}

TEST(SafetensorsErrors, EachMalformedFileIsNamed) {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  EXPECT_NE(open_error("").find("too short"), std::string::npos);
  EXPECT_NE(open_error("abc").find("too short"), std::string::npos);
  std::string past = make_file("{" + ok_entry + "}", f32_bytes({1, 2}));
  past[0] = '\xff';  // header length far past the end
  EXPECT_NE(open_error(past).find("runs past the end of the file"), std::string::npos);
  EXPECT_NE(open_error(make_file("{not json", "")).find("invalid JSON"), std::string::npos);
  EXPECT_NE(open_error(make_file("[1,2]", "")).find("not a JSON object"), std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1, 2})))
                .find("tensor 'a': unknown dtype 'Q4'"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", f32_bytes({1, 2})))
                .find("tensor 'a'"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", f32_bytes({1, 2})))
                .find("run past the end of the data"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", f32_bytes({1, 2})))
                .find("reversed"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", f32_bytes({1, 2})))
                .find("shape [3] x F32 needs 12"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                 f32_bytes({1, 2, 3})))
                .find("overlap"),
            std::string::npos);
  EXPECT_NE(open_error(make_file(R"({"a":{"dtype":"F32","shape":[2]}})", f32_bytes({1, 2}))).find("data_offsets"),
            std::string::npos);
  // Truncated: a valid file cut short.
  std::string full = make_file("{" + ok_entry + "}", f32_bytes({1, 2}));
  EXPECT_NE(open_error(full.substr(0, full.size() - 3)).find("run past the end of the data"), std::string::npos);
}

TEST(SafetensorsErrors, ShardedIndexProblemsAreNamed) {
  TempDir d;
  write_file(d.file("model.safetensors.index.json"), R"({"weight_map": {"a": "model-00001-of-00002.safetensors"}})");
  auto ck = hf::Checkpoint::open(d.path());
  ASSERT_FALSE(ck.is_ok());
  EXPECT_NE(ck.status().message().find("model-00001-of-00002.safetensors"), std::string::npos);
  EXPECT_NE(ck.status().message().find("missing"), std::string::npos);

  write_file(d.file("model-00001-of-00002.safetensors"),
             make_file(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})));
  ck = hf::Checkpoint::open(d.path());
  ASSERT_FALSE(ck.is_ok());
  EXPECT_NE(ck.status().message().find("tensor 'a' is named by the index but missing"), std::string::npos);

  write_file(d.file("model.safetensors.index.json"), "{truncated");
  EXPECT_NE(hf::Checkpoint::open(d.path()).status().message().find("invalid JSON"), std::string::npos);
  write_file(d.file("model.safetensors.index.json"), R"({"weight_map": {"a": "../etc/passwd"}})");
  EXPECT_NE(hf::Checkpoint::open(d.path()).status().message().find("not a file in the directory"), std::string::npos);

  TempDir empty;
  EXPECT_NE(hf::Checkpoint::open(empty.path()).status().message().find("no model.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace og
