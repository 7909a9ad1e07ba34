// The last N rows of llama.cpp's logits for a token sequence, with a chosen KV cache type, as
// a .npy [N, vocab] float32: the side of the KV-quantization error comparison that
// scripts/kv_error.sh builds against libllama (../shared/anchors' llama.cpp). Not part of the
// project's build: llama.cpp is an anchor to measure against, never a dependency.
//
//   llamacpp_logits GGUF TOKENS_FILE CTK CTV LAST OUT.npy [THREADS]
//   CTK/CTV: f32, f16, q8_0 or q4_0; flash attention on (llama.cpp needs it for a quantized V).
#include <llama.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

ggml_type cache_type(const std::string& s) {
  if (s == "f32") return GGML_TYPE_F32;
  if (s == "f16") return GGML_TYPE_F16;
  if (s == "q8_0") return GGML_TYPE_Q8_0;
  if (s == "q4_0") return GGML_TYPE_Q4_0;
  std::cerr << "unknown cache type " << s << "\n";
  std::exit(2);
}

void write_npy(const std::string& path, const std::vector<float>& data, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: llamacpp_logits GGUF TOKENS_FILE CTK CTV LAST OUT.npy [THREADS]\n";
    return 2;
  }
  std::vector<llama_token> tokens;
  {
    std::ifstream in(argv[2]);
    std::string tok;
    while (std::getline(in, tok, ',')) tokens.push_back(std::stoi(tok));
  }
  const int64_t T = static_cast<int64_t>(tokens.size()), last = std::atoll(argv[5]);
  if (last <= 0 || last > T) {
    std::cerr << "LAST must be in [1, " << T << "]\n";
    return 2;
  }
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(T + 16);
  cp.n_batch = cp.n_ubatch = 512;
  cp.n_threads = cp.n_threads_batch = argc > 7 ? std::atoi(argv[7]) : 2;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
  cp.type_k = cache_type(argv[3]);
  cp.type_v = cache_type(argv[4]);
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  std::vector<float> out;
  llama_batch batch = llama_batch_init(512, 0, 1);
  for (int64_t t0 = 0; t0 < T; t0 += 512) {
    const int64_t n = std::min<int64_t>(512, T - t0);
    batch.n_tokens = static_cast<int32_t>(n);
    for (int64_t i = 0; i < n; ++i) {
      batch.token[i] = tokens[static_cast<size_t>(t0 + i)];
      batch.pos[i] = static_cast<llama_pos>(t0 + i);
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = t0 + i >= T - last;
    }
    if (llama_decode(ctx, batch) != 0) return 1;
    for (int64_t i = 0; i < n; ++i)
      if (batch.logits[i]) {
        const float* row = llama_get_logits_ith(ctx, static_cast<int32_t>(i));
        out.insert(out.end(), row, row + vocab);
      }
  }
  write_npy(argv[6], out, last, vocab);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
