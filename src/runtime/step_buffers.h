// Activation memory of one step: every value slot of the model's memory plan for up to
// `capacity` token rows, with the step's ids and positions. A batched step's rows are the
// rows of all its entries, one after another, so one StepBuffers serves a whole batch: it is
// sized once per batch runner (or per session, for its own steps), never per entry.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/model.h"

namespace og::runtime {

// Wall time and calls of each op of the model (by op index), summed over the steps that
// ran while it was attached (`offgraph bench --profile`).
struct OpTimes {
  std::vector<double> seconds;  // [ops]
  std::vector<int64_t> calls;   // [ops]
  explicit OpTimes(size_t ops = 0) : seconds(ops, 0.0), calls(ops, 0) {}
};

struct StepBuffers {
  StepBuffers(const Model& model, int64_t capacity);

  int64_t capacity = 0;                    // rows
  std::vector<std::vector<float>> slots;   // [slot][capacity * slot_width]
  std::vector<float> logits;               // [rows kept, vocab], grown to the largest request
  std::vector<int32_t> ids;                // [capacity]
  std::vector<int32_t> positions;          // [capacity]
  std::vector<int32_t> remapped;           // [capacity] embedding ids after placeholder remapping
  std::vector<int64_t> kept;               // [rows kept] rows that run the ops after the last attention
  // Int8 activations (Model::int8_buffer_row_bytes): a value quantized once for all the
  // linears that read it with one weight layout; rows numbered as the value's rows.
  std::vector<std::vector<uint8_t>> int8_memory;  // [buffer][capacity * row_bytes]
  std::vector<kernels::Int8Input> int8;            // [buffer] views of int8_memory
  // Mixture-of-experts working memory, shared by the model's moe ops (they run one at a time);
  // after a step it describes the step's last moe op (kernels::MoeScratch's statistics).
  kernels::MoeScratch moe;
  OpTimes* op_times = nullptr;  // when set, every op's time is added to it (sized to the ops)
};

}  // namespace og::runtime
