// DetectMessage (detect.h): every candidate type checked, the best fit chosen.
#include "inspector_web/core/detect.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "inspector_web/core/check.h"
#include "inspector_web/core/schema.h"
#include "inspector_web/core/wire_check.h"

namespace coil::inspector {
namespace {

constexpr MessageKind kKinds[] = {
    MessageKind::kCompileReport, MessageKind::kSchedule,       MessageKind::kKernelModule,
    MessageKind::kCaptureResult, MessageKind::kAutogradResult, MessageKind::kGraph,
};

// The kind a file name suggests, if any ("gpt.schedule.pb" -> Schedule).
bool NameHint(std::string_view file_name, MessageKind* kind) {
  std::string name(file_name);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct Hint {
    const char* word;
    MessageKind kind;
  };
  static constexpr Hint kHints[] = {
      {"report", MessageKind::kCompileReport},  {"schedule", MessageKind::kSchedule},
      {"kernel", MessageKind::kKernelModule},   {"module", MessageKind::kKernelModule},
      {"capture", MessageKind::kCaptureResult}, {"autograd", MessageKind::kAutogradResult},
      {"graph", MessageKind::kGraph},
  };
  for (const Hint& h : kHints) {
    if (name.find(h.word) != std::string::npos) {
      *kind = h.kind;
      return true;
    }
  }
  return false;
}

std::string Describe(const WireCheck& c) {
  std::string s = c.problem + " at byte " + std::to_string(c.offset);
  if (!c.detail.empty()) s += ": " + c.detail;
  if (!c.path.empty()) s += ", in " + c.path;
  return s;
}

}  // namespace

const char* MessageKindName(MessageKind kind) {
  switch (kind) {
    case MessageKind::kCompileReport: return "CompileReport";
    case MessageKind::kGraph: return "Graph";
    case MessageKind::kSchedule: return "Schedule";
    case MessageKind::kKernelModule: return "KernelModule";
    case MessageKind::kCaptureResult: return "CaptureResult";
    case MessageKind::kAutogradResult: return "AutogradResult";
  }
  return "?";
}

Detection DetectMessage(std::string_view bytes, std::string_view file_name) {
  Detection d;
  std::string name = file_name.empty() ? std::string("file") : std::string(file_name);
  if (bytes.empty()) {
    d.error = name + ": empty file (0 bytes), not a coil protobuf";
    return d;
  }
  MessageKind hint = MessageKind::kCompileReport;
  bool has_hint = NameHint(file_name, &hint);

  struct Candidate {
    MessageKind kind;
    WireCheck check;
  };
  std::vector<Candidate> candidates;
  for (MessageKind kind : kKinds) {
    const MessageSchema* m = CoilSchema().Find(std::string("coil.proto.") + MessageKindName(kind));
    INSPECTOR_CHECK(m != nullptr, "a stage message is missing from the embedded schema");
    candidates.push_back({kind, CheckWire(*m, bytes)});
  }
  // Best fitting candidate: no unknown fields, most known fields, the name's hint, kKinds order.
  const Candidate* best = nullptr;
  auto better = [&](const Candidate& a, const Candidate& b) {
    if ((a.check.unknown_fields == 0) != (b.check.unknown_fields == 0)) {
      return a.check.unknown_fields == 0;
    }
    if (a.check.known_fields != b.check.known_fields) {
      return a.check.known_fields > b.check.known_fields;
    }
    return has_hint && a.kind == hint && b.kind != hint;
  };
  for (const Candidate& c : candidates) {
    if (!c.check.ok || c.check.known_fields == 0) continue;
    if (best == nullptr || better(c, *best)) best = &c;
  }
  const Candidate* hinted = nullptr;
  for (const Candidate& c : candidates) {
    if (has_hint && c.kind == hint) hinted = &c;
  }
  // A fit with unknown fields does not beat a failed parse of the type the name promises
  // (a truncated report.pb must say where it was cut, not load as something else).
  bool hinted_failed = hinted != nullptr && !hinted->check.ok;
  if (best != nullptr && best->check.unknown_fields > 0 &&
      (hinted_failed || best->check.unknown_fields >= best->check.known_fields)) {
    best = nullptr;
  }
  if (best != nullptr) {
    d.ok = true;
    d.kind = best->kind;
    d.unknown_fields = best->check.unknown_fields;
    return d;
  }
  // No fit: report the failure of the candidate that read furthest (the hinted one if it
  // failed, since the name says what the file should be).
  const Candidate* furthest = hinted_failed ? hinted : nullptr;
  if (furthest == nullptr) {
    for (const Candidate& c : candidates) {
      if (c.check.ok) continue;
      if (furthest == nullptr || c.check.offset > furthest->check.offset) furthest = &c;
    }
  }
  if (furthest != nullptr) {
    d.error = name + ": not a coil protobuf (" + Describe(furthest->check) + ")";
  } else {
    // Every candidate parsed, but with no known field or mostly unknown ones.
    d.error = name + ": not a coil protobuf (valid protobuf wire format, but its fields match " +
              "none of CompileReport, Graph, Schedule, KernelModule, CaptureResult, " +
              "AutogradResult)";
  }
  return d;
}

}  // namespace coil::inspector
