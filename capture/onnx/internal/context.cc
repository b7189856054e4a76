// ImportContext and OnnxNode (see context.h).
#include "capture/onnx/internal/context.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/onnx/internal/tensor_data.h"

namespace coil::onnx_internal {

using ::onnx::AttributeProto;

// Integer attributes and shape values beyond this are rejected (sizes, axes, pads, ...), so
// that symbolic arithmetic on them cannot overflow.
constexpr int64_t kMaxAttrValue = int64_t{1} << 40;

// ---------------------------------------------------------------- ImportContext

const OnnxTensor* ImportContext::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void ImportContext::Define(const std::string& name, OnnxTensor t) {
  tensors_[name] = std::move(t);
}

absl::StatusOr<TensorType> ImportContext::TypeOf(const std::string& name) const {
  const OnnxTensor* t = Find(name);
  if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not defined"));
  if (t->value != nullptr) return t->value->type();
  std::vector<SymExpr> shape(t->known->shape.begin(), t->known->shape.end());
  return TensorType(t->known->dtype, std::move(shape));
}

absl::StatusOr<Value*> ImportContext::Materialize(const std::string& name,
                                                  const std::string& node_name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not defined"));
  }
  if (it->second.value != nullptr) return it->second.value;
  absl::StatusOr<Value*> v = MaterializeKnown(*it->second.known, node_name);
  if (!v.ok()) return v.status();
  if ((*v)->name().empty()) (*v)->set_name(name);
  it->second.value = *v;
  return *v;
}

absl::StatusOr<Value*> ImportContext::MaterializeKnown(const KnownValue& k,
                                                       const std::string& node_name) {
  if (k.IsConstant()) {
    std::vector<SymExpr> shape(k.shape.begin(), k.shape.end());
    return builder_.Constant(TensorType(k.dtype, std::move(shape)), k.Bytes());
  }
  std::vector<Value*> elements;
  for (const SymExpr& e : k.ints) {
    absl::StatusOr<Value*> v = ExprValue(e.ToProto(), node_name);
    if (!v.ok()) return v.status();
    elements.push_back(*v);
  }
  Value* out = elements[0];
  if (k.rank() != 0) {
    absl::StatusOr<Value*> stacked = builder_.Op("aten.stack", elements, {{"dim", int64_t{0}}});
    if (!stacked.ok()) return stacked.status();
    SymList shape(k.shape.begin(), k.shape.end());
    absl::StatusOr<Value*> reshaped = builder_.Op("aten.reshape", {*stacked}, {{"shape", shape}});
    if (!reshaped.ok()) return reshaped.status();
    out = *reshaped;
  }
  if (k.dtype != proto::INT64) {
    absl::StatusOr<Value*> cast = builder_.Op("aten.to_dtype", {out}, {{"dtype", k.dtype}});
    if (!cast.ok()) return cast.status();
    out = *cast;
  }
  if (k.den != 1) {  // a symbolic floating-point value: numerators / den
    absl::StatusOr<Value*> div =
        builder_.Op("aten.div_scalar", {out}, {{"other", static_cast<double>(k.den)}});
    if (!div.ok()) return div.status();
    out = *div;
  }
  return out;
}

absl::StatusOr<Value*> ImportContext::SymbolValue(const std::string& symbol,
                                                  const std::string& node_name) {
  auto it = symbol_values_.find(symbol);
  if (it != symbol_values_.end()) return it->second;
  // sum(ones(s)) is the size s as a 0-D int64 tensor.
  absl::StatusOr<Value*> ones = builder_.Op(
      "aten.ones", {}, {{"size", SymList{SymExpr::Symbol(symbol)}}, {"dtype", proto::INT64}});
  if (!ones.ok()) return ones.status();
  absl::StatusOr<Value*> sum = builder_.Op("aten.sum", {*ones});
  if (!sum.ok()) return sum.status();
  (*ones)->producer()->set_name(node_name);
  (*sum)->producer()->set_name(node_name);
  symbol_values_[symbol] = *sum;
  return *sum;
}

