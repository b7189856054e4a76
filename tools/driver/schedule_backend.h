// The Schedule interpreter (runtime/schedule_interpreter.h) as a driver::Backend: Generate
// keeps the Schedule as the module ("code" is the loop IR itself), Load interprets it. It
// checks inductor without any code generator and is the fallback where none exists.
//
//   std::shared_ptr<driver::Backend> b = driver::ScheduleInterpreterBackend();
#ifndef COIL_TOOLS_DRIVER_SCHEDULE_BACKEND_H_
#define COIL_TOOLS_DRIVER_SCHEDULE_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "tools/driver/backend.h"

namespace coil::driver {

// Declares `extern_epilogues` to inductor (the interpreter runs any epilogue; by default it
// declares none, so each extern runs alone, the simplest schedule to check). External constant
// paths are relative to `external_data_dir` (the model's folder).
std::shared_ptr<Backend> ScheduleInterpreterBackend(
    std::vector<std::string> extern_epilogues = {}, std::string external_data_dir = "");

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_SCHEDULE_BACKEND_H_
