// aten.mm and aten.bmm of viewed operands (ExternTensor::view: a transpose, attention's head
// split, a slice) through oneDNN without a copy (dnnl_matmul.h: MmViewed, BmmViewed).
//
// aten.mm: each operand must be a strided matrix (one factor per dim) with unit stride along
// its rows or its columns: dnnl_sgemm reads it as 'N' or 'T' with that leading dimension.
// aten.bmm: the batch dim may be several factors (the head split's B*H: strides S*H*D and D);
// the operands' and the output's batch factors are refined to one common list of sizes, and
// the call becomes one matmul primitive of rank 2 + that list's length over strided memory
// descriptors (the output too: the head merge's result written as [B, S, H*D]), f32 or bf16
// (--precision bf16). Anything else
// (a bf16 aten.mm, too many dims, no fast oneDNN implementation) declines: RunExtern then
// gathers the views into copies.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/internal/dnnl_matmul.h"
#include "runtime/cpu/internal/dnnl_plans.h"

namespace coil::cpu::dnnl_internal {
namespace {

// One dim of a view as a single stride (no factor: size 1, any stride will do).
std::optional<int64_t> OneStride(const std::vector<ExternFactor>& dim) {
  if (dim.empty()) return 0;
  if (dim.size() == 1) return dim[0].stride;
  return std::nullopt;
}

struct Matrix {
  char op;     // 'N': row-major with leading dimension ld; 'T': its transpose
  int64_t ld;
};

// `t` ([rows, cols], viewed or not) as sgemm reads it, or nullopt.
std::optional<Matrix> AsMatrix(const ExternTensor& t, int64_t rows, int64_t cols) {
  if (t.view.empty()) return t.transposed ? Matrix{'T', rows} : Matrix{'N', cols};
  if (t.transposed || t.view.size() != 2) return std::nullopt;
  std::optional<int64_t> rs = OneStride(t.view[0]), cs = OneStride(t.view[1]);
  if (!rs.has_value() || !cs.has_value()) return std::nullopt;
  if (cols == 1 || *cs == 1) {
    const int64_t ld = rows == 1 ? cols : *rs;
    if (ld >= std::max<int64_t>(cols, 1)) return Matrix{'N', ld};
  }
  if (rows == 1 || *rs == 1) {
    const int64_t ld = cols == 1 ? rows : *cs;
    if (ld >= std::max<int64_t>(rows, 1)) return Matrix{'T', ld};
  }
  return std::nullopt;
}

// The factors of a (b, r, c) operand: its view's, or contiguous ones.
std::vector<std::vector<ExternFactor>> Factors3(const ExternTensor& t) {
  if (!t.view.empty()) return t.view;
  const int64_t b = t.shape[0], r = t.shape[1], c = t.shape[2];
  std::vector<std::vector<ExternFactor>> f(3);
  if (b != 1) f[0] = {{b, r * c}};
  if (r != 1) f[1] = {{r, c}};
  if (c != 1) f[2] = {{c, 1}};
  return f;
}

// Splits the factor lists in `lists` (each multiplying to the same count) into one common list
// of sizes: false when a factor's size does not divide into the others'.
bool Refine(std::vector<std::vector<ExternFactor>*> lists, std::vector<int64_t>& sizes) {
  std::vector<std::vector<ExternFactor>> out(lists.size());
  std::vector<size_t> at(lists.size(), 0);
  std::vector<std::vector<ExternFactor>> rest;
  for (auto* l : lists) rest.push_back(*l);
  while (true) {
    bool done = true;
    int64_t s = 0;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (at[i] < rest[i].size()) {
        done = false;
        s = s == 0 ? rest[i][at[i]].size : std::min(s, rest[i][at[i]].size);
      }
    }
    if (done) break;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (at[i] >= rest[i].size()) return false;  // the counts differ: not this caller's case
      ExternFactor& f = rest[i][at[i]];
      if (f.size % s != 0) return false;
      out[i].push_back({s, f.stride * (f.size / s)});
      if (f.size == s) {
        ++at[i];
      } else {
        f.size /= s;
      }
    }
    sizes.push_back(s);
  }
  for (size_t i = 0; i < lists.size(); ++i) *lists[i] = std::move(out[i]);
  return true;
}

// A strided memory descriptor.
dnnl_memory_desc_t StridedDesc(const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides, dnnl_data_type_t type) {
  dnnl_memory_desc_t md;
  dnnl_dims_t d, s;
  std::copy(dims.begin(), dims.end(), d);
  std::copy(strides.begin(), strides.end(), s);
  Check(Api().memory_desc_init_by_strides(&md, static_cast<int>(dims.size()), d, type, s),
        "memory_desc_init_by_strides");
  return md;
}

struct ViewedBmmPlan {
  DnnlPrimitive prim;  // null: oneDNN has only its reference implementation (declined)
  DnnlMemory x, y, out;
};

struct ViewedBmmState : ExternState {
  PlanCache<ViewedBmmPlan> plans;
};

}  // namespace

