// Cache save/restore: a restored session continues exactly as the saved one would; files
// for another program, dtype or context size, and corrupt or truncated files are refused
// without touching the session.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "e2e_support.h"
#include "runtime/cache/cache_file.h"

namespace og {
namespace {

using namespace og::testing;

class CacheFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gen_ = generate({.family = "gemma3_text", .seed = 41});
    auto m = runtime::Model::load(export_to(*gen_, "p.ogp", "fp32", 4, 64));
    ASSERT_TRUE(m.is_ok());
    model_ = *m;
    ids_ = test_tokens(30, model_->vocab_size(), 2);
  }
  std::unique_ptr<runtime::Session> fed(size_t n, StorageType kv = StorageType::kF32) {
    auto s = runtime::Session::create(model_, {.kv_dtype = kv});
    EXPECT_TRUE(s.is_ok());
    for (size_t t = 0; t < n; t += 4) {
      auto l = (*s)->append(std::span<const int32_t>(ids_.data() + t, std::min<size_t>(4, n - t)));
      EXPECT_TRUE(l.is_ok());
    }
    return std::move(*s);
  }
  std::unique_ptr<Generated> gen_;
  std::shared_ptr<const runtime::Model> model_;
  std::vector<int32_t> ids_;
};

TEST_F(CacheFileTest, RestoredSessionContinuesExactly) {
  for (size_t prefix : {size_t{3}, size_t{17}}) {  // before and after the rings wrap
    auto saved = fed(prefix);
    const std::string path = gen_->dir.file("c.kv");
    ASSERT_TRUE(saved->save(path).is_ok());
    auto restored = runtime::Session::create(model_);
    ASSERT_TRUE((*restored)->load(path).is_ok());
    EXPECT_EQ((*restored)->length(), static_cast<int64_t>(prefix));
    const std::vector<int32_t> next(ids_.begin() + static_cast<long>(prefix), ids_.begin() + static_cast<long>(prefix) + 4);
    auto a = saved->append(next), b = (*restored)->append(next);
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_EQ(std::vector<float>(a->begin(), a->end()), std::vector<float>(b->begin(), b->end()));
  }
}

// A file is the oldest version that expresses it: these caches keep K and V apart, so version 2
// (no per-cache copy count), which builds before version 3 read too. The same file rewritten as
// version 3 (a copy count of 2 after each cache's geometry) restores and continues alike; a copy
// count other than 1 or 2 is refused.
TEST_F(CacheFileTest, FilesAreTheOldestVersionThatExpressesThem) {
  auto saved = fed(17);
  const std::string path = gen_->dir.file("c.kv");
  ASSERT_TRUE(saved->save(path).is_ok());
  const std::string v2 = read_file(path);
  uint32_t version = 0, n = 0;
  std::memcpy(&version, v2.data() + 8, 4);
  std::memcpy(&n, v2.data() + 32, 4);
  ASSERT_EQ(version, 2u);
  // Header: magic 8, version 4, dtype 4, program 8, length 8, count 4; per cache 32 bytes in
  // version 2 (slots, heads, dim, rows, window), 36 in version 3 (and copies).
  auto as_v3 = [&](uint32_t copies) {
    std::string v3 = v2.substr(0, 36);
    const uint32_t three = 3;
    std::memcpy(v3.data() + 8, &three, 4);
    for (uint32_t c = 0; c < n; ++c) {
      v3 += v2.substr(36 + 32 * c, 32);
      v3.append(reinterpret_cast<const char*>(&copies), 4);
    }
    v3 += v2.substr(36 + 32 * n, v2.size() - 8 - (36 + 32 * n));
    const uint64_t sum = XXH3_64bits(v3.data(), v3.size());
    v3.append(reinterpret_cast<const char*>(&sum), 8);
    return v3;
  };
  write_file(gen_->dir.file("v3.kv"), as_v3(2));
  auto restored = runtime::Session::create(model_);
  ASSERT_TRUE((*restored)->load(gen_->dir.file("v3.kv")).is_ok());
  const std::vector<int32_t> next(ids_.begin() + 17, ids_.begin() + 21);
  auto a = saved->append(next), b = (*restored)->append(next);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(std::vector<float>(a->begin(), a->end()), std::vector<float>(b->begin(), b->end()));
  write_file(gen_->dir.file("bad.kv"), as_v3(3));
  const Status s = (*restored)->load(gen_->dir.file("bad.kv"));
  EXPECT_NE(s.message().find("copies"), std::string::npos) << s.message();
}

