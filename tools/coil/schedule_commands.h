// `coil schedule`: the inductor stage on the command line.
// Returns the process exit code and prints errors to stderr.
#ifndef COIL_TOOLS_COIL_SCHEDULE_COMMANDS_H_
#define COIL_TOOLS_COIL_SCHEDULE_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

int ScheduleCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_SCHEDULE_COMMANDS_H_
