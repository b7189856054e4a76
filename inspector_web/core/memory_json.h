// WriteMemoryJson: a schedule's memory plan evaluated at concrete symbol values, so a plan
// with symbolic sizes (a batch axis without a hint) can still be drawn to scale.
//
// Each shape symbol of the schedule's graph takes, in order of preference: the value typed by
// the user (`typed`, "batch=4,seq=16"), the compile's --dim value (the report's "dim" option,
// same syntax), the symbol's hint, or its minimum (at least 1):
//
//   {"symbols": [{"name": "batch", "value": 4, "from": "typed"}],  // typed|dim|hint|minimum
//    "arena_bytes": 213504, "peak_live_bytes": 106752,              // null if not evaluable
//    "buffers": [{"id": 2, "size": 4096, "offset": 0}, ...],        // as Schedule.buffers
//    "errors": ["typed values: 'x' is not NAME=INTEGER (a non-negative integer)"]}
#ifndef COIL_INSPECTOR_WEB_CORE_MEMORY_JSON_H_
#define COIL_INSPECTOR_WEB_CORE_MEMORY_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/sym_eval.h"
#include "ir/proto/schedule.pb.h"

namespace coil::inspector {

// Parses "a=1,b=2" (spaces allowed, empty text gives nothing) into `out`; each
// malformed entry adds a message naming it to `errors` (prefixed with `what`).
void ParseSymbolValues(std::string_view text, std::string_view what, SymbolValues *out,
                       std::vector<std::string> *errors);

void WriteMemoryJson(const proto::Schedule &schedule, std::string_view dim_option,
                     std::string_view typed, JsonWriter &w);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_MEMORY_JSON_H_
