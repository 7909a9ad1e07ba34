// config.json -> model config -> cache layout.
#include <string>

#include "export/family.h"
#include "export/layout_resolver.h"
#include "hf/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = og::exporter::parse_model_config(text, "config.json");
  if (c.is_ok()) (void)og::exporter::resolve_layout(*c);
  return 0;
}
