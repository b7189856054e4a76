// The autocast pass (autocast.h): torch's CUDA autocast policy for bf16 on coil's aten ops.
#include "prims/autocast.h"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"

namespace coil::prims {
namespace {

constexpr DType kLow = proto::BFLOAT16;

enum class Policy {
  kFollow,          // type promotion (with constants following bf16 activations)
  kLower,           // run in bf16
  kF32,             // run in f32
  kF32UnlessDType,  // run in f32 unless the op's dtype attribute says otherwise
  kWidest,          // floating inputs cast to the widest among them
};

const absl::flat_hash_map<std::string, Policy>& PolicyTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, Policy>;
    for (const char* op :
         {"aten.mm", "aten.bmm", "aten.matmul", "aten.linear", "aten.addmm", "aten.baddbmm",
          "aten.mv", "aten.convolution", "aten.conv1d", "aten.conv2d", "aten.conv3d",
          "aten.conv_transpose1d", "aten.conv_transpose2d", "aten.conv_transpose3d",
          "aten.scaled_dot_product_attention"}) {
      (*t)[op] = Policy::kLower;
    }
    for (const char* op :
         {"aten.exp",        "aten.expm1",         "aten.log",       "aten.log10",
          "aten.log2",       "aten.log1p",         "aten.pow",       "aten.pow_scalar",
          "aten.reciprocal", "aten.rsqrt",         "aten.acos",      "aten.asin",
          "aten.cosh",       "aten.sinh",          "aten.tan",       "aten.softplus",
          "aten.layer_norm", "aten.group_norm",    "aten.logsumexp", "aten.norm",
          "aten.batch_norm", "aten.instance_norm", "aten.rms_norm"}) {
      (*t)[op] = Policy::kF32;
    }
    for (const char* op : {"aten.softmax", "aten.log_softmax", "aten.sum", "aten.prod",
                           "aten.cumsum", "aten.cumprod"}) {
      (*t)[op] = Policy::kF32UnlessDType;
    }
    for (const char* op : {"aten.addcdiv", "aten.addcmul", "aten.atan2", "aten.dot",
                           "aten.index_put", "aten.scatter_add", "aten.cat", "aten.stack"}) {
      (*t)[op] = Policy::kWidest;
    }
    return t;
  }();
  return *table;
}

Policy PolicyOf(absl::string_view op) {
  auto it = PolicyTable().find(op);
  return it == PolicyTable().end() ? Policy::kFollow : it->second;
}

// Ops that only move or select elements: a cast commutes with them exactly.
bool IsLayoutOp(absl::string_view op) {
  static const auto* ops = new absl::flat_hash_set<std::string>(
      {"aten.reshape", "aten.view", "aten.permute", "aten.transpose", "aten.t", "aten.expand",
       "aten.unsqueeze", "aten.squeeze", "aten.flatten", "aten.unflatten", "aten.slice",
       "aten.select", "aten.narrow", "aten.movedim", "aten.contiguous", "aten.clone"});
  return ops->contains(op);
}

bool IsLowerFloat(DType t) { return t == proto::BFLOAT16 || t == proto::FLOAT16; }

// The type each input of an op on the policy's own lists should have, from the input types
// and the op's attributes alone; DTYPE_UNSPECIFIED: as it is. kFollow depends on the graph
// around the op (Autocaster::Wanted).
std::vector<DType> PolicyWanted(Policy policy, absl::Span<const DType> in, const AttrMap& attrs) {
  std::vector<DType> want(in.size(), proto::DTYPE_UNSPECIFIED);
  switch (policy) {
    case Policy::kLower:
      for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == proto::FLOAT32 || in[i] == proto::FLOAT16) want[i] = kLow;
      }
      break;
    case Policy::kF32:
      for (size_t i = 0; i < in.size(); ++i) {
        if (IsLowerFloat(in[i])) want[i] = proto::FLOAT32;
      }
      break;
    case Policy::kF32UnlessDType: {
      absl::StatusOr<DType> d = GetDType(attrs, "dtype");
      const bool given = d.ok() && *d != proto::DTYPE_UNSPECIFIED;
      if (!given && !in.empty() && IsLowerFloat(in[0])) want[0] = proto::FLOAT32;
      break;
    }
    case Policy::kWidest: {
      DType widest = proto::DTYPE_UNSPECIFIED;
      for (DType t : in) {
        if (!IsFloating(t)) continue;
        widest = widest == proto::DTYPE_UNSPECIFIED ? t : PromoteTypes(widest, t);
      }
      for (size_t i = 0; i < in.size(); ++i) {
        if (IsFloating(in[i])) want[i] = widest;
      }
      break;
    }
    case Policy::kFollow:
      break;
  }
  return want;
}