absl::StatusOr<Value*> ImportContext::ExprValue(const proto::SymExpr& e,
                                                const std::string& node_name) {
  switch (e.kind()) {
    case proto::SymExpr::CONST: {
      int64_t v = e.value();
      return builder_.Constant(TensorType(proto::INT64, {}),
                               std::string(reinterpret_cast<const char*>(&v), sizeof(v)));
    }
    case proto::SymExpr::SYMBOL:
      return SymbolValue(e.name(), node_name);
    default: break;
  }
  const char* op = nullptr;
  switch (e.kind()) {
    case proto::SymExpr::ADD: op = "aten.add"; break;
    case proto::SymExpr::MUL: op = "aten.mul"; break;
    case proto::SymExpr::FLOORDIV: op = "aten.floor_divide"; break;
    case proto::SymExpr::MOD: op = "aten.remainder"; break;
    case proto::SymExpr::MIN: op = "aten.minimum"; break;
    case proto::SymExpr::MAX: op = "aten.maximum"; break;
    default: return absl::InternalError("malformed symbolic expression");
  }
  if (e.args_size() == 0) return absl::InternalError("symbolic expression without operands");
  absl::StatusOr<Value*> acc = ExprValue(e.args(0), node_name);
  for (int i = 1; i < e.args_size() && acc.ok(); ++i) {
    absl::StatusOr<Value*> next = ExprValue(e.args(i), node_name);
    if (!next.ok()) return next.status();
    acc = builder_.Op(op, {*acc, *next});
    if (acc.ok()) (*acc)->producer()->set_name(node_name);
  }
  return acc;
}

SymExpr ImportContext::DeclareSymbol(std::string base) {
  std::string name = base;
  for (int i = 2;; ++i) {
    bool taken = false;
    for (const SymbolInfo& s : graph_.symbols()) taken = taken || s.name == name;
    if (!taken) break;
    name = absl::StrCat(base, "_", i);
  }
  SymbolInfo info;
  info.name = name;
  // ONNX dynamic axes must accept size 1 (batch 1 is the common deployment case). Meta
  // functions that simplify under "symbolic sizes are >= 2" (slice clamps, squeeze of all
  // size-1 dims) stay safe: the kernels re-check concrete sizes and report a clear error.
  info.min = 1;
  graph_.symbols().push_back(info);
  return SymExpr::Symbol(name);
}

SymExpr ImportContext::SymbolForParam(const std::string& dim_param) {
  auto it = params_.find(dim_param);
  if (it != params_.end()) return it->second;
  std::string base;
  for (char c : dim_param) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    base.push_back(ok ? c : '_');
  }
  if (base.empty() || (base[0] >= '0' && base[0] <= '9')) base = "s_" + base;
  if (base.size() > 64) base.resize(64);
  SymExpr s = DeclareSymbol(base);
  params_[dim_param] = s;
  return s;
}

SymExpr ImportContext::FreshSymbol() { return DeclareSymbol(absl::StrCat("unk", next_fresh_++)); }

SymRanges ImportContext::Ranges() const {
  SymRanges ranges;
  for (const SymbolInfo& s : graph_.symbols()) {
    ranges[s.name] = SymRange{s.min, s.max > 0 ? s.max : INT64_MAX};
  }
  return ranges;
}

// ---------------------------------------------------------------- OnnxNode: inputs

std::string OnnxNode::Name() const {
  if (!node_.name().empty()) return absl::StrCat("'", node_.name(), "'");
  return absl::StrCat("#", index_);
}

absl::StatusOr<Value*> OnnxNode::In(int i) {
  if (!has_input(i)) return Invalid(absl::StrCat("input ", i, " is required"));
  absl::StatusOr<Value*> v = ctx_.Materialize(node_.input(i), node_.name());
  if (!v.ok()) return Invalid(v.status().message());
  return v;
}

const KnownValue* OnnxNode::Known(int i) const {
  if (!has_input(i)) return nullptr;
  const OnnxTensor* t = ctx_.Find(node_.input(i));
  return t == nullptr || !t->known ? nullptr : &*t->known;
}

absl::StatusOr<TensorType> OnnxNode::InType(int i) const {
  if (!has_input(i)) return Invalid(absl::StrCat("input ", i, " is required"));
  absl::StatusOr<TensorType> t = ctx_.TypeOf(node_.input(i));
  if (!t.ok()) return Invalid(t.status().message());
  return t;
}

