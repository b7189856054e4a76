// ScheduleText (schedule_text.h).
#include "inductor/testing/schedule_text.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace coil::inductor {
namespace {

std::string Sym(const proto::SymExpr& p) {
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  return e.ok() ? e->ToString() : "?";
}

std::string Syms(const google::protobuf::RepeatedPtrField<proto::SymExpr>& ps) {
  std::vector<std::string> parts;
  for (const proto::SymExpr& p : ps) parts.push_back(Sym(p));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Ids(const google::protobuf::RepeatedField<int32_t>& ids, const char* prefix) {
  std::vector<std::string> parts;
  for (int id : ids) parts.push_back(absl::StrCat(prefix, id));
  return absl::StrJoin(parts, ", ");
}

std::string BufferKind(proto::Buffer::Kind k) {
  switch (k) {
    case proto::Buffer::INPUT: return "input";
    case proto::Buffer::CONSTANT: return "constant";
    case proto::Buffer::INTERMEDIATE: return "intermediate";
    case proto::Buffer::OUTPUT: return "output";
    default: return "?";
  }
}

std::string KernelKind(proto::Kernel::Kind k) {
  switch (k) {
    case proto::Kernel::POINTWISE: return "pointwise";
    case proto::Kernel::REDUCTION: return "reduction";
    case proto::Kernel::EXTERN: return "extern";
    default: return "?";
  }
}

std::string ExprText(const proto::Expr& e) {
  const std::string dt(DTypeName(e.dtype()));
  const std::string index = absl::StrCat("b", e.buffer(), Syms(e.index()));
  switch (e.kind()) {
    case proto::Expr::LOAD:
      return absl::StrCat("e", e.id(), " = load ", index,
                          e.mask() != 0 ? absl::StrCat(" if e", e.mask(), " else ", e.literal())
                                        : "",
                          " : ", dt);
    case proto::Expr::LITERAL:
      return absl::StrCat("e", e.id(), " = ",
                          IsFloating(e.dtype()) ? absl::StrCat(e.literal())
                                                : absl::StrCat(e.int_literal()),
                          " : ", dt);
    case proto::Expr::INDEX:
      return absl::StrCat("e", e.id(), " = index ", Sym(e.value()), " : ", dt);
    case proto::Expr::APPLY:
      return absl::StrCat("e", e.id(), " = ", e.op(), "(", Ids(e.args(), "e"), ") : ", dt);
    case proto::Expr::REDUCE:
      return absl::StrCat("e", e.id(), " = reduce ", e.op(), "(", Ids(e.args(), "e"), ") : ",
                          dt);
    case proto::Expr::STORE:
      return absl::StrCat("store ", index, " = ", Ids(e.args(), "e"));
    case proto::Expr::RANDOM:
      return absl::StrCat("e", e.id(), " = random seed ", e.seed(), " at ", Sym(e.value()),
                          " : ", dt);
    default:
      return absl::StrCat("e", e.id(), " = ?");
  }
}

}  // namespace

std::string ScheduleText(const proto::Schedule& s) {
  std::string out = absl::StrCat("schedule @", s.graph().name(), "\n");
  absl::StrAppend(&out, "buffers:\n");
  for (const proto::Buffer& b : s.buffers()) {
    absl::StrAppend(&out, "  b", b.id(), " '", b.name(), "' ", BufferKind(b.kind()), " ",
                    DTypeName(b.dtype()), Syms(b.shape()));
    if (b.kind() == proto::Buffer::INTERMEDIATE) {
      absl::StrAppend(&out, " at arena ", Sym(b.arena_offset()));
    }
    if (b.reuses() != 0) absl::StrAppend(&out, " reuses b", b.reuses());
    if (b.in_place()) absl::StrAppend(&out, " in place");
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "kernels:\n");
  for (const proto::Kernel& k : s.kernels()) {
    absl::StrAppend(&out, "  k", k.id(), " '", k.name(), "' ", KernelKind(k.kind()));
    if (k.kind() == proto::Kernel::EXTERN) {
      absl::StrAppend(&out, " ", k.extern_op(), "(", Ids(k.extern_inputs(), "b"), ") -> b",
                      k.extern_output());
    }
    absl::StrAppend(&out, " over ", Syms(k.ranges()), "; reads ", Ids(k.reads(), "b"),
                    "; writes ", Ids(k.writes(), "b"), "; from ",
                    absl::StrJoin(k.source_ops(), ", "), "\n");
    for (const proto::Loop& l : k.loops()) {
      const std::string ranges =
          l.ranges_size() > 0 ? absl::StrCat(" ", Syms(l.ranges())) : std::string();
      absl::StrAppend(&out, "    loop", ranges, ":\n");
      for (const proto::Expr& e : l.body()) absl::StrAppend(&out, "      ", ExprText(e), "\n");
    }
  }
  absl::StrAppend(&out, "fusion decisions:\n");
  for (const proto::FusionDecision& d : s.decisions()) {
    absl::StrAppend(&out, "  ", d.accepted() ? "accepted " : "rejected ", d.pass(), " ",
                    d.kind(), " [", absl::StrJoin(d.kernels(), ", "), "]: ", d.reason(), "\n");
  }
  absl::StrAppend(&out, "memory plan: arena ", Sym(s.memory_plan().arena_bytes()), " bytes (",
                  s.memory_plan().arena_bytes_hint(), " at hints), peak live ",
                  s.memory_plan().peak_live_bytes_hint(), ", without reuse ",
                  s.memory_plan().unplanned_bytes_hint(), "\n");
  absl::StrAppend(&out, "outputs: ", Ids(s.outputs(), "b"), "\n");
  return out;
}

}  // namespace coil::inductor
