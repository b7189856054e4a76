// Differential fuzzing of coil::compile on programs that write in place through views, against
// the same program run eagerly.
//
// Functionalization (prims), the write-backs of mutated inputs (`prims.copy_to`), the outputs
// that alias inputs or each other (capture/internal/output_aliases.h) and the memory plan's
// in-place reuse all have to agree with eager semantics: a write through a view reaches its
// base and every other view of it, an output taken before a write keeps the old values, and
// the caller's inputs end up written. The bytes make a small program over two f32 inputs:
// views (slice, select, transpose, unsqueeze, reshape, view, diagonal, narrow, expand), out of
// place ops (add, scale, unary, clone, sum, contiguous) and in-place ops (add_, mul_, copy_,
// relu_, zero_, fill_, clamp_, masked_fill_-like writes, ...) over the tensors made so far,
// then which of them the program returns. The program is replayed eagerly (the oracle: coil's
// eager tensors run the reference kernels on real strided storage) and through coil::compile
// (CPU backend and reference backend; static, automatic or dynamic shapes), twice each (the
// second call runs the cached artifact), on equal inputs. Findings abort: compiled and eager
// disagree on success, on an output's shape or values, on the inputs' values after the call, or
// on what a later write into an output reaches (the aliasing between outputs and inputs).
// A third call with a larger first input dimension must again agree (or both must fail).
//
// Steps the eager run refuses while the program is made are dropped, so programs are valid by
// construction. See docs/fuzzing.md.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "capture/compile.h"
#include "capture/tensor.h"
#include "coil.h"
#include "tools/fuzz/random_graph.h"

