// ParseGraph: reads the text form that PrintGraph (ir/printer.h, which has the grammar) writes.
//
//   absl::StatusOr<Graph> g = ParseGraph(R"(
//     graph @f(%0 "x": f32[s0, 3]) {
//       symbol s0 min 2 max 0 hint 8
//       %1: f32[s0, 3] = aten.relu(%0)
//       return %1
//     })");
//
// ParseGraph(PrintGraph(g)) is lossless (same ToProto(), same text). Values must be defined
// before they are used (the text is in topological order). Errors are InvalidArgument starting
// with "line:column: " and saying what was expected ("3:17: expected ')' after the inputs,
// found '{'"); undefined values, duplicate ids, unknown dtypes, malformed symbolic expressions and
// constants whose byte count does not match their type are reported the same way. Op names are
// not checked: parsing accepts any op, and Verify (ir/verifier.h) checks them against the
// registry. ParseGraph never crashes, whatever the input.
#ifndef COIL_IR_PARSER_H_
#define COIL_IR_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"

namespace coil {

absl::StatusOr<Graph> ParseGraph(absl::string_view text);

}  // namespace coil

#endif  // COIL_IR_PARSER_H_
