// safetensors header + sharded index parsing. Byte 0 picks the mode: even, the input is a
// model.safetensors; odd, it is a model.safetensors.index.json next to a valid shard.
#include <filesystem>

#include "fuzz_util.h"
#include "hf/safetensors.h"
#include "hf/safetensors_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  if (size == 0) return 0;
  const std::string dir = og::fuzz::scratch_dir() + "/ckpt";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  if (data[0] % 2 == 0) {
    std::FILE* f = std::fopen((dir + "/model.safetensors").c_str(), "wb");
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else {
    og::hf::OwnedTensor t{"a", og::DType::kF32, {2}, std::vector<uint8_t>(8, 0)};
    (void)og::hf::write_safetensors(dir + "/model-00001-of-00001.safetensors", {&t});
    std::FILE* f = std::fopen((dir + "/model.safetensors.index.json").c_str(), "wb");
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  }
  auto ck = og::hf::Checkpoint::open(dir);
  if (ck.is_ok()) {
    double sink = 0;
    for (const std::string& name : ck->names()) {
      const og::hf::TensorView* t = ck->find(name);
      if (t->numel() > 0 && og::dtype_size(t->dtype) > 0) sink += t->get(0) + t->get(t->numel() - 1);
    }
    (void)sink;
  }
  return 0;
}