namespace coil {
namespace {

enum StepKind {
  kSlice, kSelect, kTranspose, kUnsqueeze, kReshapeFlat, kViewFlat, kDiagonal, kNarrow, kExpand,
  kAdd, kScale, kUnary, kClone, kSumDim, kContiguous,
  kAddInPlace, kMulInPlace, kCopyInPlace, kUnaryInPlace, kAddScalarInPlace, kWhereWrite,
  kStepKinds,
};

const char* const kStepNames[] = {
    "slice", "select", "transpose", "unsqueeze", "reshape(-1)", "view(-1)", "diagonal", "narrow",
    "expand", "add", "scale", "unary", "clone", "sum(dim)", "contiguous", "add_", "mul_", "copy_",
    "unary_", "add_scalar_", "masked write"};

struct Step {
  StepKind kind = kSlice;
  int a = 0, b = 0;     // operand handles
  int64_t i0 = 0, i1 = 0, i2 = 0;
  double s = 0;
};

struct Program {
  std::vector<int64_t> x_shape, y_shape;
  std::vector<Step> steps;
  std::vector<int> outputs;  // handles returned
  std::vector<bool> output_overlaps;  // per output: an expand's view (never written into)
  DynamicMode mode = DynamicMode::kAuto;
  // x requires grad: the compiled call is a training step (joint graph, partition, the
  // compiled backward on the autograd tape); x's gradient of a weighted sum of the results
  // is compared too. In-place writes into x's tensors are eager errors (dropped).
  bool grad = false;
};

// A tensor made by the program, and whether it may alias itself (an expand), which makes
// writes into it ill-defined (torch refuses them): such handles are never written.
struct Handle {
  Tensor t;
  bool overlapping = false;
};

// A step the generator drops for structural reasons (rank, a self-aliasing write target).
struct Refused {};

int64_t Wrap(int64_t v, int64_t n) { return n <= 0 ? 0 : ((v % n) + n) % n; }

// A size the program computes with: specialized while tracing (a guard), as Dynamo does with
// an int() of a symbolic size.
int64_t SizeOf(const Tensor& t, int64_t d) { return t.size(d).guard_int(); }

// Runs one step, appending what it makes to `h`. Throws coil::Error where eager refuses, and
// Refused where the generator does.
void Apply(const Step& st, std::vector<Handle>& h) {
  const Handle& A = h[st.a];
  const Handle& B = h[st.b];
  const Tensor& a = A.t;
  const Tensor& b = B.t;
  const int64_t rank = a.dim();
  auto push = [&](Tensor t, bool overlapping) { h.push_back({std::move(t), overlapping}); };
  auto writable = [&] {
    if (A.overlapping) throw Refused{};
  };
  switch (st.kind) {
    case kSlice: {
      if (rank == 0) throw Refused{};
      int64_t d = Wrap(st.i0, rank), n = SizeOf(a, d);
      int64_t start = Wrap(st.i1, n + 1), end = start + Wrap(st.i2, n + 1 - start);
      push(a.slice(d, start, end, 1 + (st.i2 & 1)), A.overlapping);
      return;
    }
    case kSelect: {
      if (rank == 0) throw Refused{};
      int64_t d = Wrap(st.i0, rank);
      push(a.select(d, Wrap(st.i1, SizeOf(a, d))), A.overlapping);
      return;
    }
    case kTranspose:
      if (rank < 2) throw Refused{};
      push(a.transpose(Wrap(st.i0, rank), Wrap(st.i1, rank)), A.overlapping);
      return;
    case kUnsqueeze: push(a.unsqueeze(Wrap(st.i0, rank + 1)), A.overlapping); return;
    case kReshapeFlat: push(a.reshape({SymInt(int64_t{-1})}), A.overlapping); return;
    case kViewFlat: push(a.view({SymInt(int64_t{-1})}), A.overlapping); return;
    case kDiagonal:
      if (rank < 2) throw Refused{};
      push(a.diagonal(st.i0 % 3 - 1, 0, 1), A.overlapping);
      return;
    case kNarrow: {
      if (rank == 0) throw Refused{};
      int64_t d = Wrap(st.i0, rank), n = SizeOf(a, d);
      int64_t start = Wrap(st.i1, n + 1);
      push(a.narrow(d, start, Wrap(st.i2, n + 1 - start)), A.overlapping);
      return;
    }
    case kExpand: {
      std::vector<SymInt> sizes = {SymInt(int64_t{2})};
      for (int64_t d = 0; d < rank; ++d) sizes.push_back(a.size(d));
      push(a.unsqueeze(0).expand(sizes), true);
      return;
    }
    case kAdd: push(a + b, false); return;
    case kScale: push(a * st.s, false); return;
    case kUnary:
      switch (st.i0 % 4) {
        case 0: push(relu(a), false); return;
        case 1: push(a.exp(), false); return;
        case 2: push(a.sigmoid(), false); return;
        default: push(-a, false); return;
      }
    case kClone: push(a.clone(), false); return;
    case kSumDim:
      if (rank == 0) throw Refused{};
      push(a.sum({Wrap(st.i0, rank)}, (st.i1 & 1) != 0), false);
      return;
    case kContiguous: push(a.contiguous(), false); return;  // coil's contiguous() copies
    case kAddInPlace: writable(); a.add_(b, st.s); return;
    case kMulInPlace: writable(); a.mul_scalar_(st.s); return;
    case kCopyInPlace: writable(); a.copy_(b); return;
    case kUnaryInPlace:
      writable();
      switch (st.i0 % 6) {
        case 0: a.relu_(); return;
        case 1: a.zero_(); return;
        case 2: a.fill_(st.s); return;
        case 3: a.clamp_(-1.0, 2.0, true, true); return;
        case 4: a.neg_(); return;
        default: a.sigmoid_(); return;
      }
    case kAddScalarInPlace: writable(); a.add_scalar_(st.s); return;
    case kWhereWrite: writable(); a.copy_(where(b > 0.0, b, a)); return;
    case kStepKinds: break;
  }
  std::abort();
}

std::vector<Tensor> Run(const Program& p, const Tensor& x, const Tensor& y) {
  std::vector<Handle> h = {{x, false}, {y, false}};
  for (const Step& st : p.steps) Apply(st, h);
  std::vector<Tensor> out;
  for (int k : p.outputs) out.push_back(h[k].t);
  return out;
}

Tensor Input(const std::vector<int64_t>& shape, int salt, bool requires_grad = false) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 7 + salt * 3) % 11) - 5.0);
  Tensor t = Tensor::FromValues(v, shape);
  if (requires_grad) t.set_requires_grad(true);
  return t;
}

// x's gradient of sum_k (k + 1) * sum(result k) over the results that require grad; empty when
// none does.
std::vector<double> GradientOfResults(const Tensor& x, const std::vector<Tensor>& results) {
  Tensor loss;
  for (size_t k = 0; k < results.size(); ++k) {
    if (!results[k].requires_grad()) continue;
    Tensor term = results[k].sum() * static_cast<double>(k + 1);
    loss = loss.defined() ? loss + term : term;
  }
  if (!loss.defined()) return {};
  loss.backward();
  return x.grad().defined() ? x.grad().tolist() : std::vector<double>{};
}

std::vector<int64_t> Shape(fuzz::ByteReader& r) {
  std::vector<int64_t> s(r.Range(0, 3));
  for (int64_t& d : s) d = r.Range(1, 4);
  return s;
}

