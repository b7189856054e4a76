// Broadcasting, dim normalization, result-type, attribute-reading and shape-text helpers for
// meta functions.
#include "ir/ops/meta_util.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"

namespace coil::meta {

absl::StatusOr<std::vector<SymExpr>> BroadcastShapes(absl::Span<const SymExpr> a,
                                                     absl::Span<const SymExpr> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<SymExpr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const SymExpr* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const SymExpr* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (da == nullptr) { out[i] = *db; continue; }
    if (db == nullptr) { out[i] = *da; continue; }
    if (*da == *db) { out[i] = *da; continue; }
    if (da->is_constant() && da->constant() == 1) { out[i] = *db; continue; }
    if (db->is_constant() && db->constant() == 1) { out[i] = *da; continue; }
    return Error("shapes cannot broadcast: dimension ", i, " is ", da->ToString(), " vs ",
                 db->ToString());
  }
  return out;
}

absl::StatusOr<std::vector<SymExpr>> BroadcastAll(absl::Span<const TensorType> inputs) {
  std::vector<SymExpr> shape;
  for (const TensorType& t : inputs) {
    absl::StatusOr<std::vector<SymExpr>> s = BroadcastShapes(shape, t.shape);
    if (!s.ok()) return s.status();
    shape = *std::move(s);
  }
  return shape;
}

absl::StatusOr<int64_t> NormalizeDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) {
    return Error("dim ", dim, " is out of range for a tensor of rank ", rank);
  }
  return dim < 0 ? dim + r : dim;
}

absl::StatusOr<std::vector<int64_t>> NormalizeDims(absl::Span<const int64_t> dims, int64_t rank,
                                                   bool empty_means_all) {
  std::vector<int64_t> out;
  if (dims.empty() && empty_means_all) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  absl::flat_hash_set<int64_t> seen;
  for (int64_t d : dims) {
    absl::StatusOr<int64_t> n = NormalizeDim(d, rank);
    if (!n.ok()) return n.status();
    if (!seen.insert(*n).second) return Error("dim ", d, " appears more than once");
    out.push_back(*n);
  }
  return out;
}

absl::StatusOr<DType> ResultType(absl::Span<const TensorType> inputs) {
  ResultTypeBuilder b;
  for (const TensorType& t : inputs) {
    b.Add(t.dtype, t.rank() == 0 ? OperandKind::kZeroDim : OperandKind::kDimensioned);
  }
  DType r = b.Result();
  if (r == proto::DTYPE_UNSPECIFIED) {
    std::string names;
    for (const TensorType& t : inputs) absl::StrAppend(&names, names.empty() ? "" : ", ", DTypeName(t.dtype));
    return Error("no common dtype for (", names, "): PyTorch would use int16, which coil lacks");
  }
  return r;
}

absl::StatusOr<Device> CommonDevice(absl::Span<const TensorType> inputs) {
  if (inputs.empty()) return Device{};
  for (const TensorType& t : inputs) {
    if (t.device != inputs[0].device) {
      return Error("inputs are on different devices: ", inputs[0].device.ToString(), " and ",
                   t.device.ToString());
    }
  }
  return inputs[0].device;
}

namespace {

// The value of a StatusOr that must be OK (see the attribute readers in the header).
template <typename T>
T Required(absl::StatusOr<T> v) {
  COIL_CHECK(v.ok()) << v.status().message();
  return *std::move(v);
}

}  // namespace

OpSchema MakeSchema(std::string name, std::vector<OpInput> inputs, std::vector<AttrSpec> attrs,
                    OpClass op_class, MetaFn meta, std::string doc) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  s.op_class = op_class;
  s.meta = std::move(meta);
  s.doc = std::move(doc);
  return s;
}

int64_t IntAttr(const AttrMap& attrs, absl::string_view name) {
  return Required(GetInt(attrs, name));
}
IntList IntsAttr(const AttrMap& attrs, absl::string_view name) {
  return Required(GetInts(attrs, name));
}
SymExpr SymAttr(const AttrMap& attrs, absl::string_view name) {
  return Required(GetSym(attrs, name));
}
SymList SymsAttr(const AttrMap& attrs, absl::string_view name) {
  return Required(GetSyms(attrs, name));
}
std::string StringAttr(const AttrMap& attrs, absl::string_view name) {
  return Required(GetString(attrs, name));
}

std::string ShapeText(absl::Span<const SymExpr> shape) {
  return absl::StrCat(
      "[",
      absl::StrJoin(shape, ", ", [](std::string* o, const SymExpr& e) { o->append(e.ToString()); }),
      "]");
}

}  // namespace coil::meta
