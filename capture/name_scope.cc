// NameScope (name_scope.h).
#include "capture/name_scope.h"

namespace coil {
namespace {

std::string& Path() {
  thread_local std::string path;
  return path;
}

}  // namespace

NameScope::NameScope(const std::string& name) : previous_size_(Path().size()) {
  if (name.empty()) return;
  if (!Path().empty()) Path() += '.';
  Path() += name;
}

NameScope::~NameScope() { Path().resize(previous_size_); }

const std::string& NameScope::CurrentPath() { return Path(); }

}  // namespace coil
