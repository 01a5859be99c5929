// Status: the result of an operation that can fail in an expected way (I/O, corruption, bad input).
// Modelled on LevelDB's Status: OK() is cheap; an error carries a code and a message that names
// the failing step and, where there is one, the file. Callers must not ignore it ([[nodiscard]]).
#pragma once

#include <string>
#include <string_view>

namespace core {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kCorruption, kIoError, kNoSpace, kRefused };

  Status() = default;
  static Status OK() { return {}; }
  static Status InvalidArgument(std::string_view msg) { return {Code::kInvalidArgument, msg}; }
  static Status NotFound(std::string_view msg) { return {Code::kNotFound, msg}; }
  static Status Corruption(std::string_view msg) { return {Code::kCorruption, msg}; }
  static Status IoError(std::string_view msg) { return {Code::kIoError, msg}; }
  static Status NoSpace(std::string_view msg) { return {Code::kNoSpace, msg}; }
  static Status Refused(std::string_view msg) { return {Code::kRefused, msg}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK" or "<code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace core
