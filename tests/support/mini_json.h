// MiniJson: a small strict JSON reader for the tests that check the server's stats file
// (objects, arrays, numbers, strings, true/false/null). Throws std::runtime_error on bad input.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace svtest {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool Has(const std::string& key) const { return type == Type::kObject && object.count(key); }
  const Json& operator[](const std::string& key) const {
    auto it = object.find(key);
    if (type != Type::kObject || it == object.end()) throw std::runtime_error("no key " + key);
    return it->second;
  }
};

Json ParseJson(const std::string& text);

}  // namespace svtest
