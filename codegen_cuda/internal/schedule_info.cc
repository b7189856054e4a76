// ScheduleInfo (schedule_info.h): the schedule-wide facts, and the literal values of its
// one-element constants.
#include "codegen_cuda/internal/schedule_info.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/index_source.h"
#include "ir/dtype.h"
#include "ir/proto/graph.pb.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/half.h"

namespace coil::codegen_cuda_internal {
namespace {

// The one element of `raw` (little-endian) as a literal's value; nullopt when the size is not
// one element of `t`.
std::optional<ScheduleInfo::Scalar> DecodeScalar(const std::string& raw, DType t) {
  ScheduleInfo::Scalar v;
  auto bits = [&](size_t n) -> std::optional<uint64_t> {
    if (raw.size() != n) return std::nullopt;
    uint64_t u = 0;
    for (size_t i = 0; i < n; ++i) u |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
    return u;
  };
  switch (t) {
    case proto::FLOAT32: {
      std::optional<uint64_t> u = bits(4);
      if (!u) return std::nullopt;
      v.d = BitsFloat(static_cast<uint32_t>(*u));
      return v;
    }
    case proto::FLOAT16:
    case proto::BFLOAT16: {
      std::optional<uint64_t> u = bits(2);
      if (!u) return std::nullopt;
      const uint16_t h = static_cast<uint16_t>(*u);
      v.d = t == proto::FLOAT16 ? HalfToFloat(h) : BFloat16ToFloat(h);
      return v;
    }
    case proto::FLOAT64: {
      std::optional<uint64_t> u = bits(8);
      if (!u) return std::nullopt;
      std::memcpy(&v.d, &*u, 8);
      return v;
    }
    case proto::INT64: case proto::INT32: case proto::INT8: case proto::UINT8: case proto::BOOL: {
      const size_t n = t == proto::INT64 ? 8 : t == proto::INT32 ? 4 : 1;
      std::optional<uint64_t> u = bits(n);
      if (!u) return std::nullopt;
      switch (t) {
        case proto::INT64: v.i = static_cast<int64_t>(*u); break;
        case proto::INT32: v.i = static_cast<int32_t>(static_cast<uint32_t>(*u)); break;
        case proto::INT8: v.i = static_cast<int8_t>(static_cast<uint8_t>(*u)); break;
        case proto::UINT8: v.i = static_cast<uint8_t>(*u); break;
        default: v.i = *u != 0; break;
      }
      return v;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

ScheduleInfo MakeScheduleInfo(const proto::Schedule& schedule, int64_t warp_row_max, int row_unroll,
                              bool vectorize, bool persistent_rows, int vector_groups,
                              bool row_values, int row_min_blocks) {
  ScheduleInfo info;
  info.row_min_blocks = std::max(-1, row_min_blocks);
  info.row_values = row_values;
  info.vector_groups = std::max(1, vector_groups);
  info.persistent_rows = persistent_rows;
  info.vectorize = vectorize;
  info.warp_row_max = warp_row_max;
  info.row_unroll = row_unroll;
  for (int i = 0; i < schedule.graph().symbols_size(); ++i) {
    info.symbol_index[schedule.graph().symbols(i).name()] = i;
  }
  for (const proto::Buffer& b : schedule.buffers()) info.buffers[b.id()] = &b;
  absl::flat_hash_map<int64_t, const proto::Constant*> constants;
  for (const proto::Constant& c : schedule.graph().constants()) constants[c.value().id()] = &c;
  for (const proto::Buffer& b : schedule.buffers()) {
    if (b.kind() != proto::Buffer::CONSTANT) continue;
    bool one = true;
    for (const proto::SymExpr& d : b.shape()) {
      std::optional<int64_t> v = ConstantValue(d);
      one = one && v.has_value() && *v == 1;
    }
    auto c = constants.find(b.graph_value());
    if (!one || c == constants.end() || !c->second->has_raw() ||
        c->second->value().type().dtype() != b.dtype()) {
      continue;
    }
    const std::string& raw = c->second->raw();
    if (std::optional<ScheduleInfo::Scalar> v = DecodeScalar(raw, b.dtype()); v.has_value()) {
      info.scalar_constants[b.id()] = *v;
    }
  }
  return info;
}

bool IsFlatAccess(const proto::Expr& e, const proto::Kernel& k, const ScheduleInfo& info) {
  if (e.mask() != 0) return false;
  const proto::Buffer& b = *info.buffers.at(e.buffer());
  if (b.shape_size() != k.ranges_size() || e.index_size() != k.ranges_size()) return false;
  for (int d = 0; d < e.index_size(); ++d) {
    const proto::SymExpr& ix = e.index(d);
    if (ix.kind() != proto::SymExpr::SYMBOL || ix.name() != absl::StrCat("_i", d)) return false;
    if (b.shape(d).SerializeAsString() != k.ranges(d).SerializeAsString()) return false;
  }
  return true;
}

bool WarpRows(const proto::Kernel& k, const ScheduleInfo& info) {
  if (info.warp_row_max <= 0) return false;
  for (const proto::Loop& l : k.loops()) {
    int64_t positions = 1;
    for (const proto::SymExpr& r : l.ranges()) {
      std::optional<int64_t> v = ConstantValue(r);
      if (!v.has_value() || *v < 0 || *v > info.warp_row_max) return false;
      positions *= *v;
      if (positions > info.warp_row_max) return false;
    }
  }
  return true;
}

absl::flat_hash_set<int> PointwiseVectorAccesses(const proto::Kernel& k, const ScheduleInfo& info) {
  if (k.ranges_size() == 0) return {};
  std::optional<int64_t> last = ConstantValue(k.ranges(k.ranges_size() - 1));
  if (!last.has_value() || *last <= 0 || *last % cuda::kCudaVectorItems != 0) return {};
  absl::flat_hash_set<int> flat;
  for (const proto::Loop& l : k.loops()) {
    if (l.ranges_size() > 0) return {};
    for (const proto::Expr& e : l.body()) {
      if ((e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) &&
          IsFlatAccess(e, k, info)) {
        flat.insert(e.id());
      }
    }
  }
  return flat;
}

bool ScalarConstantLoad(const proto::Expr& e, const ScheduleInfo& info) {
  if (e.kind() != proto::Expr::LOAD || e.mask() != 0 ||
      !info.scalar_constants.contains(e.buffer())) {
    return false;
  }
  for (const proto::SymExpr& ix : e.index()) {
    if (MentionsDataValue(ix)) return false;
  }
  return true;
}

}  // namespace coil::codegen_cuda_internal