// f32 -> bf16, rounding to nearest even (NaN stays a quiet NaN).
// Branch-free, so that the conversion loops below vectorize.
uint16_t FloatBitsToBF16(uint32_t bits) {
  const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded >> 16);
}

// Runs body(begin, end) over [0, n) in chunks of at least 1M elements on up to
// hardware_concurrency threads (the calling thread alone below 2M): a model's large weights
// are converted on several cores.
template <typename Body>
void ForChunks(size_t n, const Body& body) {
  constexpr size_t kMinPerThread = size_t{1} << 20;
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()),
                                          std::max<size_t>(1, n / kMinPerThread));
  if (threads <= 1) {
    body(size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  const size_t per = (n + threads - 1) / threads;
  for (size_t b = per; b < n; b += per) pool.emplace_back(body, b, std::min(n, b + per));
  body(size_t{0}, std::min(n, per));
  for (std::thread& t : pool) t.join();
}

// Inline constant bytes of `from` as `to`, for the conversions done here (f32 <-> bf16);
// false for others (an aten.to_dtype node does those).
bool ConvertConstant(const std::string& raw, DType from, DType to, std::string& out) {
  if (from == proto::FLOAT32 && to == proto::BFLOAT16 && raw.size() % 4 == 0) {
    out.resize(raw.size() / 2);
    ForChunks(raw.size() / 4, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        uint32_t bits;
        std::memcpy(&bits, raw.data() + 4 * i, 4);
        const uint16_t b = FloatBitsToBF16(bits);
        std::memcpy(out.data() + 2 * i, &b, 2);
      }
    });
    return true;
  }
  if (from == proto::BFLOAT16 && to == proto::FLOAT32 && raw.size() % 2 == 0) {
    out.resize(raw.size() * 2);
    ForChunks(raw.size() / 2, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        uint16_t b;
        std::memcpy(&b, raw.data() + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(b) << 16;
        std::memcpy(out.data() + 4 * i, &bits, 4);
      }
    });
    return true;
  }
  return false;
}

class Autocaster {
 public:
  explicit Autocaster(Graph& graph) : g_(graph) {}

  absl::StatusOr<bool> Run() {
    for (const Value* c : g_.constants()) constant_derived_.insert(c);
    for (Node* n : g_.nodes()) {  // a copy: casts are inserted as we go
      const OpSchema* schema = OpRegistry::Global().Find(n->op());
      if (schema == nullptr) {
        return absl::InternalError(absl::StrCat("autocast: unknown op in ", n->Describe()));
      }
      MarkConstantDerived(*n, *schema);
      if (absl::Status s = Visit(*n, *schema); !s.ok()) return s;
    }
    std::vector<Value*> outputs = g_.outputs();
    for (Value*& v : outputs) {
      if (Changed(v)) v = Cast(v, Original(v), nullptr);
    }
    g_.SetOutputs(std::move(outputs));
    if (changed_) {
      // The f32 constants that now only had bf16 users.
      g_.RemoveDeadCode([](const Node& n) {
        const OpSchema* schema = OpRegistry::Global().Find(n.op());
        return schema != nullptr && schema->mutated_input >= 0;
      });
    }
    return changed_;
  }

