// Functionalize: one walk over the nodes in program order, tracking which storage every value
// aliases (see the header for the rewrite rules).
//
// [Note: aliases] Every old-graph value is an alias: a root (graph input, constant, output of
// a non-view op, or of a reshape that copies) plus a view chain (the view steps from the root
// to the value). Each root has the new-graph value holding its current contents and a version
// that every mutation of its storage bumps. A read of a value whose cached new value is older
// than its root replays the chain from the root's current contents.
#include "prims/functionalize.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/builder.h"
#include "ir/op_registry.h"

namespace coil::prims {
namespace {

// Strides in the root's storage, as expressions over the graph's symbols; nullopt when they
// could not be decided from the symbols' ranges.
using Strides = std::optional<std::vector<SymExpr>>;

// One view op application, as replayed (split/chunk/narrow are recorded as aten.slice).
struct ViewStep {
  std::string op;
  AttrMap attrs;
  TensorType in_type;  // the view's input, for inverting reshape-like steps
};

struct Alias {
  const Value* root = nullptr;
  std::vector<ViewStep> chain;
  Strides strides;
};

struct Cached {
  Value* value = nullptr;
  int version = -1;
};

bool IsReshapeLike(absl::string_view op) {
  return op == "aten.view" || op == "aten.reshape" || op == "aten.flatten" ||
         op == "aten.unflatten" || op == "aten.squeeze" || op == "aten.unsqueeze";
}

// Reshape-like ops that never copy: a view (or an error, which the trace has ruled out)
// whatever the strides, so they alias even where symbolic sizes hide the strides.
bool AlwaysViews(absl::string_view op) {
  return op == "aten.view" || op == "aten.squeeze" || op == "aten.unsqueeze";
}

// Row-major strides of `shape` (size-0/1 dims count as 1); nullopt if a symbolic size may be 0.
Strides ContiguousStrides(const std::vector<SymExpr>& shape, const SymRanges& ranges) {
  std::vector<SymExpr> st(shape.size(), SymExpr(1));
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    const SymExpr& size = shape[d + 1];
    if (size.is_constant()) {
      st[d] = st[d + 1] * SymExpr(std::max<int64_t>(size.constant(), 1));
    } else if (ProveLe(SymExpr(1), size, ranges) == Truth::kTrue) {
      st[d] = st[d + 1] * size;
    } else {
      return std::nullopt;
    }
  }
  return st;
}

enum class Reshaped { kView, kCopy, kUnknown };

// PyTorch's computeStride (as the reference reshape kernel) over symbolic sizes: whether
// (shape, stride) can be viewed as new_shape (then `out` holds the strides), must be copied,
// or neither is provable from the symbols' ranges.
Reshaped ViewStrides(const std::vector<SymExpr>& shape, const std::vector<SymExpr>& stride,
                     const std::vector<SymExpr>& new_shape, const SymRanges& ranges,
                     std::vector<SymExpr>& out) {
  bool unknown = false;
  // Decides a relation, noting when it cannot be proved either way.
  auto holds = [&](Truth t) {
    if (t == Truth::kUnknown) unknown = true;
    return t == Truth::kTrue;
  };
  SymExpr numel(1);
  for (const SymExpr& d : shape) numel = numel * d;
  const Truth empty = ProveEq(numel, SymExpr(0), ranges);
  if (empty == Truth::kUnknown) return Reshaped::kUnknown;
  if (empty == Truth::kTrue || shape.empty()) {
    Strides st = ContiguousStrides(new_shape, ranges);
    if (!st) return Reshaped::kUnknown;
    out = *std::move(st);
    return Reshaped::kView;
  }
  out.assign(new_shape.size(), SymExpr(0));
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  SymExpr base = stride.back(), tensor_numel(1), view_numel(1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel = tensor_numel * shape[d];
    if (d == 0 || (!holds(ProveEq(shape[d - 1], SymExpr(1), ranges)) &&
                   !holds(ProveEq(stride[d - 1], tensor_numel * base, ranges)))) {
      while (view_d >= 0 && (holds(ProveLt(view_numel, tensor_numel, ranges)) ||
                             holds(ProveEq(new_shape[view_d], SymExpr(1), ranges)))) {
        out[view_d] = view_numel * base;
        view_numel = view_numel * new_shape[view_d];
        --view_d;
      }
      if (unknown) return Reshaped::kUnknown;
      if (!holds(ProveEq(view_numel, tensor_numel, ranges))) {
        return unknown ? Reshaped::kUnknown : Reshaped::kCopy;
      }
      if (d > 0) {
        base = stride[d - 1];
        tensor_numel = SymExpr(1);
        view_numel = SymExpr(1);
      }
    }
    if (unknown) return Reshaped::kUnknown;
  }
  if (view_d != -1) return Reshaped::kCopy;
  return Reshaped::kView;
}

int64_t Wrap(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// The input dim each output dim of a reordering view comes from.
std::vector<int64_t> ReorderOf(const std::string& op, const AttrMap& attrs, int64_t rank) {
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i) order[i] = i;
  if (op == "aten.permute") {
    IntList dims = std::get<IntList>(attrs.at("dims"));
    for (int64_t i = 0; i < rank; ++i) order[i] = Wrap(dims[i], rank);
  } else if (op == "aten.transpose") {
    if (rank > 0) {
      std::swap(order[Wrap(std::get<int64_t>(attrs.at("dim0")), rank)],
                order[Wrap(std::get<int64_t>(attrs.at("dim1")), rank)]);
    }
  } else if (op == "aten.t") {
    std::reverse(order.begin(), order.end());
  } else {  // movedim
    IntList src = std::get<IntList>(attrs.at("source"));
    IntList dst = std::get<IntList>(attrs.at("destination"));
    std::vector<int64_t> o(rank, -1);
    std::vector<bool> used(rank, false);
    for (size_t i = 0; i < src.size(); ++i) {
      o[Wrap(dst[i], rank)] = Wrap(src[i], rank);
      used[Wrap(src[i], rank)] = true;
    }
    int64_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (o[i] >= 0) continue;
      while (used[next]) ++next;
      o[i] = next++;
    }
    order = o;
  }
  return order;
}

