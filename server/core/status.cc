// Status formatting.
#include "server/core/status.h"

namespace core {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "invalid argument"; break;
    case Code::kNotFound: name = "not found"; break;
    case Code::kCorruption: name = "corruption"; break;
    case Code::kIoError: name = "I/O error"; break;
    case Code::kNoSpace: name = "no space"; break;
    case Code::kRefused: name = "refused"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace core