// Makes a program whose every step the eager run accepted (on the inputs it will be run on).
Program Make(fuzz::ByteReader& r) {
  Program p;
  // Read without moving, so older corpus files keep their programs (a quarter of inputs).
  p.grad = (r.At(0) & 0x30) == 0x30;
  p.mode = static_cast<DynamicMode>(r.Range(0, 2));
  p.x_shape = Shape(r);
  p.y_shape = r.Bool() ? p.x_shape : Shape(r);
  std::vector<Handle> h = {{Input(p.x_shape, 0, p.grad), false}, {Input(p.y_shape, 1), false}};
  const int steps = static_cast<int>(r.Range(1, 10));
  for (int i = 0; i < steps && !r.exhausted(); ++i) {
    Step st;
    st.kind = static_cast<StepKind>(r.Range(0, kStepKinds - 1));
    st.a = static_cast<int>(r.Range(0, 255) % h.size());
    st.b = static_cast<int>(r.Range(0, 255) % h.size());
    st.i0 = r.Range(-4, 4);
    st.i1 = r.Range(-4, 4);
    st.i2 = r.Range(0, 4);
    st.s = static_cast<double>(r.Range(-6, 6)) / 2;
    try {
      Apply(st, h);
      p.steps.push_back(st);
    } catch (const Error&) {
    } catch (const Refused&) {
    }
  }
  for (int k = 0; k < static_cast<int>(h.size()); ++k) {
    if (k + 1 == static_cast<int>(h.size()) || r.Bool()) {
      p.outputs.push_back(k);
      p.output_overlaps.push_back(h[k].overlapping);
    }
  }
  return p;
}

std::string Describe(const Program& p) {
  auto shape = [](const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  };
  std::string d = "x: f32" + shape(p.x_shape) + (p.grad ? " (requires grad)" : "") +
                  ", y: f32" + shape(p.y_shape) + ", mode " +
                  std::to_string(static_cast<int>(p.mode)) + "\n";
  int next = 2;
  for (const Step& st : p.steps) {
    bool makes = st.kind < kAddInPlace;
    d += "  " + (makes ? "%" + std::to_string(next++) + " = " : std::string()) +
         kStepNames[st.kind] + "(%" + std::to_string(st.a) + ", %" + std::to_string(st.b) +
         ", " + std::to_string(st.i0) + ", " + std::to_string(st.i1) + ", " +
         std::to_string(st.i2) + ", " + std::to_string(st.s) + ")\n";
  }
  d += "  return";
  for (int k : p.outputs) d += " %" + std::to_string(k);
  return d + "\n";
}

[[noreturn]] void Finding(const Program& p, const std::string& where, const std::string& what) {
  std::fprintf(stderr, "FINDING (%s): %s\n%s", where.c_str(), what.c_str(), Describe(p).c_str());
  std::abort();
}

bool Close(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && std::fabs(a[i] - b[i]) > 1e-5 * (1 + std::fabs(a[i]))) return false;
  }
  return true;
}

std::string Values(const Tensor& t) {
  std::string s;
  for (double v : t.tolist()) s += std::to_string(v) + " ";
  return s;
}

std::string Sizes(const Tensor& t) {
  std::string s;
  for (const SymInt& d : t.sizes()) s += std::to_string(d.hint()) + " ";
  return s;
}

// Compares the two runs' outputs and inputs, then writes into each writable output in turn
// (both sides) and compares again: what a write reaches is the aliasing.
void Compare(const Program& p, const std::string& where, std::vector<Tensor> xe,
             std::vector<Tensor> oe, std::vector<Tensor> xc, std::vector<Tensor> oc) {
  if (oc.size() != oe.size()) Finding(p, where, "output count differs");
  auto check = [&](const std::string& when) {
    for (size_t k = 0; k < oe.size(); ++k) {
      if (Sizes(oe[k]) != Sizes(oc[k]))
        Finding(p, where, when + ": output " + std::to_string(k) + " has sizes " +
                              Sizes(oc[k]) + "where eager has " + Sizes(oe[k]));
      if (!Close(oe[k].tolist(), oc[k].tolist()))
        Finding(p, where, when + ": output " + std::to_string(k) + " differs");
    }
    for (size_t k = 0; k < xe.size(); ++k)
      if (!Close(xe[k].tolist(), xc[k].tolist()))
        Finding(p, where, when + ": input " + std::to_string(k) + " differs after the call: " +
                              Values(xc[k]) + "where eager has " + Values(xe[k]));
  };
  check("after the call");
  for (size_t k = 0; k < oe.size(); ++k) {
    if (p.output_overlaps[k]) continue;  // torch refuses writes into self-aliasing views
    oe[k].add_scalar_(100.0 + static_cast<double>(k));
    oc[k].add_scalar_(100.0 + static_cast<double>(k));
    check("after writing into output " + std::to_string(k));
  }
}

// Runs `p` eagerly on fresh inputs of the given shapes; false if eager refuses.
bool RunEager(const Program& p, const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
              std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, std::string& error) {
  inputs = {Input(xs, 0, p.grad), Input(ys, 1)};
  try {
    outputs = Run(p, inputs[0], inputs[1]);
    return true;
  } catch (const Error& e) {
    error = e.what();
    return false;
  }
}

void RunOneProgram(const uint8_t* data, size_t size);