TEST_F(CacheFileTest, MismatchedOrDamagedFilesAreRefusedAndChangeNothing) {
  auto saved = fed(10);
  const std::string path = gen_->dir.file("c.kv");
  ASSERT_TRUE(saved->save(path).is_ok());
  const std::string good = read_file(path);
  auto target = fed(5);
  auto expect_refused = [&](const std::string& bytes, const std::string& needle) {
    write_file(gen_->dir.file("bad.kv"), bytes);
    Status s = target->load(gen_->dir.file("bad.kv"));
    ASSERT_FALSE(s.is_ok()) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
    EXPECT_EQ(target->length(), 5);
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 1;
  expect_refused(flipped, "checksum mismatch");
  expect_refused(good.substr(0, good.size() - 9), "checksum mismatch");
  expect_refused("", "not an offgraph cache file");
  expect_refused(read_file(gen_->model_dir() + "/config.json"), "not an offgraph cache file");
  // Another program (different weights) and another kv dtype.
  auto other_gen = generate({.family = "gemma3_text", .seed = 42});
  auto other = runtime::Model::load(export_to(*other_gen, "q.ogp", "fp32", 4, 64));
  auto other_session = runtime::Session::create(*other);
  EXPECT_NE((*other_session)->load(path).message().find("different program"), std::string::npos);
  auto bf16 = runtime::Session::create(model_, {.kv_dtype = StorageType::kBF16});
  EXPECT_NE((*bf16)->load(path).message().find("kv-dtype"), std::string::npos);
  // The header alone refuses another kv dtype, before any cache bytes are read (a later
  // per-cache check would refuse too, but only after reading them).
  auto header = runtime::read_cache_header(path, model_->file().checksum(),
                                           StorageType::kBF16);
  ASSERT_FALSE(header.is_ok());
  EXPECT_NE(header.status().message().find("kv-dtype"), std::string::npos) << header.status().message();
  EXPECT_TRUE(runtime::read_cache_header(path, model_->file().checksum(),
                                         StorageType::kF32)
                  .is_ok());
  // The kv dtype's code in the file (after the 8-byte magic and the 4-byte version) is fixed
  // by the format, whatever the kernels' enum order: 0 f32, 1 f16, 2 bf16, 3 q8_0, 4 q4_0;
  // others refused.
  const std::pair<StorageType, uint8_t> codes[] = {{StorageType::kF32, 0},
                                                   {StorageType::kF16, 1},
                                                   {StorageType::kBF16, 2},
                                                   {StorageType::kQ8_0, 3},
                                                   {StorageType::kQ4_0, 4}};
  for (const auto& [kv, code] : codes) {
    auto s = runtime::Session::create(model_, {.kv_dtype = kv});
    ASSERT_TRUE((*s)->append(std::vector<int32_t>(ids_.begin(), ids_.begin() + 4)).is_ok());
    ASSERT_TRUE((*s)->save(gen_->dir.file("k.kv")).is_ok());
    const std::string b = read_file(gen_->dir.file("k.kv"));
    EXPECT_EQ(static_cast<uint8_t>(b[12]), code);
    EXPECT_EQ(b.substr(13, 3), std::string(3, '\0'));
  }
  {
    std::string unknown = good;
    unknown[12] = 7;
    write_file(gen_->dir.file("u.kv"), unknown);
    auto h = runtime::read_cache_header(gen_->dir.file("u.kv"), model_->file().checksum(),
                                        StorageType::kF32);
    ASSERT_FALSE(h.is_ok());
    EXPECT_NE(h.status().message().find("kv dtype code 7 is unknown"), std::string::npos) << h.status().message();
  }
  auto small = runtime::Session::create(model_, {.max_ctx_len = 32});
  EXPECT_NE((*small)->load(path).message().find("geometry"), std::string::npos);
  // The target still continues as a 5-token session.
  auto fresh = fed(5);
  const std::vector<int32_t> next(ids_.begin() + 5, ids_.begin() + 8);
  auto a = target->append(next), b = fresh->append(next);
  EXPECT_EQ(std::vector<float>(a->begin(), a->end()), std::vector<float>(b->begin(), b->end()));
}

}  // namespace
}  // namespace og
