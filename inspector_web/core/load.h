// LoadReport: any coil protobuf file as a CompileReport, or an error for the page to show.
//
//   proto::CompileReport report;
//   LoadInfo info;
//   if (!LoadReport(bytes, "report.pb", &report, &info)) show(info.error);
//
// A single stage file becomes a one-stage report whose stage is named after the message:
// Graph -> "graph", Schedule -> "schedule", KernelModule -> "kernel_module",
// CaptureResult -> "capture", AutogradResult -> "autograd". The report's model is the file
// name. Works with the full protobuf runtime (native) and protobuf-lite (wasm).
#ifndef COIL_INSPECTOR_WEB_CORE_LOAD_H_
#define COIL_INSPECTOR_WEB_CORE_LOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "inspector_web/core/detect.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {

struct LoadInfo {
  MessageKind kind = MessageKind::kCompileReport;  // what the file held
  std::string error;                               // set when loading failed
  std::string warning;  // e.g. unknown fields from a newer writer; empty if none
};

bool LoadReport(std::string_view bytes, std::string_view file_name, proto::CompileReport* report,
                LoadInfo* info);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_LOAD_H_
