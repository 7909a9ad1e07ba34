// Sessions give bit-identical logits with one thread, two, the default and a shared pool
// (the kernels split work by output, never by the reduction, so the thread count cannot
// change a sum's order).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "e2e_support.h"

namespace og {
namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(SessionThreads, LogitsAreIdenticalWithOneTwoOrSharedPoolThreads) {
  for (const char* family : {"llama", "gemma3_text"}) {
    auto g = testing::generate({.family = family, .seed = 17});
    auto model = runtime::Model::load(testing::export_to(*g, "p.ogp", "bf16", 5));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const auto ids = testing::test_tokens(23, (*model)->vocab_size(), 3);
    auto run = [&](runtime::SessionOptions o, int64_t chunk) {
      auto s = runtime::Session::create(*model, o);
      EXPECT_TRUE(s.is_ok());
      std::vector<float> out;
      for (size_t t = 0; t < ids.size(); t += static_cast<size_t>(chunk)) {
        const size_t n = std::min<size_t>(static_cast<size_t>(chunk), ids.size() - t);
        auto l = (*s)->append(std::span<const int32_t>(ids.data() + t, n));
        EXPECT_TRUE(l.is_ok());
        if (l.is_ok()) out.insert(out.end(), l->begin(), l->end());
      }
      return out;
    };
    for (int64_t chunk : {int64_t{1}, int64_t{5}}) {
      const std::vector<float> one = run({.threads = 1}, chunk);
      EXPECT_TRUE(same_bits(one, run({.threads = 2}, chunk))) << family << " chunk " << chunk;
      EXPECT_TRUE(same_bits(one, run({}, chunk))) << family << " chunk " << chunk;
      EXPECT_TRUE(same_bits(one, run({.pool = std::make_shared<ThreadPool>(3)}, chunk))) << family << " chunk " << chunk;
    }
  }
}

}  // namespace
}  // namespace og
