// LoadReport (load.h): detect, parse with the protobuf runtime, wrap single stages.
#include "inspector_web/core/load.h"

namespace coil::inspector {
namespace {

template <typename M>
bool Parse(std::string_view bytes, M* m) {
  return bytes.size() <= static_cast<size_t>(INT32_MAX) &&
         m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

bool LoadReport(std::string_view bytes, std::string_view file_name, proto::CompileReport* report,
                LoadInfo* info) {
  report->Clear();
  *info = LoadInfo();
  std::string name = file_name.empty() ? std::string("file") : std::string(file_name);
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    info->error = name + ": too large (" + std::to_string(bytes.size()) +
                  " bytes; protobuf messages are limited to 2 GiB)";
    return false;
  }
  Detection d = DetectMessage(bytes, file_name);
  if (!d.ok) {
    info->error = d.error;
    return false;
  }
  info->kind = d.kind;
  if (d.unknown_fields > 0) {
    info->warning = name + ": " + std::to_string(d.unknown_fields) + " field value(s) unknown to " +
                    "this inspector's " + MessageKindName(d.kind) + " (written by a newer coil?)";
  }
  bool ok = false;
  proto::StageArtifact* stage = nullptr;
  if (d.kind != MessageKind::kCompileReport) {
    report->set_model(name);
    stage = report->add_stages();
  }
  switch (d.kind) {
    case MessageKind::kCompileReport: ok = Parse(bytes, report); break;
    case MessageKind::kGraph:
      stage->set_stage("graph");
      ok = Parse(bytes, stage->mutable_graph());
      break;
    case MessageKind::kSchedule:
      stage->set_stage("schedule");
      ok = Parse(bytes, stage->mutable_schedule());
      break;
    case MessageKind::kKernelModule:
      stage->set_stage("kernel_module");
      ok = Parse(bytes, stage->mutable_kernel_module());
      break;
    case MessageKind::kCaptureResult:
      stage->set_stage("capture");
      ok = Parse(bytes, stage->mutable_capture());
      break;
    case MessageKind::kAutogradResult:
      stage->set_stage("autograd");
      ok = Parse(bytes, stage->mutable_autograd());
      break;
  }
  if (!ok) {
    // The wire check passed, so this is a limit of the runtime rather than broken bytes.
    info->error = name + ": the protobuf runtime rejected this " + MessageKindName(d.kind) +
                  " although its wire format checks out";
    report->Clear();
    return false;
  }
  return true;
}

}  // namespace coil::inspector
