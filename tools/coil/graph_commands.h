// `coil print`, `coil verify`, `coil run`, `coil ops`: the graph-level commands.
// Each returns the process exit code and prints errors to stderr.
#ifndef COIL_TOOLS_COIL_GRAPH_COMMANDS_H_
#define COIL_TOOLS_COIL_GRAPH_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

int PrintCommand(const std::vector<std::string>& argv);
int VerifyCommand(const std::vector<std::string>& argv);
int RunCommand(const std::vector<std::string>& argv);
int OpsCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_GRAPH_COMMANDS_H_
