// WriteCompileDump (compile_dump.h): the report and the per-stage files of `coil compile --dump`.
#include "tools/coil/compile_dump.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "inductor/schedule.h"
#include "ir/constant_refs.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "tools/coil/graph_io.h"
#include "tools/driver/driver.h"

namespace coil::cli {
namespace {

// Every kernel's LLVM IR, one function after another (for reading: not one parseable module).
std::string KernelsText(const proto::KernelModule& module) {
  std::string out = absl::StrCat("; coil compile: LLVM IR of every kernel after optimization\n",
                                 "; target ", module.target_triple(), ", cpu ", module.cpu(),
                                 ", ", module.compiler_version(), ", ", module.options(), "\n");
  for (const proto::CompiledKernel& k : module.kernels()) {
    absl::StrAppend(&out, "\n; kernel ", k.kernel_id(), " '", k.name(), "' -> @", k.symbol(),
                    "\n", k.source());
  }
  if (!module.wrapper_source().empty()) {
    absl::StrAppend(&out, "\n; wrapper @", module.wrapper_symbol(), "\n",
                    module.wrapper_source());
  }
  return out;
}

}  // namespace

absl::StatusOr<int> WriteCompileDump(proto::CompileReport& report, const std::string& dir) {
  driver::StoreConstantsOnce(report);
  // Stage files stand alone: constants the report stores once are put back into each.
  int files = 0;
  ConstantStore constants;
  for (int i = 0; i < report.stages_size(); ++i) {
    const proto::StageArtifact& a = report.stages(i);
    const std::string base = absl::StrFormat("%s/%02d_%s", dir, i + 1, a.stage());
    std::vector<std::pair<std::string, std::string>> out;
    if (a.has_graph()) {
      proto::Graph graph = a.graph();
      if (absl::Status s = ResolveConstantReferences(graph, constants); !s.ok()) return s;
      out.push_back({".pb", graph.SerializeAsString()});
      absl::StatusOr<Graph> g = Graph::FromProto(graph);
      if (g.ok()) out.push_back({".txt", PrintGraph(*g)});
    } else if (a.has_schedule()) {
      proto::Schedule schedule = a.schedule();
      if (absl::Status s = ResolveConstantReferences(*schedule.mutable_graph(), constants);
          !s.ok()) {
        return s;
      }
      out.push_back({".schedule.pb", schedule.SerializeAsString()});
      out.push_back({".txt", inductor::SummarizeSchedule(schedule)});
    } else if (a.has_kernel_module()) {
      proto::KernelModule module = a.kernel_module();
      if (absl::Status s = ResolveConstantReferences(
              *module.mutable_schedule()->mutable_graph(), constants);
          !s.ok()) {
        return s;
      }
      out.push_back({".module.pb", module.SerializeAsString()});
      out.push_back({".kernels.ll", KernelsText(module)});
      out.push_back({".o", module.object_code()});
    } else if (a.has_autograd()) {
      // The AutogradResult (the inspector opens it alone) and its three graphs as text IR.
      proto::AutogradResult autograd = a.autograd();
      for (proto::Graph* g : {autograd.mutable_joint(), autograd.mutable_forward(),
                              autograd.mutable_backward()}) {
        if (absl::Status s = ResolveConstantReferences(*g, constants); !s.ok()) return s;
      }
      out.push_back({".autograd.pb", autograd.SerializeAsString()});
      for (const auto& [part, graph] :
           {std::pair<const char*, const proto::Graph*>{"joint", &autograd.joint()},
            {"forward", &autograd.forward()},
            {"backward", &autograd.backward()}}) {
        absl::StatusOr<Graph> g = Graph::FromProto(*graph);
        if (g.ok()) out.push_back({absl::StrCat(".", part, ".txt"), PrintGraph(*g)});
      }
    }
    for (const auto& [suffix, bytes] : out) {
      if (absl::Status s = WriteFile(base + suffix, bytes); !s.ok()) return s;
      ++files;
    }
    const proto::Graph* held = a.has_graph()      ? &a.graph()
                               : a.has_schedule() ? &a.schedule().graph()
                               : a.has_kernel_module() ? &a.kernel_module().schedule().graph()
                                                       : nullptr;
    if (held != nullptr) constants.AddGraph(*held);
  }
  const std::string path = dir + "/report.pb";
  if (absl::Status s = WriteFile(path, report.SerializeAsString()); !s.ok()) return s;
  return files;
}

}  // namespace coil::cli
