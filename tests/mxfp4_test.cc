// MXFP4 decoding (transformers' convert_moe_packed_tensors) on hand-made bytes, in the
// exporter (export/mxfp4.h, a table) and in the reference (reference/mxfp4.h, the e2m1 bit
// layout): low nibble first, sign-magnitude codes (8 is -0), e8m0 scales with bias 127.
// A checkpoint whose scales hold 0xFF (e8m0's NaN) is refused at export, naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "export/mxfp4.h"
#include "reference/mxfp4.h"

namespace og {
namespace {

TEST(Mxfp4, E2m1CodesAreTransformersFp4Values) {
  const double want[16] = {+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
                           -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};  // mxfp4.py FP4_VALUES
  for (uint8_t code = 0; code < 16; ++code) {
    EXPECT_EQ(reference::e2m1_value(code), want[code]) << int(code);
    EXPECT_EQ(std::signbit(reference::e2m1_value(code)), std::signbit(want[code])) << int(code);
    EXPECT_EQ(exporter::kFp4Values[code], static_cast<float>(want[code])) << int(code);
    EXPECT_EQ(std::signbit(exporter::kFp4Values[code]), std::signbit(want[code])) << int(code);
  }
}

// One expert of 3 rows and one group (32 values per row): row 0 scale 0x7F (x1), row 1 0x80
// (x2), row 2 0x7E (x1/2); byte 0 of each row is 0x21 (low nibble 1 = +0.5 first, then high
// nibble 2 = +1.0), byte 1 is 0x8F (-6, then -0), the rest 0x70 (+0, then +6).
TEST(Mxfp4, DecodesLowNibbleFirstTimesTwoToTheScaleMinus127) {
  std::vector<uint8_t> blocks(2 * 3 * 16, 0x70), scales = {0x7F, 0x80, 0x7E, 0xFE, 0x00, 0x01};  // [2, 3, 1, 16], [2, 3, 1]
  for (int r = 0; r < 6; ++r) {
    blocks[r * 16 + 0] = 0x21;
    blocks[r * 16 + 1] = 0x8F;
  }
  const hf::TensorView bv{.name = "b", .dtype = DType::kU8, .shape = {2, 3, 1, 16}, .data = blocks.data(), .nbytes = blocks.size()};
  const hf::TensorView sv{.name = "s", .dtype = DType::kU8, .shape = {2, 3, 1}, .data = scales.data(), .nbytes = scales.size()};
  for (int64_t e = 0; e < 2; ++e) {
    auto w = reference::mxfp4_dequantize(bv, sv, e);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    ASSERT_EQ(w->rows, 3);
    ASSERT_EQ(w->cols, 32);
    for (int64_t r = 0; r < 3; ++r) {
      const double s = std::pow(2.0, static_cast<int>(scales[e * 3 + r]) - 127);
      const double want[6] = {0.5 * s, 1.0 * s, -6.0 * s, -0.0, 0.0, 6.0 * s};  // columns 0..5
      for (int64_t c = 0; c < 32; ++c) {
        const double v = c < 6 ? want[c] : (c % 2 == 0 ? 0.0 : 6.0 * s);
        EXPECT_EQ(w->at(r, c), v) << "expert " << e << " row " << r << " col " << c;
        EXPECT_EQ(exporter::mxfp4_value(blocks.data(), scales.data(), 3, 1, e, r, c), static_cast<float>(v))
            << "expert " << e << " row " << r << " col " << c;
      }
      EXPECT_TRUE(std::signbit(w->at(r, 3)));  // code 8: -0
      EXPECT_TRUE(std::signbit(exporter::mxfp4_value(blocks.data(), scales.data(), 3, 1, e, r, 3)));
    }
  }
  // Pinned: the smallest and largest exponents here are exact in f32.
  EXPECT_EQ(exporter::mxfp4_value(blocks.data(), scales.data(), 3, 1, 1, 0, 0), 0x1p-1f * 0x1p127f);  // 0xFE: 2^127
  EXPECT_EQ(exporter::mxfp4_value(blocks.data(), scales.data(), 3, 1, 1, 1, 0), 0x1p-1f * 0x1p-127f); // 0x00: 2^-127
}

// e8m0 has no infinity; 0xFF is its NaN. transformers would turn it into 2^128 (inf); an
// export refuses it instead, naming the tensor.
TEST(Mxfp4, AScaleOf0xFFIsRefusedNamingTheTensor) {
  auto g = testing::generate({.family = "gpt_oss", .seed = 3});
  const std::string file = g->model_dir() + "/model.safetensors";
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << file;
  uint64_t header_len = 0;
  f.read(reinterpret_cast<char*>(&header_len), 8);
  std::string header(header_len, '\0');
  f.read(header.data(), static_cast<std::streamsize>(header_len));
  const auto h = nlohmann::json::parse(header);
  std::string name;
  for (const auto& [key, value] : h.items())
    if (key.find("down_proj_scales") != std::string::npos) name = key;
  ASSERT_FALSE(name.empty()) << "no MXFP4 scales in the generated checkpoint";
  ASSERT_EQ(h[name]["dtype"], "U8");
  const uint64_t at = 8 + header_len + h[name]["data_offsets"][0].get<uint64_t>() + 1;  // its second scale
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(0xFF));
  f.close();
  exporter::ExportOptions o;
  o.model = g->model_dir();
  o.output = g->dir.file("p.ogp");
  auto s = exporter::export_program(o);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("0xFF"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find(name), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace og
