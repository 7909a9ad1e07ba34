#include "runtime/step_buffers.h"

namespace og::runtime {

StepBuffers::StepBuffers(const Model& model, int64_t cap) : capacity(cap) {
  const auto rows = static_cast<size_t>(cap);
  for (int32_t w : model.slot_widths()) slots.emplace_back(rows * static_cast<size_t>(w));
  ids.resize(rows);
  positions.resize(rows);
  remapped.resize(rows);
  kept.reserve(rows);
  for (int64_t bytes : model.int8_buffer_row_bytes()) {
    int8_memory.emplace_back(rows * static_cast<size_t>(bytes));
    int8.push_back({.data = int8_memory.back().data(), .row_bytes = bytes});
  }
}

}  // namespace og::runtime
