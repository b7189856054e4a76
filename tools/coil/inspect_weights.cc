// DropReportWeights (inspect_weights.h).
#include "tools/coil/inspect_weights.h"

#include <vector>

#include "absl/status/status.h"
#include "ir/constant_refs.h"
#include "ir/proto/report.pb.h"

namespace coil::cli {
namespace {

void DropGraphWeights(proto::Graph& g, WeightsDropped& d) {
  for (proto::Constant& c : *g.mutable_constants()) {
    if (!c.has_raw() || static_cast<int64_t>(c.raw().size()) < kWeightBytes) continue;
    proto::ConstantRef ref = RefOf(c.raw());
    d.constants += 1;
    d.bytes += static_cast<int64_t>(c.raw().size());
    *c.mutable_by_reference() = std::move(ref);  // clears raw (one field of the oneof)
  }
}

}  // namespace

absl::StatusOr<std::string> DropReportWeights(absl::string_view report, WeightsDropped* dropped) {
  proto::CompileReport r;
  if (!r.ParseFromArray(report.data(), static_cast<int>(report.size()))) {
    return absl::InvalidArgumentError("not a CompileReport: cannot leave its weights out");
  }
  WeightsDropped d;
  for (proto::StageArtifact& a : *r.mutable_stages()) {
    std::vector<proto::Graph*> graphs;
    switch (a.payload_case()) {
      case proto::StageArtifact::kGraph: graphs = {a.mutable_graph()}; break;
      case proto::StageArtifact::kCapture:
        for (proto::Graph& g : *a.mutable_capture()->mutable_graphs()) graphs.push_back(&g);
        break;
      case proto::StageArtifact::kAutograd:
        graphs = {a.mutable_autograd()->mutable_joint(), a.mutable_autograd()->mutable_forward(),
                  a.mutable_autograd()->mutable_backward()};
        break;
      case proto::StageArtifact::kSchedule: graphs = {a.mutable_schedule()->mutable_graph()}; break;
      case proto::StageArtifact::kKernelModule:
        graphs = {a.mutable_kernel_module()->mutable_schedule()->mutable_graph()};
        break;
      default: break;
    }
    for (proto::Graph* g : graphs) DropGraphWeights(*g, d);
  }
  if (dropped != nullptr) *dropped = d;
  return r.SerializeAsString();
}

}  // namespace coil::cli
