#include "runtime/step_buffers.h"

namespace og::runtime {

StepBuffers::StepBuffers(const Model& model, int64_t cap) : capacity(cap) {
  const auto rows = static_cast<size_t>(cap);
  for (int32_t w : model.slot_widths()) slots.emplace_back(rows * static_cast<size_t>(w));
  ids.resize(rows);
  positions.resize(rows);
  remapped.resize(rows);
  kept.reserve(rows);
}

}  // namespace og::runtime