absl::StatusOr<std::vector<SymExpr>> OnnxNode::KnownSyms(int i, absl::string_view what) {
  if (!has_input(i)) return Invalid(absl::StrCat("input ", i, " (", what, ") is required"));
  const KnownValue* k = Known(i);
  if (k == nullptr) {
    const OnnxTensor* t = ctx_.Find(node_.input(i));
    if (t == nullptr) return Invalid(absl::StrCat("'", node_.input(i), "' is not defined"));
    if (!t->unknown_why.empty()) {
      return Unsupported(absl::StrCat(what, " ('", node_.input(i),
                                      "') are not known at import time: ", t->unknown_why));
    }
    return Unsupported(absl::StrCat(what, " computed at run time (data-dependent shapes are not "
                                          "supported)"));
  }
  if (k->rank() > 1) return Invalid(absl::StrCat(what, " must be a 1-D tensor"));
  if (k->is_float()) return Invalid(absl::StrCat(what, " must be integers"));
  if (k->den != 1) return Invalid(absl::StrCat(what, " must be integers (got a fraction)"));
  // Slice bounds may be huge (INT64_MAX means "to the end"); sizes may not.
  if (what != "starts" && what != "ends") {
    for (const SymExpr& e : k->ints) {
      if (std::optional<int64_t> c = e.AsConstant(); c && (*c > kMaxAttrValue || *c < -kMaxAttrValue)) {
        return Invalid(absl::StrCat(what, " value ", *c, " is out of range"));
      }
    }
  }
  return k->ints;
}

absl::StatusOr<std::vector<int64_t>> OnnxNode::KnownInts(int i, absl::string_view what) {
  COIL_ASSIGN_OR_RETURN(std::vector<SymExpr> syms, KnownSyms(i, what));
  std::vector<int64_t> out;
  for (const SymExpr& s : syms) {
    if (!s.is_constant()) {
      return Unsupported(absl::StrCat("symbolic ", what, " (", s.ToString(), ")"));
    }
    out.push_back(s.constant());
  }
  return out;
}

absl::StatusOr<double> OnnxNode::KnownScalar(int i, absl::string_view what) {
  const KnownValue* k = Known(i);
  if (k == nullptr) {
    if (!has_input(i)) return Invalid(absl::StrCat("input ", i, " (", what, ") is required"));
    const OnnxTensor* t = ctx_.Find(node_.input(i));
    if (t != nullptr && !t->unknown_why.empty()) {
      return Unsupported(absl::StrCat(what, " ('", node_.input(i),
                                      "') is not known at import time: ", t->unknown_why));
    }
    return Unsupported(absl::StrCat(what, " computed at run time"));
  }
  if (k->numel() != 1) return Invalid(absl::StrCat(what, " must have one element"));
  if (!k->IsConstant()) {
    return Unsupported(absl::StrCat("symbolic ", what, " (", k->ints[0].ToString(), ")"));
  }
  return k->AsDouble(0);
}

// ---------------------------------------------------------------- OnnxNode: attributes

const AttributeProto* OnnxNode::FindAttr(absl::string_view name) const {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool OnnxNode::CheckAttrType(const AttributeProto* a, int type) {
  if (a == nullptr) return false;
  if (a->type() == type || a->type() == AttributeProto::UNDEFINED) return true;
  if (attr_error_.ok()) {
    attr_error_ = Invalid(absl::StrCat(
        "attribute ", a->name(), " has type ",
        AttributeProto::AttributeType_IsValid(a->type())
            ? AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(a->type()))
            : absl::StrCat(a->type()),
        ", expected ", AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type))));
  }
  return false;
}

int64_t OnnxNode::Int(absl::string_view name, int64_t def) {
  const AttributeProto* a = FindAttr(name);
  if (!CheckAttrType(a, AttributeProto::INT)) return def;
  if ((a->i() > kMaxAttrValue || a->i() < -kMaxAttrValue) && name != "value_int" && attr_error_.ok()) {
    attr_error_ = Invalid(absl::StrCat("attribute ", name, " value ", a->i(), " is out of range"));
    return def;
  }
  return a->i();
}

double OnnxNode::Float(absl::string_view name, double def) {
  const AttributeProto* a = FindAttr(name);
  return CheckAttrType(a, AttributeProto::FLOAT) ? a->f() : def;
}

std::string OnnxNode::String(absl::string_view name, const std::string& def) {
  const AttributeProto* a = FindAttr(name);
  return CheckAttrType(a, AttributeProto::STRING) ? a->s() : def;
}