absl::StatusOr<bool> MmViewed(const ExternArgs& a) {
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.dtype != proto::FLOAT32 || y.dtype != proto::FLOAT32 || out.dtype != proto::FLOAT32) {
    return false;
  }
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  std::optional<Matrix> xm = AsMatrix(x, m, k), ym = AsMatrix(y, k, n);
  if (!xm.has_value() || !ym.has_value() || Dnnl() == nullptr) return false;
  const int threads = ThreadsFor(a, 2.0 * m * n * k);
  Api().omp_set_num_threads(threads);
  dnnl_status_t s = Api().sgemm(xm->op, ym->op, m, n, k, 1.0f,
                                reinterpret_cast<const float*>(x.data), xm->ld,
                                reinterpret_cast<const float*>(y.data), ym->ld, 0.0f,
                                reinterpret_cast<float*>(out.data), n);
  if (s != dnnl_success) return absl::InternalError(absl::StrCat("dnnl_sgemm failed: ", s));
  return true;
}

absl::StatusOr<bool> BmmViewed(const ExternArgs& a) {
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  PrimitiveTypes t;  // f32, or bf16 operands with a bf16 / f32 output (--precision bf16)
  if (!GetPrimitiveTypes(a, t)) return false;
  if ((!x.view.empty() && x.view.size() != 3) || (!y.view.empty() && y.view.size() != 3) ||
      (!out.view.empty() && out.view.size() != 3)) {
    return false;
  }
  const int64_t m = x.shape[1], k = x.shape[2], n = y.shape[2];
  std::vector<std::vector<ExternFactor>> xf = Factors3(x), yf = Factors3(y), of = Factors3(out);
  std::optional<int64_t> xr = OneStride(xf[1]), xc = OneStride(xf[2]), yr = OneStride(yf[1]),
                         yc = OneStride(yf[2]);
  std::optional<int64_t> outr = OneStride(of[1]), outc = OneStride(of[2]);
  if (!xr || !xc || !yr || !yc || !outr || !outc) return false;
  std::vector<int64_t> batch;
  if (!Refine({&xf[0], &yf[0], &of[0]}, batch) || batch.size() + 2 > DNNL_MAX_NDIMS) {
    return false;
  }
  if (Dnnl() == nullptr) return false;
  std::vector<int64_t> xd = batch, yd = batch, od = batch, xs, ys, os;
  for (size_t i = 0; i < batch.size(); ++i) {
    xs.push_back(xf[0][i].stride);
    ys.push_back(yf[0][i].stride);
    os.push_back(of[0][i].stride);
  }
  xd.insert(xd.end(), {m, k});
  yd.insert(yd.end(), {k, n});
  od.insert(od.end(), {m, n});
  // A dim of size 1 has no factor (stride 0 from OneStride): any stride addresses it; the
  // row-major one keeps the descriptors ordinary.
  const int64_t xc1 = k == 1 ? 1 : *xc, yc1 = n == 1 ? 1 : *yc, oc1 = n == 1 ? 1 : *outc;
  xs.insert(xs.end(), {m == 1 ? k * xc1 : *xr, xc1});
  ys.insert(ys.end(), {k == 1 ? n * yc1 : *yr, yc1});
  os.insert(os.end(), {m == 1 ? n * oc1 : *outr, oc1});
  int64_t b = 1;
  for (int64_t s : batch) b *= s;
  const int threads = ThreadsFor(a, 2.0 * b * m * n * k);
  Api().omp_set_num_threads(threads);
  PlanKey key;
  AppendKey(key, xd);
  AppendKey(key, xs);
  AppendKey(key, yd);
  AppendKey(key, ys);
  AppendKey(key, os);
  AppendKey(key, {n, threads, t.src, t.dst});
  bool ran = true;
  absl::StatusOr<bool> status = Guarded("aten.bmm", [&] {
    std::unique_ptr<ViewedBmmPlan> one_off;
    ViewedBmmPlan* plan =
        FindPlan(StateOf<ViewedBmmState>(a.state), std::move(key), one_off, [&] {
          const dnnl_memory_desc_t xmd = StridedDesc(xd, xs, t.src),
                                   ymd = StridedDesc(yd, ys, t.src),
                                   omd = StridedDesc(od, os, t.dst);
          auto p = std::make_unique<ViewedBmmPlan>();
          dnnl_matmul_desc_t desc;
          Check(Api().matmul_desc_init(&desc, &xmd, &ymd, nullptr, &omd), "matmul_desc_init");
          DnnlPrimitiveDesc pd = FastPrimitiveDesc(&desc, nullptr);
          if (pd == nullptr) return p;
          dnnl_primitive_t prim = nullptr;
          Check(Api().primitive_create(&prim, pd.get()), "primitive_create");
          p->prim = DnnlPrimitive(prim);
          p->x = Memory(xmd, DNNL_MEMORY_NONE);
          p->y = Memory(ymd, DNNL_MEMORY_NONE);
          p->out = Memory(omd, DNNL_MEMORY_NONE);
          return p;
        });
    if (plan->prim == nullptr) {
      ran = false;
      return;
    }
    SetData(plan->x.get(), x.data);
    SetData(plan->y.get(), y.data);
    SetData(plan->out.get(), out.data);
    Execute(plan->prim.get(), {{DNNL_ARG_SRC, plan->x.get()},
                               {DNNL_ARG_WEIGHTS, plan->y.get()},
                               {DNNL_ARG_DST, plan->out.get()}});
    Check(Api().stream_wait(Stream()), "stream_wait");
  });
  if (!status.ok()) return status;
  return ran;
}

}  // namespace coil::cpu::dnnl_internal