 private:
  // The value's type in the model (before this pass changed it).
  DType Original(const Value* v) const {
    auto it = original_.find(v);
    return it == original_.end() ? v->type().dtype : it->second;
  }
  bool Changed(const Value* v) const { return v->type().dtype != Original(v); }

  void MarkConstantDerived(const Node& n, const OpSchema& schema) {
    if (schema.op_class == OpClass::kRandom || schema.mutated_input >= 0) return;
    for (const Value* in : n.inputs()) {
      if (!constant_derived_.contains(in)) return;
    }
    for (const Value* out : n.outputs()) constant_derived_.insert(out);
  }

  // The type each input should have for this node; DTYPE_UNSPECIFIED: as it is.
  std::vector<DType> Wanted(const Node& n, Policy policy) const {
    std::vector<DType> want(n.num_inputs(), proto::DTYPE_UNSPECIFIED);
    switch (policy) {
      case Policy::kLower:
      case Policy::kF32:
      case Policy::kF32UnlessDType:
      case Policy::kWidest: {
        std::vector<DType> types;
        for (const Value* in : n.inputs()) types.push_back(in->type().dtype);
        want = PolicyWanted(policy, types, n.attrs());
        break;
      }
      case Policy::kFollow: {
        // Dimensioned floating constants follow activations that became bf16 (0-d ones are
        // scalars: type promotion keeps the activation's type, and they keep their precision).
        bool lowered = false, other = false;
        for (const Value* in : n.inputs()) {
          const DType t = in->type().dtype;
          if (!IsFloating(t) || constant_derived_.contains(in)) continue;
          if (t == kLow && Original(in) != kLow) {
            lowered = true;
          } else if (t != kLow) {
            other = true;
          }
        }
        if (!lowered || other) break;
        for (int i = 0; i < n.num_inputs(); ++i) {
          const Value* in = n.input(i);
          const DType t = in->type().dtype;
          if (constant_derived_.contains(in) && in->type().rank() > 0 &&
              (t == proto::FLOAT32 || t == proto::FLOAT16) && !Changed(in)) {
            want[i] = kLow;
          }
        }
        break;
      }
    }
    return want;
  }

