// `coil inspect`: serve compile artifacts to the browser inspector, or export one HTML file.
// Returns the process exit code and prints errors to stderr.
#ifndef COIL_TOOLS_COIL_INSPECT_COMMANDS_H_
#define COIL_TOOLS_COIL_INSPECT_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

// coil inspect SOURCE [--port N] [--export FILE.html] [--page PAGE.html]
int InspectCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_COMMANDS_H_
