// PassPipeline's non-template part: matching dump patterns.
#include "ir/pass_pipeline.h"

#include <regex>

namespace coil {

absl::StatusOr<bool> DumpPatternMatches(const std::string& pattern,
                                        const std::string& qualified_name) {
  if (pattern.empty()) return false;
  try {
    return std::regex_search(qualified_name, std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("dump pattern '", pattern, "' is not a regular expression: ", e.what()));
  }
}

}  // namespace coil
