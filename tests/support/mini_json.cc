// MiniJson: recursive-descent parser.
#include "tests/support/mini_json.h"

#include <cctype>
#include <cstdlib>

namespace svtest {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}
  Json Document() {
    Json v = Value();
    Space();
    if (i_ != t_.size()) Fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) {
    throw std::runtime_error("json: " + why + " at offset " + std::to_string(i_));
  }
  void Space() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }
  void Word(const char* w) {
    for (const char* p = w; *p; ++p, ++i_) {
      if (i_ >= t_.size() || t_[i_] != *p) Fail("bad literal");
    }
  }
  std::string String() {
    Expect('"');
    std::string s;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in string");
      if (c == '\\') {
        if (i_ >= t_.size()) Fail("bad escape");
        const char e = t_[i_++];
        if (e == 'u') {
          if (i_ + 4 > t_.size()) Fail("bad \\u");
          s += static_cast<char>(std::strtol(t_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
          continue;
        }
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      s += c;
    }
    if (i_ >= t_.size()) Fail("unterminated string");
    ++i_;
    return s;
  }
  Json Value() {
    Space();
    if (i_ >= t_.size()) Fail("unexpected end");
    Json v;
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::kObject;
      if (Eat('}')) return v;
      do {
        Space();
        std::string key = String();
        Expect(':');
        v.object[key] = Value();
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::kArray;
      if (Eat(']')) return v;
      do v.array.push_back(Value());
      while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.type = Json::Type::kString;
      v.string = String();
    } else if (c == 't') {
      Word("true");
      v.type = Json::Type::kBool;
      v.boolean = true;
    } else if (c == 'f') {
      Word("false");
      v.type = Json::Type::kBool;
    } else if (c == 'n') {
      Word("null");
    } else {
      const char* start = t_.c_str() + i_;
      char* end = nullptr;
      v.number = std::strtod(start, &end);
      if (end == start) Fail("bad value");
      i_ += static_cast<size_t>(end - start);
      v.type = Json::Type::kNumber;
    }
    return v;
  }

  const std::string& t_;
  size_t i_ = 0;
};

}  // namespace

Json ParseJson(const std::string& text) { return Parser(text).Document(); }

}  // namespace svtest
