// Data file path rules (see data_path.h).
#include "ir/io/data_path.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/io/read_file.h"

namespace coil {

absl::Status CheckDataPath(absl::string_view path) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("external data path '", absl::CHexEscape(path), "' ", why));
  };
  if (path.empty()) return absl::InvalidArgumentError("external data path is empty");
  if (path.find('\0') != absl::string_view::npos) return bad("contains a NUL byte");
  if (path.front() == '/') return bad("must be relative to the model's folder");
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return bad("must not contain '..' (it would leave the model's folder)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadDataFile(const std::string& dir, const std::string& path,
                                         int64_t offset, int64_t length) {
  if (absl::Status s = CheckDataPath(path); !s.ok()) return s;
  return ReadFileRange(dir.empty() ? path : absl::StrCat(dir, "/", path), offset, length);
}

}  // namespace coil
