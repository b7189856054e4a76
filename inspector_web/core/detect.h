// DetectMessage: which coil message a file holds, or why it holds none.
//
// Protobuf bytes do not name their type. A file may be a CompileReport (report.pb) or any one
// stage's artifact: Graph, Schedule, KernelModule, CaptureResult, AutogradResult. Each
// candidate is checked with CheckWire; among those that fit, the one whose fields the schema
// knows best wins (no unknown fields first, then the most known fields, then the file name's
// hint, e.g. "report" -> CompileReport). When none fits, the error comes from the candidate
// that read furthest, so a truncated report says where it was cut:
//   "report.pb: not a coil protobuf (truncated at byte 1234: a 52311-byte field with 1000
//    bytes left, in CompileReport.stages[3].kernel_module)"
#ifndef COIL_INSPECTOR_WEB_CORE_DETECT_H_
#define COIL_INSPECTOR_WEB_CORE_DETECT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace coil::inspector {

enum class MessageKind {
  kCompileReport,
  kGraph,
  kSchedule,
  kKernelModule,
  kCaptureResult,
  kAutogradResult,
};

// "CompileReport", "Graph", ...
const char* MessageKindName(MessageKind kind);

struct Detection {
  bool ok = false;
  MessageKind kind = MessageKind::kCompileReport;
  // When !ok: the whole message for the user, starting with the file name.
  std::string error;
  // When ok: field values the schema does not know (a newer writer); shown as a warning.
  int64_t unknown_fields = 0;
};

Detection DetectMessage(std::string_view bytes, std::string_view file_name);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_DETECT_H_