void RunOne(const uint8_t* data, size_t size) {
  try {
    RunOneProgram(data, size);
  } catch (const Refused&) {
    // A replay the generator would have refused (it decided on the first shapes): skipped.
  }
}

void RunOneProgram(const uint8_t* data, size_t size) {
  fuzz::ByteReader r(data, size);
  Program p = Make(r);
  if (p.steps.empty()) return;
  if (std::getenv("COIL_FUZZ_VERBOSE") != nullptr) std::fprintf(stderr, "%s", Describe(p).c_str());
  for (const std::shared_ptr<Backend>& backend : {CpuBackend(), ReferenceBackend()}) {
    // The reference backend does not compile for training.
    if (p.grad && backend->name() == ReferenceBackend()->name()) continue;
    auto compiled = compile(
        [&p](const Tensor& x, const Tensor& y) { return Run(p, x, y); },
        {.dynamic = p.mode, .backend = backend, .name = "fuzz"});
    // Two calls on the program's shapes, then one with the first input dimension grown.
    for (int call = 0; call < 3; ++call) {
      std::vector<int64_t> xs = p.x_shape, ys = p.y_shape;
      if (call == 2) {
        if (xs.empty()) break;
        xs[0] += 2;
        if (!ys.empty() && ys[0] == p.x_shape[0]) ys[0] += 2;
      }
      const std::string where = backend->name() + ", call " + std::to_string(call + 1);
      std::vector<Tensor> xe, oe;
      std::string eager_error;
      const bool eager_ok = RunEager(p, xs, ys, xe, oe, eager_error);
      if (call < 2 && !eager_ok) return;  // the replay differs from the generation: skip
      std::vector<Tensor> xc = {Input(xs, 0, p.grad), Input(ys, 1)}, oc;
      bool compiled_ok = true;
      std::string error;
      try {
        oc = compiled(xc[0], xc[1]);
      } catch (const Error& e) {
        compiled_ok = false;
        error = e.what();
      }
      // Known and left (docs/fuzzing.md): a view() of a layout it cannot view, which eager
      // refuses, compiles where the sizes are symbolic (the trace does not know strides).
      // Likewise an in-place op whose input partly overlaps the written tensor only at the
      // grown shape (PyTorch's error, checked on eager strides the trace does not have).
      if (!eager_ok && compiled_ok &&
          (eager_error.find("view size is not compatible") != std::string::npos ||
           eager_error.find("refer to a single memory location") != std::string::npos)) {
        continue;
      }
      if (compiled_ok != eager_ok)
        Finding(p, where, eager_ok ? "compiled failed where eager ran: " + error
                                   : "compiled ran where eager failed: " + eager_error);
      if (!eager_ok) continue;
      if (call == 2) {
        // The grown shapes: the program's handles may differ, so compare values only.
        if (oc.size() != oe.size()) Finding(p, where, "output count differs");
        for (size_t k = 0; k < oe.size(); ++k)
          if (!Close(oe[k].tolist(), oc[k].tolist()))
            Finding(p, where, "output " + std::to_string(k) + " differs");
        for (size_t k = 0; k < xe.size(); ++k)
          if (!Close(xe[k].tolist(), xc[k].tolist()))
            Finding(p, where, "input " + std::to_string(k) + " differs after the call");
        continue;
      }
      if (p.grad) {
        // Writes into results are eager errors where they require grad: values and x's
        // gradient are compared instead of the aliasing.
        if (oc.size() != oe.size()) Finding(p, where, "output count differs");
        for (size_t k = 0; k < oe.size(); ++k) {
          if (!Close(oe[k].tolist(), oc[k].tolist()))
            Finding(p, where, "output " + std::to_string(k) + " differs");
          if (oe[k].requires_grad() != oc[k].requires_grad())
            Finding(p, where, "output " + std::to_string(k) + " requires_grad differs");
        }
        std::vector<double> ge, gc;
        try {
          ge = GradientOfResults(xe[0], oe);
        } catch (const Error&) {
          // Known and left: the eager tape saves every input of an op, so a later in-place
          // write into one PyTorch's formula does not need (z = x + y; y.sigmoid_()) makes
          // eager's backward refuse (docs/fuzzing.md). Nothing to compare.
          continue;
        }
        try {
          gc = GradientOfResults(xc[0], oc);
        } catch (const Error& e) {
          Finding(p, where, std::string("compiled backward failed where eager's ran: ") + e.what());
        }
        if (!Close(ge, gc)) Finding(p, where, "x's gradient differs: " + std::to_string(gc.size()) +
                                                  " values where eager has " +
                                                  std::to_string(ge.size()));
        continue;
      }
      Compare(p, where, xe, oe, xc, oc);
    }
  }
}

}  // namespace
}  // namespace coil

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  coil::RunOne(data, size);
  return 0;
}
