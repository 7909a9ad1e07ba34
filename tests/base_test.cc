// src/base pieces shared by export, the reference, the tokenizer and the chat renderer,
// pinned against values computed independently of this code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "base/large_buffer.h"
#include "base/mapped_file.h"
#include "base/special_functions.h"
#include "base/storage_type.h"
#include "base/utf8.h"

namespace og {
namespace {

// erfinv at float64 inputs, from mpmath.erfinv at 40 digits rounded to float64 (the
// exporter's and the reference's Gemma-3n sparsity cutoffs both read this one function).
// The storage types' table: every enumerator has exactly one row, names and codes are unique,
// and the on-disk codes are the ones files were written with (append-only: a change here
// makes old program and cache files mean something else).
TEST(StorageTypes, OneRowPerTypeWithUniqueNamesAndPinnedCodes) {
  constexpr StorageType kAll[] = {StorageType::kF32, StorageType::kF16, StorageType::kBF16, StorageType::kQ8,
                                  StorageType::kQ4,  StorageType::kQ8_0, StorageType::kQ4_0};
  ASSERT_EQ(std::size(kStorageTypes), std::size(kAll));
  for (StorageType t : kAll) {
    int rows = 0;
    for (const StorageTypeInfo& i : kStorageTypes) rows += i.type == t;
    EXPECT_EQ(rows, 1) << static_cast<int>(t);
    EXPECT_EQ(storage_type_from_name(storage_type_name(t)), t);
    EXPECT_EQ(storage_type_from_name(storage_type_tag(t)), t);
  }
  for (size_t a = 0; a < std::size(kStorageTypes); ++a)
    for (size_t b = a + 1; b < std::size(kStorageTypes); ++b) {
      const StorageTypeInfo &x = kStorageTypes[a], &y = kStorageTypes[b];
      EXPECT_NE(x.name, y.name);
      EXPECT_NE(x.tag, y.tag);
      EXPECT_NE(x.name, y.tag);
      if (x.program_code != kNoCode) EXPECT_NE(x.program_code, y.program_code);
      if (x.cache_code != kNoCode) EXPECT_NE(x.cache_code, y.cache_code);
    }
  const std::tuple<StorageType, const char*, const char*, int, int, int> pinned[] = {
      {StorageType::kF32, "fp32", "f32", 0, 0, 4}, {StorageType::kF16, "fp16", "f16", 1, 1, 2},
      {StorageType::kBF16, "bf16", "bf16", 2, 2, 2}, {StorageType::kQ8, "q8", "q8", 4, kNoCode, 0},
      {StorageType::kQ4, "q4", "q4", 5, kNoCode, 0},   {StorageType::kQ8_0, "q8_0", "q8_0", kNoCode, 3, 0},
      {StorageType::kQ4_0, "q4_0", "q4_0", kNoCode, 4, 0}};
  for (const auto& [t, name, tag, program_code, cache_code, bytes] : pinned) {
    EXPECT_EQ(storage_type_name(t), name);
    EXPECT_EQ(storage_type_tag(t), tag);
    EXPECT_EQ(storage_info(t).program_code, program_code) << name;
    EXPECT_EQ(storage_info(t).cache_code, cache_code) << name;
    EXPECT_EQ(storage_value_bytes(t), static_cast<size_t>(bytes)) << name;
    EXPECT_EQ(storage_info(t).kv, cache_code != kNoCode) << name;
  }
  EXPECT_EQ(storage_type_from_name("int4"), std::nullopt);
  EXPECT_EQ(storage_type_names([](const StorageTypeInfo& i) { return i.kv; }), "fp32, fp16, bf16, q8_0, q4_0");
  // A cache row's bytes: GGUF's blocks (34 and 18 bytes per 32 values), a partial block padded.
  EXPECT_EQ(kv_row_bytes(StorageType::kF32, 64), 256);
  EXPECT_EQ(kv_row_bytes(StorageType::kBF16, 40), 80);
  EXPECT_EQ(kv_row_bytes(StorageType::kQ8_0, 64), 68);
  EXPECT_EQ(kv_row_bytes(StorageType::kQ8_0, 40), 68);
  EXPECT_EQ(kv_row_bytes(StorageType::kQ4_0, 256), 144);
  EXPECT_EQ(kv_row_bytes(StorageType::kQ4_0, 16), 18);
}

TEST(SpecialFunctions, ErfinvMatchesHighPrecisionValues) {
  struct Case {
    double y, want, tolerance;
  };
  for (const Case& c : {Case{0.0, 0.0, 0.0}, Case{0.5, 0.4769362762044699, 1e-15},
                        Case{0.9, 1.1630871536766743, 2e-15}, Case{-0.3, -0.2724627147267543, 1e-15},
                        Case{1e-10, 8.862269254527581e-11, 1e-25},
                        // Near |y| = 1 float64 erf resolves x only to ~1e-16 / erf'(x).
                        Case{0.999, 2.3267537655135246, 5e-14}, Case{-0.9999999, -3.7665625816384707, 2e-10}}) {
    EXPECT_NEAR(erfinv(c.y), c.want, c.tolerance) << "erfinv(" << c.y << ")";
  }
}

TEST(SpecialFunctions, ErfinvIsOddAndInvertsErf) {
  for (double x : {-2.5, -1.0, -0.1, 0.2, 0.75, 1.7, 3.0}) {
    EXPECT_NEAR(erfinv(std::erf(x)), x, 1e-12 / std::exp(-x * x)) << x;
    EXPECT_EQ(erfinv(-std::erf(x)), -erfinv(std::erf(x))) << x;
  }
}

TEST(SpecialFunctions, ErfinvOutsideTheOpenIntervalIsInfiniteOrNan) {
  EXPECT_EQ(erfinv(1.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(erfinv(-1.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(erfinv(1.5)));
  EXPECT_TRUE(std::isnan(erfinv(std::numeric_limits<double>::quiet_NaN())));
}

// Expected bytes written out by hand from the UTF-8 table (RFC 3629, section 3).
TEST(Utf8, EncodesOneToFourByteCodePoints) {
  EXPECT_EQ(encode_utf8(U"A"), "A");
  EXPECT_EQ(encode_utf8(U"\u00e9"), "\xC3\xA9");          // é: 2 bytes
  EXPECT_EQ(encode_utf8(U"\u07ff"), "\xDF\xBF");          // last 2-byte code point
  EXPECT_EQ(encode_utf8(U"\u0800"), "\xE0\xA0\x80");      // first 3-byte code point
  EXPECT_EQ(encode_utf8(U"\u20ac"), "\xE2\x82\xAC");      // €
  EXPECT_EQ(encode_utf8(U"\U0001F600"), "\xF0\x9F\x98\x80");  // 😀: 4 bytes
  EXPECT_EQ(encode_utf8(U"\U0010FFFF"), "\xF4\x8F\xBF\xBF");
  std::string out = "x";
  append_utf8(out, U'\u00a0');
  EXPECT_EQ(out, "x\xC2\xA0");
}

// Large buffers (prefix-cache states): 2 MiB aligned from 2 MiB on, plain below, and every
// byte written reads back, across a resize that moves the data between the two kinds.
// A program read into huge pages holds the file's bytes exactly as the mapping does, at any
// size (none, less than a page, past a 2 MiB page boundary), from a 2 MiB aligned start.
TEST(MappedFile, BothResidenciesHoldTheFileByteForByte) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "og_mapped_file_test";
  std::filesystem::create_directories(dir);
  for (const size_t size : {size_t{0}, size_t{1}, size_t{4097}, (size_t{3} << 20) + 5}) {
    SCOPED_TRACE(::testing::Message() << size << " bytes");
    std::vector<char> bytes(size);
    uint32_t state = 12345;
    for (char& b : bytes) b = static_cast<char>((state = state * 1664525u + 1013904223u) >> 24);
    const std::string path = (dir / ("f" + std::to_string(size))).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
    for (const Residency r : {Residency::kMapped, Residency::kHugePages}) {
      auto f = MappedFile::open(path, r);
      ASSERT_TRUE(f.is_ok()) << f.status().message();
      ASSERT_EQ((*f)->size(), size);
      EXPECT_EQ((*f)->residency(), r);
      if (size == 0) continue;
      EXPECT_EQ(std::memcmp((*f)->data(), bytes.data(), size), 0);
      if (r == Residency::kHugePages) EXPECT_EQ(reinterpret_cast<uintptr_t>((*f)->data()) % (size_t{2} << 20), 0u);
    }
  }
  for (const Residency r : {Residency::kMapped, Residency::kHugePages}) {
    auto missing = MappedFile::open((dir / "missing").string(), r);
    ASSERT_FALSE(missing.is_ok());
    EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos) << missing.status().message();
    auto directory = MappedFile::open(dir.string(), r);
    ASSERT_FALSE(directory.is_ok());
    EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos) << directory.status().message();
  }
  std::filesystem::remove_all(dir);
}

TEST(LargeBytes, HoldWhatIsWrittenAtEverySizeAndAlignLargeOnes) {
  for (size_t n : {size_t{1}, size_t{4096}, (size_t{2} << 20) - 1, size_t{2} << 20, (size_t{3} << 20) + 5}) {
    SCOPED_TRACE(n);
    LargeBytes b(n);
    ASSERT_EQ(b.size(), n);
    if (n >= (size_t{2} << 20)) EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (size_t{2} << 20), 0u);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
    b.resize(n + (size_t{1} << 20));  // grows: reallocated, the old bytes copied
    for (size_t i = 0; i < n; i += 4093) ASSERT_EQ(b[i], static_cast<uint8_t>(i * 7 + 3)) << i;
    ASSERT_EQ(b[n - 1], static_cast<uint8_t>((n - 1) * 7 + 3));
  }
}

}  // namespace
}  // namespace og
