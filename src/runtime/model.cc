#include "runtime/model.h"

#include <algorithm>

#include "program/ops.h"
#include "program/validator.h"
#include "runtime/op_binders.h"

namespace og::runtime {

Result<std::shared_ptr<const Model>> Model::load(const std::string& path, Residency residency, MathMode math) {
  auto m = std::shared_ptr<Model>(new Model());
  OG_ASSIGN_OR_RETURN(m->file_, program::ProgramFile::open(path, program::ProgramFile::Verify::kHeader, residency));
  m->layout_ = program::layout_from_fb(*m->program().layout());
  OG_TRY(m->bind(math).with_context(path));
  m->plan_memory();
  m->plan_int8_inputs();
  m->plan_linear_groups();
  return std::shared_ptr<const Model>(std::move(m));
}

Status Model::bind(MathMode math) {
  const fb::Program& p = program();
  for (const fb::Value* v : *p.values()) widths_.push_back(v->width());
  const BindContext ctx{.file = *file_, .layout = layout_, .widths = widths_, .moe = moe_, .math = math};
  size_t last_attend = 0;
  for (const fb::Op* op : *p.ops()) {
    BoundOp b;
    for (uint32_t i = 0; i < op->inputs()->size() && i < 4; ++i) b.in[i] = op->inputs()->Get(i);
    b.out = op->output();
    b.width = widths_[b.out];
    const OpBinder bind = op_binder(op->attrs_type());
    if (bind == nullptr) return bad_input("op kind {} has no binder", program::op_name(op->attrs_type()));
    OG_TRY(bind(*op, ctx, b));
    if (b.kind == OpKind::kAttend) last_attend = ops_.size();
    if (b.kind == OpKind::kEmbedding && b.in[0] == p.positions())  // a learned position table: its rows bound the context
      position_rows_ = position_rows_ > 0 ? std::min(position_rows_, b.matrix.rows) : b.matrix.rows;
    if (b.kind == OpKind::kLinear && b.xquant == kernels::XQuant::kBF16) fast_math_ = true;
    ops_.push_back(std::move(b));
  }
  row_suffix_begin_ = last_attend + 1;
  std::vector<bool> in_suffix(widths_.size(), false);  // [n_values] made by an op of the suffix
  for (size_t i = row_suffix_begin_; i < ops_.size(); ++i) {
    for (int k = 0; k < 4; ++k)
      if (ops_[i].in[k] >= 0) ops_[i].in_from_suffix[k] = in_suffix[ops_[i].in[k]];
    in_suffix[ops_[i].out] = true;
  }
  return Status::ok();
}

void Model::plan_memory() {
  // Greedy slot reuse by liveness: a value's slot is free after its last reader.
  const int32_t nv = static_cast<int32_t>(widths_.size());
  std::vector<int32_t> last_use(static_cast<size_t>(nv), -1);  // [n_values] index of the last op reading it
  for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i)
    for (int32_t v : ops_[i].in)
      if (v >= 0) last_use[v] = i;
  slot_of_.assign(static_cast<size_t>(nv), -1);
  std::vector<int32_t> free_slots;  // slots whose value is dead
  for (int32_t i = 0; i < static_cast<int32_t>(ops_.size()); ++i) {
    const BoundOp& op = ops_[i];
    if (op.out != logits()) {  // logits get a buffer of their own, sized by the rows asked for
      auto best = free_slots.end();
      for (auto it = free_slots.begin(); it != free_slots.end(); ++it)
        if (slot_widths_[*it] >= op.width && (best == free_slots.end() || slot_widths_[*it] < slot_widths_[*best])) best = it;
      if (best != free_slots.end()) {
        slot_of_[op.out] = *best;
        free_slots.erase(best);
      } else {
        slot_of_[op.out] = static_cast<int32_t>(slot_widths_.size());
        slot_widths_.push_back(op.width);
      }
    }
    // Free inputs whose last reader is this op (after the output is placed: no aliasing).
    for (int32_t v : op.in)
      if (v >= 0 && last_use[v] == i && slot_of_[v] >= 0 &&
          std::find(free_slots.begin(), free_slots.end(), slot_of_[v]) == free_slots.end())
        free_slots.push_back(slot_of_[v]);
  }
}