std::vector<int64_t> OnnxNode::Ints(absl::string_view name, std::vector<int64_t> def) {
  const AttributeProto* a = FindAttr(name);
  if (!CheckAttrType(a, AttributeProto::INTS)) return def;
  std::vector<int64_t> v(a->ints().begin(), a->ints().end());
  if (name != "starts" && name != "ends" && name != "value_ints") {
    for (int64_t x : v) {
      if ((x > kMaxAttrValue || x < -kMaxAttrValue) && attr_error_.ok()) {
        attr_error_ = Invalid(absl::StrCat("attribute ", name, " value ", x, " is out of range"));
        return def;
      }
    }
  }
  return v;
}

std::vector<double> OnnxNode::Floats(absl::string_view name) {
  const AttributeProto* a = FindAttr(name);
  if (!CheckAttrType(a, AttributeProto::FLOATS)) return {};
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

const ::onnx::TensorProto* OnnxNode::Tensor(absl::string_view name) {
  const AttributeProto* a = FindAttr(name);
  return CheckAttrType(a, AttributeProto::TENSOR) ? &a->t() : nullptr;
}

// ---------------------------------------------------------------- OnnxNode: outputs

absl::Status OnnxNode::SetOutput(int i, Value* v) {
  if (!wants_output(i)) return absl::OkStatus();
  if (v->name().empty()) v->set_name(node_.output(i));
  OnnxTensor t;
  t.value = v;
  ctx_.Define(node_.output(i), std::move(t));
  return absl::OkStatus();
}

absl::Status OnnxNode::SetKnownOutput(int i, KnownValue k) {
  if (!wants_output(i)) return absl::OkStatus();
  OnnxTensor t;
  t.known = std::move(k);
  ctx_.Define(node_.output(i), std::move(t));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- OnnxNode: errors

absl::Status OnnxNode::Invalid(absl::string_view msg) const {
  return absl::InvalidArgumentError(absl::StrCat("node ", Name(), " (", op_type(), "): ", msg));
}

absl::Status OnnxNode::Unsupported(absl::string_view what) const {
  return absl::UnimplementedError(absl::StrCat("op ", op_type(), ": ", what, " (node ", Name(), ")"));
}

absl::Status OnnxNode::UnsupportedAttr(absl::string_view attr, absl::string_view value) const {
  return absl::UnimplementedError(absl::StrCat("op ", op_type(), " attribute ", attr, "=", value,
                                               " is not supported (node ", Name(), ")"));
}

// ---------------------------------------------------------------- OnnxNode: emitting

absl::StatusOr<std::vector<Value*>> OnnxNode::OpMulti(absl::string_view op,
                                                      std::vector<Value*> inputs, AttrMap attrs) {
  absl::StatusOr<std::vector<Value*>> out = ctx_.builder().OpMulti(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) {
    if (absl::IsUnimplemented(out.status())) return Unsupported(out.status().message());
    return Invalid(out.status().message());
  }
  if (!out->empty()) (*out)[0]->producer()->set_name(node_.name());
  return out;
}

absl::StatusOr<Value*> OnnxNode::Op(absl::string_view op, std::vector<Value*> inputs, AttrMap attrs) {
  COIL_ASSIGN_OR_RETURN(std::vector<Value*> out, OpMulti(op, std::move(inputs), std::move(attrs)));
  if (out.size() != 1) return Invalid(absl::StrCat(op, " has ", out.size(), " outputs"));
  return out[0];
}

Value* OnnxNode::Const(const KnownValue& k) {
  std::vector<SymExpr> shape(k.shape.begin(), k.shape.end());
  return ctx_.builder().Constant(TensorType(k.dtype, std::move(shape)), k.Bytes());
}

Value* OnnxNode::Scalar(DType dtype, double v) {
  if (IsFloating(dtype)) return Const(KnownValue::Floats(dtype, {}, {v}));
  return Const(KnownValue::Ints(dtype, {}, {SymExpr(static_cast<int64_t>(v))}));
}

absl::StatusOr<Value*> OnnxNode::Cast(Value* v, DType t) {
  if (v->type().dtype == t) return v;
  return Op("aten.to_dtype", {v}, {{"dtype", t}});
}

absl::StatusOr<int64_t> OnnxNode::Axis(int64_t axis, int64_t rank, absl::string_view what) const {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0)) {
    return Invalid(absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace coil::onnx_internal
