// ListStages (stages.h).
#include "inspector_web/core/stages.h"

#include <set>

#include "inspector_web/core/compile_index.h"

namespace coil::inspector {
namespace {

std::string SafeKey(const std::string& name) {
  std::string key;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    key += ok ? c : '_';
  }
  return key.empty() ? std::string("stage") : key;
}

// Stages are rare (a dozen per report) so a linear set of used keys is fine.
int CaptureArtifacts(const proto::CompileReport& report) {
  int n = 0;
  for (const proto::StageArtifact& a : report.stages()) n += a.has_capture() ? 1 : 0;
  return n;
}

std::string UniqueKey(const std::string& base, std::set<std::string>* used) {
  std::string key = base;
  for (int n = 2; used->count(key) != 0; ++n) key = base + "-" + std::to_string(n);
  used->insert(key);
  return key;
}

}  // namespace

const char* StageKindName(StageKind kind) {
  switch (kind) {
    case StageKind::kGraph: return "graph";
    case StageKind::kCapture: return "capture";
    case StageKind::kAutograd: return "autograd";
    case StageKind::kSchedule: return "schedule";
    case StageKind::kKernelModule: return "kernel_module";
  }
  return "?";
}

std::vector<Stage> ListStages(const proto::CompileReport& report) {
  std::vector<Stage> stages;
  std::set<std::string> used;
  for (int a = 0; a < report.stages_size(); ++a) {
    const proto::StageArtifact& artifact = report.stages(a);
    std::string base = SafeKey(artifact.stage());
    Stage s;
    s.artifact_index = a;
    s.seconds = artifact.seconds();
    switch (artifact.payload_case()) {
      case proto::StageArtifact::kGraph:
        s.kind = StageKind::kGraph;
        s.graph = &artifact.graph();
        s.key = UniqueKey(base, &used);
        s.title = artifact.stage();
        stages.push_back(s);
        break;
      case proto::StageArtifact::kCapture: {
        const proto::CaptureResult& c = artifact.capture();
        s.kind = StageKind::kCapture;
        s.capture = &c;
        if (c.graphs_size() == 0) {
          s.graph = &proto::Graph::default_instance();
          s.key = UniqueKey(base, &used);
          s.title = artifact.stage() + " (no graph)";
          stages.push_back(s);
          break;
        }
        // Which compile it is, once the function has recompiled (compile_index.h).
        const int compile = CompileNumber(c);
        const std::string name =
            compile > 1 || CaptureArtifacts(report) > 1
                ? artifact.stage() + " · compile " + std::to_string(compile)
                : artifact.stage();
        for (int g = 0; g < c.graphs_size(); ++g) {
          Stage t = s;
          t.graph = &c.graphs(g);
          t.capture_index = g;
          t.key = UniqueKey(base + "." + std::to_string(g), &used);
          t.title = c.graphs_size() == 1 ? name
                                         : name + " (graph " + std::to_string(g + 1) + " of " +
                                               std::to_string(c.graphs_size()) + ")";
          stages.push_back(t);
        }
        break;
      }
      case proto::StageArtifact::kAutograd: {
        const proto::AutogradResult& ag = artifact.autograd();
        s.kind = StageKind::kAutograd;
        s.autograd = &ag;
        const std::pair<const char*, const proto::Graph*> parts[] = {
            {"joint", &ag.joint()}, {"forward", &ag.forward()}, {"backward", &ag.backward()}};
        for (const auto& [part, graph] : parts) {
          Stage t = s;
          t.graph = graph;
          t.autograd_part = part;
          t.key = UniqueKey(base + "." + part, &used);
          t.title = artifact.stage() + ": " + part;
          stages.push_back(t);
        }
        break;
      }
      case proto::StageArtifact::kSchedule:
        s.kind = StageKind::kSchedule;
        s.schedule = &artifact.schedule();
        s.graph = &artifact.schedule().graph();
        s.key = UniqueKey(base, &used);
        s.title = artifact.stage();
        stages.push_back(s);
        break;
      case proto::StageArtifact::kKernelModule:
        s.kind = StageKind::kKernelModule;
        s.kernel_module = &artifact.kernel_module();
        s.schedule = &artifact.kernel_module().schedule();
        s.graph = &artifact.kernel_module().schedule().graph();
        s.key = UniqueKey(base, &used);
        s.title = artifact.stage();
        stages.push_back(s);
        break;
      case proto::StageArtifact::PAYLOAD_NOT_SET: break;
    }
  }
  return stages;
}

}  // namespace coil::inspector
