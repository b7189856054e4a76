// `coil compile --dump DIR`'s files: DIR/report.pb (the CompileReport) and one standalone file
// per stage artifact (01_import.{pb,txt}, 03_inductor.schedule.pb + .txt,
// 04_codegen_cpu.module.pb + .kernels.ll + .o, ...; compile_commands.h lists them).
//
//   absl::StatusOr<int> files = WriteCompileDump(report, "out/");
#ifndef COIL_TOOLS_COIL_COMPILE_DUMP_H_
#define COIL_TOOLS_COIL_COMPILE_DUMP_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/proto/report.pb.h"

namespace coil::cli {

// Stores `report`'s constants once (driver::StoreConstantsOnce), writes one file per stage
// artifact into `dir` (each with its constants put back, so it stands alone) and then
// dir/report.pb. Returns the number of stage files. Errors: unresolvable constant references,
// files that cannot be written.
absl::StatusOr<int> WriteCompileDump(proto::CompileReport& report, const std::string& dir);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_COMPILE_DUMP_H_