  absl::Status Visit(Node& n, const OpSchema& schema) {
    const Policy policy = PolicyOf(n.op());
    bool touched = false;
    for (const Value* in : n.inputs()) touched = touched || Changed(in);
    const std::vector<DType> want = Wanted(n, policy);
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (want[i] == proto::DTYPE_UNSPECIFIED || want[i] == n.input(i)->type().dtype) continue;
      n.ReplaceInput(i, Cast(n.input(i), want[i], &n));
      touched = true;
    }
    if (!touched) return absl::OkStatus();
    if (Reinfer(n, schema).ok()) return absl::OkStatus();
    // An op that refuses the new types (a write-back into an f32 input, a dtype-strict op)
    // runs on its model's types.
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (Changed(n.input(i))) n.ReplaceInput(i, Cast(n.input(i), Original(n.input(i)), &n));
    }
    if (absl::Status s = Reinfer(n, schema); !s.ok()) {
      return absl::InternalError(
          absl::StrCat("autocast: ", n.Describe(), " refuses its model's types: ", s.message()));
    }
    return absl::OkStatus();
  }

  absl::Status Reinfer(Node& n, const OpSchema& schema) {
    std::vector<TensorType> in;
    for (const Value* v : n.inputs()) in.push_back(v->type());
    AttrMap attrs = n.attrs();
    absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(schema, in, attrs);
    if (!out.ok()) return out.status();
    for (int i = 0; i < n.num_outputs(); ++i) {
      Value* v = n.output(i);
      if ((*out)[i] == v->type()) continue;
      original_.try_emplace(v, v->type().dtype);
      v->set_type((*out)[i]);
      changed_ = true;
    }
    return absl::OkStatus();
  }

  // `v` as type `t`, made once per (value, type): a converted constant, the value a cast
  // came from, a view of a weight made again of the cast weight, or an aten.to_dtype before
  // `before` (at the end when null).
  Value* Cast(Value* v, DType t, Node* before) {
    auto key = std::make_pair(static_cast<const Value*>(v), t);
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    if (auto s = cast_source_.find(v); s != cast_source_.end() && s->second->type().dtype == t) {
      return s->second;
    }
    changed_ = true;
    Value* out = nullptr;
    std::string raw;
    if (v->kind() == Value::Kind::kConstant && !v->constant().is_external() &&
        v->type().strides.empty() && ConvertConstant(v->constant().raw, v->type().dtype, t, raw)) {
      TensorType type = v->type();
      type.dtype = t;
      ConstantData data;
      data.raw = std::move(raw);
      out = g_.AddConstant(std::move(type), std::move(data),
                           v->name().empty() ? "" : absl::StrCat(v->name(), ".", DTypeName(t)));
    } else if (Node* p = v->producer(); p != nullptr && before != nullptr &&
                                        constant_derived_.contains(v) && p->num_inputs() == 1 &&
                                        p->num_outputs() == 1 && IsLayoutOp(p->op())) {
      // A view of a weight (a transposed or reshaped initializer): the weight is cast (here,
      // when it is an inline constant) and the view made again of the cast.
      Value* source = Cast(p->input(0), t, before);
      TensorType type = v->type();
      type.dtype = t;
      Node* c = g_.InsertNodeBefore(before, p->op(), {source}, p->attrs(), {type});
      c->set_loc(p->loc());
      c->set_name(p->name());
      out = c->output(0);
    } else {
      AttrMap attrs{{"dtype", Attribute(t)}};
      std::vector<TensorType> types = {TensorType(t, v->type().shape, v->type().device)};
      Node* c = before != nullptr
                    ? g_.InsertNodeBefore(before, "aten.to_dtype", {v}, std::move(attrs), types)
                    : g_.AddNode("aten.to_dtype", {v}, std::move(attrs), types);
      if (before != nullptr) {
        c->set_loc(before->loc());
        c->set_name(before->name());
      }
      out = c->output(0);
    }
    if (constant_derived_.contains(v)) constant_derived_.insert(out);
    original_[out] = Original(v);
    cast_source_[out] = v;
    casts_[key] = out;
    return out;
  }

  Graph& g_;
  absl::flat_hash_map<const Value*, DType> original_;
  absl::flat_hash_map<std::pair<const Value*, DType>, Value*> casts_;
  absl::flat_hash_map<const Value*, Value*> cast_source_;
  absl::flat_hash_set<const Value*> constant_derived_;
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<Precision> ParsePrecision(absl::string_view name) {
  if (name == "f32") return Precision::kF32;
  if (name == "bf16") return Precision::kBF16;
  return absl::InvalidArgumentError(absl::StrCat("precision '", name, "' is not one of f32, bf16"));
}

std::string PrecisionName(Precision p) { return p == Precision::kBF16 ? "bf16" : "f32"; }

std::vector<TensorType> AutocastInputTypes(absl::string_view op,
                                           absl::Span<const TensorType> inputs,
                                           const AttrMap& attrs, Precision precision) {
  std::vector<TensorType> types(inputs.begin(), inputs.end());
  if (precision == Precision::kF32) return types;
  std::vector<DType> dtypes;
  for (const TensorType& t : inputs) dtypes.push_back(t.dtype);
  const std::vector<DType> want = PolicyWanted(PolicyOf(op), dtypes, attrs);
  for (size_t i = 0; i < types.size(); ++i) {
    if (want[i] != proto::DTYPE_UNSPECIFIED) types[i].dtype = want[i];
  }
  return types;
}

std::vector<std::string> AutocastPolicyOps() {
  std::vector<std::string> ops;
  for (const auto& [op, policy] : PolicyTable()) ops.push_back(op);
  return ops;
}

absl::StatusOr<bool> Autocast(Graph& graph, Precision precision) {
  if (precision == Precision::kF32) return false;
  return Autocaster(graph).Run();
}

}  // namespace coil::prims
