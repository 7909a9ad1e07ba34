// Stop strings (OpenAI `stop`): matched across piece boundaries, never emitted, text after
// them dropped; text that could start a stop string is held back, and nothing else is.
#include <gtest/gtest.h>

#include "generate/stop_strings.h"

namespace og {
namespace {

using generate::StopStringMatcher;

TEST(StopStrings, StopSpanningPiecesIsNeverEmitted) {
  StopStringMatcher m({"lo W"});
  EXPECT_EQ(m.push("Hel"), "He");     // "l" may start "lo W"
  EXPECT_EQ(m.push("lo"), "l");       // "lo" may start it
  EXPECT_FALSE(m.stopped());
  EXPECT_EQ(m.push(" World"), "");    // "lo W" completes: nothing of it, nothing after it
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("more"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, FalseStartIsReleasedAndFlushReturnsTheRest) {
  StopStringMatcher m({"abc"});
  EXPECT_EQ(m.push("xab"), "x");
  EXPECT_EQ(m.push("d"), "abd");
  EXPECT_EQ(m.push("a"), "");
  EXPECT_EQ(m.flush(), "a");
  EXPECT_FALSE(m.stopped());
}

TEST(StopStrings, EarliestOfSeveralStopsWins) {
  StopStringMatcher m({"world", "o w", ""});
  EXPECT_EQ(m.push("hello world"), "hell");
  EXPECT_TRUE(m.stopped());
}

TEST(StopStrings, NoStopsPassesEverythingThrough) {
  StopStringMatcher m({});
  EXPECT_EQ(m.push("abc"), "abc");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, HeldBackTextNeverSplitsACharacter) {
  StopStringMatcher m({"\xC3\xA9!"});  // "é!"
  EXPECT_EQ(m.push("caf"), "caf");
  EXPECT_EQ(m.push("\xC3\xA9"), "");   // "é" may start "é!"
  EXPECT_EQ(m.push("?"), "\xC3\xA9?");
}

// Every way of cutting a text into three pieces gives the text before the first stop.
TEST(StopStrings, AnySplitGivesTheTextBeforeTheFirstStop) {
  const std::string text = "the cat sat on the mat, then the hat";
  const std::vector<std::vector<std::string>> cases = {{"the m"}, {"at,", "hat"}, {"zzz"}, {"t", "sat"}, {"mat, then the hat!"}};
  for (const auto& stops : cases) {
    size_t first = std::string::npos;
    for (const auto& s : stops) first = std::min(first, text.find(s));
    const std::string want = text.substr(0, first);
    for (size_t a = 0; a <= text.size(); ++a)
      for (size_t b = a; b <= text.size(); ++b) {
        StopStringMatcher m(stops);
        std::string got = m.push(text.substr(0, a));
        got += m.push(text.substr(a, b - a));
        got += m.push(text.substr(b));
        got += m.flush();
        ASSERT_EQ(got, want) << stops[0] << " split " << a << "," << b;
        ASSERT_EQ(m.stopped(), first != std::string::npos);
      }
  }
}

}  // namespace
}  // namespace og