bool IsReorder(absl::string_view op) {
  return op == "aten.permute" || op == "aten.transpose" || op == "aten.t" ||
         op == "aten.movedim";
}

class Functionalizer {
 public:
  explicit Functionalizer(const Graph& old)
      : old_(old), out_(old.name()), b_(out_), ranges_(old.SymbolRanges()) {}

  absl::StatusOr<Graph> Run() {
    for (const Value* in : old_.inputs()) {
      Value* v = out_.AddInput(in->type(), in->name());
      AddRoot(in, v);
    }
    for (const Value* c : old_.constants()) {
      Value* v = out_.AddConstant(c->type(), c->constant(), c->name());
      AddRoot(c, v);
    }
    out_.symbols() = old_.symbols();
    out_.guards() = old_.guards();
    for (const Node* n : old_.nodes()) {
      name_ = n->name();
      absl::Status s = Visit(*n);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat(n->Describe(), ": ", s.message()));
      }
    }
    name_.clear();
    std::vector<Value*> outputs;
    for (const Value* o : old_.outputs()) {
      absl::StatusOr<Value*> v = Read(o);
      if (!v.ok()) return v.status();
      outputs.push_back(*v);
    }
    // Write mutated inputs back, after every other node.
    for (size_t i = 0; i < old_.inputs().size(); ++i) {
      const Value* in = old_.inputs()[i];
      if (latest_.at(in) == out_.inputs()[i]) continue;
      if (OpRegistry::Global().Find("prims.copy_to") == nullptr) {
        return absl::FailedPreconditionError(
            "input '" + in->name() + "' is mutated, but prims.copy_to is not registered");
      }
      absl::StatusOr<std::vector<Value*>> c =
          b_.OpMulti("prims.copy_to", {out_.inputs()[i], latest_.at(in)});
      if (!c.ok()) return c.status();
    }
    out_.SetOutputs(outputs);
    out_.RemoveDeadCode([](const Node& n) { return n.op() == "prims.copy_to"; });
    return std::move(out_);
  }

 private:
  void AddRoot(const Value* old_value, Value* new_value) {
    Alias a;
    a.root = old_value;
    a.strides = ContiguousStrides(old_value->type().shape, ranges_);
    alias_[old_value] = std::move(a);
    latest_[old_value] = new_value;
    version_[old_value] = 0;
  }

  // Provenance: a node made for the old node being visited (a mutation's functional op, its
  // write-back, a replayed view) takes that node's name, unless it has one.
  Value* Stamp(Value* v) {
    Node* p = v->producer();
    if (p != nullptr && p->name().empty() && !name_.empty()) p->set_name(name_);
    return v;
  }

  // The current contents of an old value, as a new-graph value.
  absl::StatusOr<Value*> Read(const Value* v) {
    const Alias& a = alias_.at(v);
    int version = version_.at(a.root);
    if (a.chain.empty()) return latest_.at(a.root);
    Cached& c = cache_[v];
    if (c.value != nullptr && c.version == version) return c.value;
    Value* cur = latest_.at(a.root);
    for (const ViewStep& step : a.chain) {
      absl::StatusOr<Value*> next = b_.Op(step.op, {cur}, step.attrs);
      if (!next.ok()) return next.status();
      cur = Stamp(*next);
    }
    c = Cached{cur, version};
    return cur;
  }

  absl::Status Visit(const Node& n) {
    const OpSchema* schema = OpRegistry::Global().Find(n.op());
    if (schema != nullptr && schema->mutated_input >= 0) return VisitMutation(n, *schema);
    std::vector<Value*> inputs;
    for (const Value* in : n.inputs()) {
      absl::StatusOr<Value*> v = Read(in);
      if (!v.ok()) return v.status();
      inputs.push_back(*v);
    }
    std::vector<TensorType> types;
    for (const Value* o : n.outputs()) types.push_back(o->type());
    Node* copy = out_.AddNode(n.op(), inputs, n.attrs(), types);
    copy->set_loc(n.loc());
    copy->set_name(n.name());
    for (int k = 0; k < n.num_outputs(); ++k) {
      const Value* o = n.output(k);
      if (schema != nullptr && schema->is_view) {
        absl::StatusOr<bool> aliased = AddView(n, k, *schema);
        if (!aliased.ok()) return aliased.status();
        if (*aliased) {
          cache_[o] = Cached{copy->output(k), version_.at(alias_.at(o).root)};
          continue;
        }
      }
      AddRoot(o, copy->output(k));
    }
    return absl::OkStatus();
  }

  // Records output k of view node n as an alias of its input; false when it is a copy.
  absl::StatusOr<bool> AddView(const Node& n, int k, const OpSchema& schema) {
    const Value* in = n.input(0);
    const Value* out = n.output(k);
    const Alias& base = alias_.at(in);
    ViewStep step{n.op(), n.attrs(), in->type()};
    if (NormalizeAttrs(schema, step.attrs) != absl::OkStatus()) {
      return absl::InvalidArgumentError("attributes do not match the schema");
    }
    Strides strides;
    const std::vector<SymExpr>& in_shape = in->type().shape;
    const std::vector<SymExpr>& out_shape = out->type().shape;
    const std::string& op = n.op();
    int64_t rank = in->type().rank();
    if (op == "aten.split" || op == "aten.chunk" || op == "aten.narrow") {
      // Recorded as the slice it is.
      int64_t dim = Wrap(std::get<int64_t>(step.attrs.at("dim")), rank);
      SymExpr start(0);
      if (op == "aten.narrow") {
        absl::StatusOr<SymExpr> s = GetSym(step.attrs, "start");
        if (!s.ok()) return s.status();
        start = *s;
        if (start.is_constant() && start.constant() < 0) start = start + in->type().shape[dim];
      } else {
        for (int j = 0; j < k; ++j) start = start + n.output(j)->type().shape[dim];
      }
      step = ViewStep{"aten.slice",
                      {{"dim", dim},
                       {"start", start},
                       {"end", start + out->type().shape[dim]},
                       {"step", int64_t{1}}},
                      in->type()};
    }
    if (base.strides) {
      const std::vector<SymExpr>& s = *base.strides;
      if (step.op == "aten.slice") {
        std::vector<SymExpr> st = s;
        SymExpr& d = st[Wrap(std::get<int64_t>(step.attrs.at("dim")), rank)];
        d = d * SymExpr(std::get<int64_t>(step.attrs.at("step")));
        strides = st;
      } else if (op == "aten.select") {
        std::vector<SymExpr> st = s;
        st.erase(st.begin() + Wrap(std::get<int64_t>(step.attrs.at("dim")), rank));
        strides = st;
      } else if (IsReorder(op)) {
        std::vector<SymExpr> st;
        for (int64_t d : ReorderOf(op, step.attrs, rank)) st.push_back(s[d]);
        strides = st;
      } else if (op == "aten.expand") {
        std::vector<SymExpr> st(out_shape.size(), SymExpr(0));
        int64_t lead = static_cast<int64_t>(out_shape.size()) - rank;
        bool known = true;
        for (int64_t j = 0; j < rank; ++j) {
          // A size-1 dim broadcast to the target has stride 0.
          const Truth one = ProveEq(in_shape[j], SymExpr(1), ranges_);
          if (one == Truth::kUnknown) known = false;
          if (one == Truth::kFalse) st[j + lead] = s[j];
        }
        if (known) strides = st;
      } else if (op == "aten.diagonal") {
        int64_t d1 = Wrap(std::get<int64_t>(step.attrs.at("dim1")), rank);
        int64_t d2 = Wrap(std::get<int64_t>(step.attrs.at("dim2")), rank);
        std::vector<SymExpr> st;
        for (int64_t d = 0; d < rank; ++d) {
          if (d != d1 && d != d2) st.push_back(s[d]);
        }
        st.push_back(s[d1] + s[d2]);
        strides = st;
      } else if (IsReshapeLike(op) && ContiguousStrides(in_shape, ranges_) == base.strides) {
        // A row-major input: any reshape views it (even where the element counts are equal
        // only by a guard, as for a reshape to [s1 / 2, 2]).
        strides = ContiguousStrides(out_shape, ranges_);
      } else if (IsReshapeLike(op)) {
        std::vector<SymExpr> st;
        switch (ViewStrides(in_shape, s, out_shape, ranges_, st)) {
          case Reshaped::kView:
            strides = std::move(st);
            break;
          case Reshaped::kCopy:
            if (op == "aten.view") {
              return absl::InvalidArgumentError(
                  "view size is not compatible with input tensor's size and stride (at least "
                  "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                  "instead.");
            }
            return false;  // torch.reshape copies: a new root
          case Reshaped::kUnknown:
            if (!AlwaysViews(op)) return UndecidedReshape(op);
            break;  // a view with strides unknown
        }
      }
    } else if (IsReshapeLike(op) && !base.chain.empty() && !AlwaysViews(op)) {
      return UndecidedReshape(op);
    }
    Alias a;
    a.root = base.root;
    a.chain = base.chain;
    a.chain.push_back(std::move(step));
    a.strides = std::move(strides);
    alias_[out] = std::move(a);
    return true;
  }

  static absl::Status UndecidedReshape(absl::string_view op) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported view chain: cannot decide whether ", op,
        " of a view with symbolic sizes aliases its input (from the symbols' ranges)"));
  }

  absl::Status VisitMutation(const Node& n, const OpSchema& schema) {
    const Value* self = n.input(0);
    const Alias a = alias_.at(self);
    for (const ViewStep& step : a.chain) {
      if (step.op == "aten.expand") {
        return absl::InvalidArgumentError(
            "mutation of an expanded (broadcast) view: more than one element of the written-to "
            "tensor refers to a single memory location");
      }
    }
    std::vector<Value*> inputs;
    std::vector<TensorType> types;
    for (const Value* in : n.inputs()) {
      absl::StatusOr<Value*> v = Read(in);
      if (!v.ok()) return v.status();
      inputs.push_back(*v);
      types.push_back((*v)->type());
    }
    // The in-place meta checks the result's shape and castability.
    AttrMap attrs = n.attrs();
    absl::StatusOr<std::vector<TensorType>> checked = InferOutputTypes(schema, types, attrs);
    if (!checked.ok()) return checked.status();
    const TensorType& want = self->type();
    absl::StatusOr<Value*> r;
    // prims.copy_to is a functionalized graph's write-back (a joint graph keeps the forward's):
    // functionalizing again reads it as the copy_ it came from, and writes it back at the end.
    const bool copy = n.op() == "aten.copy_" || n.op() == "prims.copy_to";
    if (copy) {
      r = inputs[1];
      if ((*r)->type().shape != want.shape) {
        r = b_.Op("aten.expand", {*r}, {{"size", SymList(want.shape)}}, n.loc());
      }
    } else if (n.op() == "aten.fill_") {
      r = b_.Op("aten.full_like", {inputs[0]}, {{"value", attrs.at("value")}}, n.loc());
    } else if (n.op() == "aten.zero_") {
      r = b_.Op("aten.zeros_like", {inputs[0]}, {}, n.loc());
    } else {
      std::string base = n.op().substr(0, n.op().size() - 1);
      r = b_.Op(base, inputs, attrs, n.loc());
    }
    if (!r.ok()) return r.status();
    if (!copy || *r != inputs[1]) Stamp(*r);  // not copy_'s own source
    if ((*r)->type().dtype != want.dtype) {
      r = b_.Op("aten.to_dtype", {*r}, {{"dtype", want.dtype}}, n.loc());
      if (!r.ok()) return r.status();
      Stamp(*r);
    }
    absl::Status s = WriteBack(a, *r);
    if (!s.ok()) return s;
    int version = version_.at(a.root);
    cache_[self] = Cached{*r, version};
    alias_[n.output(0)] = a;
    cache_[n.output(0)] = Cached{*r, version};
    return absl::OkStatus();
  }

  // `base` with its diagonal (step's offset, dim1, dim2) replaced by `diag`, from ops that
  // exist: the two dims moved last and flattened, the diagonal is every (m + 1)-th element
  // from its first (m: dim2's size), a strided slice_scatter; then back.
  absl::StatusOr<Value*> DiagonalScatter(Value* base, Value* diag, const ViewStep& step) {
    const TensorType& t = step.in_type;
    const int64_t rank = t.rank();
    const int64_t d1 = Wrap(std::get<int64_t>(step.attrs.at("dim1")), rank);
    const int64_t d2 = Wrap(std::get<int64_t>(step.attrs.at("dim2")), rank);
    const int64_t offset = std::get<int64_t>(step.attrs.at("offset"));
    const SymExpr& m = t.shape[d2];
    const SymExpr& length = diag->type().shape.back();
    if (!m.is_constant()) {
      return absl::InvalidArgumentError(
          "unsupported view chain: mutation through aten.diagonal of a symbolic size");
    }
    if (length.is_constant() && length.constant() == 0) return base;  // nothing written
    IntList order, inverse(rank);
    SymList rest, flat_shape, full_shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != d1 && d != d2) {
        order.push_back(d);
        rest.push_back(t.shape[d]);
      }
    }
    order.push_back(d1);
    order.push_back(d2);
    for (int64_t j = 0; j < rank; ++j) inverse[order[j]] = j;
    flat_shape = rest;
    flat_shape.push_back(t.shape[d1] * m);
    full_shape = rest;
    full_shape.push_back(t.shape[d1]);
    full_shape.push_back(m);
    const SymExpr start(std::max<int64_t>(-offset, 0) * m.constant() + std::max<int64_t>(offset, 0));
    const int64_t stride = m.constant() + 1;
    Value* v = base;
    for (auto [op, attrs] : std::vector<std::pair<const char*, AttrMap>>{
             {"aten.permute", {{"dims", order}}}, {"aten.reshape", {{"shape", flat_shape}}}}) {
      absl::StatusOr<Value*> next = b_.Op(op, {v}, attrs);
      if (!next.ok()) return next.status();
      v = Stamp(*next);
    }
    absl::StatusOr<Value*> scattered = b_.Op(
        "aten.slice_scatter", {v, diag},
        {{"dim", static_cast<int64_t>(rest.size())},
         {"start", start},
         {"end", start + (length - SymExpr(1)) * SymExpr(stride) + SymExpr(1)},
         {"step", stride}});
    if (!scattered.ok()) return scattered.status();
    v = Stamp(*scattered);
    absl::StatusOr<Value*> unflat = b_.Op("aten.reshape", {v}, {{"shape", full_shape}});
    if (!unflat.ok()) return unflat.status();
    return b_.Op("aten.permute", {Stamp(*unflat)}, {{"dims", inverse}});
  }

  // Makes `value` the new contents of alias `a`, scattering it back through the view chain.
  absl::Status WriteBack(const Alias& a, Value* value) {
    std::vector<Value*> bases = {latest_.at(a.root)};
    for (size_t i = 0; i + 1 < a.chain.size(); ++i) {
      absl::StatusOr<Value*> next = b_.Op(a.chain[i].op, {bases.back()}, a.chain[i].attrs);
      if (!next.ok()) return next.status();
      bases.push_back(Stamp(*next));
    }
    Value* cur = value;
    for (size_t i = a.chain.size(); i-- > 0;) {
      const ViewStep& step = a.chain[i];
      absl::StatusOr<Value*> next;
      if (step.op == "aten.slice") {
        next = b_.Op("aten.slice_scatter", {bases[i], cur}, step.attrs);
      } else if (step.op == "aten.select") {
        next = b_.Op("aten.select_scatter", {bases[i], cur}, step.attrs);
      } else if (step.op == "aten.diagonal") {
        next = DiagonalScatter(bases[i], cur, step);
      } else if (step.op == "aten.permute") {
        std::vector<int64_t> order = ReorderOf(step.op, step.attrs, step.in_type.rank());
        IntList inverse(order.size());
        for (size_t j = 0; j < order.size(); ++j) inverse[order[j]] = static_cast<int64_t>(j);
        next = b_.Op("aten.permute", {cur}, {{"dims", inverse}});
      } else if (step.op == "aten.transpose" || step.op == "aten.t") {
        next = b_.Op(step.op, {cur}, step.attrs);
      } else if (step.op == "aten.movedim") {
        next = b_.Op("aten.movedim", {cur},
                     {{"source", step.attrs.at("destination")},
                      {"destination", step.attrs.at("source")}});
      } else if (IsReshapeLike(step.op)) {
        next = b_.Op("aten.reshape", {cur}, {{"shape", SymList(step.in_type.shape)}});
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("unsupported view chain: cannot write through ", step.op));
      }
      if (!next.ok()) return next.status();
      cur = Stamp(*next);
    }
    latest_[a.root] = cur;
    ++version_[a.root];
    return absl::OkStatus();
  }

  const Graph& old_;
  Graph out_;
  std::string name_;  // of the old node being visited
  GraphBuilder b_;
  const SymRanges ranges_;  // of the old graph's symbols
  absl::flat_hash_map<const Value*, Alias> alias_;
  absl::flat_hash_map<const Value*, Value*> latest_;  // by root
  absl::flat_hash_map<const Value*, int> version_;    // by root
  absl::flat_hash_map<const Value*, Cached> cache_;
};

// Whether the graph has an in-place op. prims.copy_to alone is not one: it is a functional
// graph's write-back, after every other read of its dst, and a graph output that is its dst
// keeps the value from before the write (a partitioned forward's saved input, or what
// `y = x.clone(); x.add_(1)` returns as y); functionalizing it again as the copy_ it came from
// would make such an output the written value.
bool HasMutation(const Graph& graph) {
  for (const Node* n : graph.nodes()) {
    const OpSchema* schema = OpRegistry::Global().Find(n->op());
    if (schema != nullptr && schema->mutated_input >= 0 && n->op() != "prims.copy_to") {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> Functionalize(Graph& graph) {
  if (!HasMutation(graph)) return false;
  absl::StatusOr<Graph> out = Functionalizer(graph).Run();
  if (!out.ok()) return out.status();
  graph = *std::move(out);
  return true;
}

absl::StatusOr<proto::Graph> Functionalize(const proto::Graph& graph) {
  absl::StatusOr<Graph> g = Graph::FromProto(graph);
  if (!g.ok()) return g.status();
  absl::StatusOr<bool> changed = Functionalize(*g);
  if (!changed.ok()) return changed.status();
  if (!*changed) return graph;
  return g->ToProto();
}

}  // namespace coil::prims