void Model::plan_int8_inputs() {
  // Linears reading one value with one weight layout (type, cols, group size, row block)
  // share its quantization: q, k and v read one normed value, gate and up another. Values are
  // written once (the validator's rule), so the rows stay valid from the first reader to
  // the last. The first reader quantizes the rows it reads; under LogitsRows::kLast the
  // readers in the row-wise suffix read only the last row, and every earlier reader of the
  // same value reads all T rows, so the first reader's rows always hold the later ones'.
  // Buffers are reused once a key's last reader has run (greedy, like plan_memory).
  struct Key {
    int32_t value;
    StorageType type;
    int64_t cols;
    int32_t group;
    int32_t row_block;  // an interleaved weight's rows are quantized in another layout
    bool operator==(const Key&) const = default;
  };
  std::vector<Key> keys;            // distinct (value, layout)
  std::vector<int32_t> key_of(ops_.size(), -1);  // [n_ops] key read by each int8 linear
  std::vector<size_t> last_reader;  // [keys]
  for (size_t i = 0; i < ops_.size(); ++i) {
    const BoundOp& op = ops_[i];
    const bool quantized = op.matrix.type == StorageType::kQ8 || op.matrix.type == StorageType::kQ4;
    if (op.kind != OpKind::kLinear || !quantized || op.xquant != kernels::XQuant::kInt8) continue;
    const Key k{op.in[0], op.matrix.type, op.matrix.cols, op.matrix.group_size, op.matrix.row_block};
    auto it = std::find(keys.begin(), keys.end(), k);
    if (it == keys.end()) {
      keys.push_back(k);
      last_reader.push_back(i);
      it = keys.end() - 1;
    }
    key_of[i] = static_cast<int32_t>(it - keys.begin());
    last_reader[key_of[i]] = i;
  }
  std::vector<int32_t> buffer_of(keys.size(), -1), free_buffers;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const int32_t k = key_of[i];
    if (k < 0) continue;
    BoundOp& op = ops_[i];
    op.int8_fill = buffer_of[k] < 0;
    if (op.int8_fill) {
      if (free_buffers.empty()) {
        buffer_of[k] = static_cast<int32_t>(int8_row_bytes_.size());
        int8_row_bytes_.push_back(0);
      } else {
        buffer_of[k] = free_buffers.back();
        free_buffers.pop_back();
      }
      int64_t& bytes = int8_row_bytes_[buffer_of[k]];
      bytes = std::max(bytes, kernels::int8_row_bytes(op.matrix));
    }
    op.int8_buffer = buffer_of[k];
    if (last_reader[k] == i) free_buffers.push_back(buffer_of[k]);
  }
}

void Model::plan_linear_groups() {
  // Consecutive linears reading one value with one weight layout and one treatment of x (q,
  // k and v; gate and up) run as one kernels::linear_group: x packed or quantized once, and
  // the rows of all of them in one run over the pool. A group stays on one side of
  // row_suffix_begin (the rows a value holds change there). Each output is placed by
  // plan_memory at its own op, where the only value freed is the shared input after its
  // last reader, so the outputs never share a slot with each other or with the input;
  // checked here all the same, since the group writes them all before the later ops run.
  auto joins = [&](const BoundOp& first, size_t i, size_t j) {
    const BoundOp& op = ops_[j];
    if (op.kind != OpKind::kLinear || op.in[0] != first.in[0] || op.in_from_suffix[0] != first.in_from_suffix[0] ||
        op.xquant != first.xquant || op.int8_buffer != first.int8_buffer || op.matrix.type != first.matrix.type ||
        op.matrix.cols != first.matrix.cols || op.matrix.group_size != first.matrix.group_size ||
        op.matrix.row_block != first.matrix.row_block || (i < row_suffix_begin_) != (j < row_suffix_begin_))
      return false;
    for (size_t k = i; k < j; ++k)
      if (slot_of_[ops_[k].out] == slot_of_[op.out]) return false;
    return slot_of_[op.out] != slot_of_[first.in[0]] && slot_of_[op.out] >= 0;
  };
  for (size_t i = 0; i < ops_.size();) {
    BoundOp& first = ops_[i];
    size_t j = i + 1;
    if (first.kind == OpKind::kLinear && slot_of_[first.out] >= 0 && first.in[0] >= 0 && slot_of_[first.in[0]] >= 0)
      while (j < ops_.size() && j - i < kernels::kMaxGroup && joins(first, i, j)) ops_[j++].group = 0;
    first.group = static_cast<int32_t>(j - i);
    i = j;
  }
}

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const fb::Tensor* t : *program().tensors()) n += t->nbytes();
  return n;
}

}  // namespace og::runtime
