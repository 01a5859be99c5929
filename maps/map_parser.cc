// Syntax pass of the .map loader (see map_parser.h). A recursive-descent parser over the grammar
//   map    := entity+ EOF             entity := '{' ( STRING STRING | brush )* '}'
//   brush  := '{' face* '}'           face   := point point point TEXTURE texture-params
//   point  := '(' num num num ')'
//   texture-params := num num num num num                                   (standard)
//                   | '[' num num num num ']' '[' num num num num ']' num num num   (Valve 220)
// followed by up to three more numbers on the same line (Quake 2 / Hexen 2 face flags), ignored.
// The grammar nests two levels deep and every loop consumes a token, so parsing is linear.
#include "maps/map_parser.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace maps {
namespace {

constexpr int kMaxExtraFaceNumbers = 3;

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : tok_(text), name_(name) {}

  core::Status ParseMap(RawMap* out);

 private:
  core::Status Error(TextPos pos, std::string_view expected, const std::string& found) const;
  core::Status Expected(std::string_view expected, const Token& found) const;
  core::Status ExpectPunct(char c, std::string_view expected);
  core::Status ParseEntity(const Token& open, RawEntity* entity);
  core::Status ParseBrush(const Token& open, RawBrush* brush);
  core::Status ParseFace(RawFace* face);
  core::Status ParsePoint(DVec3* point);
  core::Status ParseNum(std::string_view what, bool coordinate, double* out);
  core::Status ParseTextureParams(int face_line);

  Tokenizer tok_;
  const std::string& name_;
  bool saw_valve_face_ = false;
  int keys_ = 0;  // key/value pairs so far, in all entities
};

core::Status Parser::Error(TextPos pos, std::string_view expected, const std::string& found) const {
  std::string msg = name_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.col) +
                    ": expected " + std::string(expected) + ", found " + found;
  return core::Status::InvalidArgument(msg);
}

core::Status Parser::Expected(std::string_view expected, const Token& found) const {
  if (found.kind == TokenKind::kError) {
    std::string what = std::string(found.text) + " (string opened at " +
                       std::to_string(found.open.line) + ":" + std::to_string(found.open.col) + ")";
    return Error(found.pos, "closing '\"'", what);
  }
  return Error(found.pos, expected, DescribeToken(found));
}

core::Status Parser::ExpectPunct(char c, std::string_view expected) {
  Token t = tok_.Next();
  if (t.kind == TokenKind::kPunct && t.text[0] == c) return core::Status::OK();
  return Expected(expected, t);
}

core::Status Parser::ParseMap(RawMap* out) {
  while (true) {
    Token t = tok_.Next();
    if (t.kind == TokenKind::kEnd) break;
    if (t.kind != TokenKind::kPunct || t.text[0] != '{') {
      return Expected(out->entities.empty() ? "'{' to open an entity" : "'{' or end of file", t);
    }
    if (out->entities.size() >= static_cast<size_t>(kMaxEntities)) {
      return Expected("end of file after " + std::to_string(kMaxEntities) +
                          " entities (the most a map may have)",
                      t);
    }
    out->entities.emplace_back();
    core::Status s = ParseEntity(t, &out->entities.back());
    if (!s.ok()) return s;
  }
  if (out->entities.empty()) return Expected("'{' to open an entity", tok_.Next());
  out->valve220 = saw_valve_face_;
  return core::Status::OK();
}

core::Status Parser::ParseEntity(const Token& open, RawEntity* entity) {
  entity->line = open.pos.line;
  while (true) {
    Token t = tok_.Next();
    if (t.kind == TokenKind::kString) {
      if (t.text.size() > static_cast<size_t>(kMaxKeyBytes)) {
        return Expected("a key of at most 1024 bytes", t);
      }
      Token value = tok_.Next();
      if (value.kind != TokenKind::kString) {
        return Expected("a quoted value for key \"" + Unescape(t.text).substr(0, 40) + "\"", value);
      }
      if (++keys_ > kMaxKeys) {
        return Expected("at most " + std::to_string(kMaxKeys) + " keys in the whole map", t);
      }
      entity->keys.push_back({Unescape(t.text), Unescape(value.text), value.pos});
    } else if (t.kind == TokenKind::kPunct && t.text[0] == '{') {
      entity->brushes.emplace_back();
      core::Status s = ParseBrush(t, &entity->brushes.back());
      if (!s.ok()) return s;
    } else if (t.kind == TokenKind::kPunct && t.text[0] == '}') {
      return core::Status::OK();
    } else {
      std::string closing = "a \"key\", '{' or '}' (entity opened at " +
                            std::to_string(open.pos.line) + ":" + std::to_string(open.pos.col) +
                            ")";
      return Expected(closing, t);
    }
  }
}

core::Status Parser::ParseBrush(const Token& open, RawBrush* brush) {
  brush->line = open.pos.line;
  while (true) {
    Token t = tok_.Peek();
    if (t.kind == TokenKind::kPunct && t.text[0] == '}') {
      tok_.Next();
      return core::Status::OK();
    }
    if (t.kind != TokenKind::kPunct || t.text[0] != '(') {
      std::string closing = "'(' or '}' (brush opened at " + std::to_string(open.pos.line) + ":" +
                            std::to_string(open.pos.col) + ")";
      return Expected(closing, t);
    }
    if (brush->faces.size() >= static_cast<size_t>(kMaxFacesPerBrush)) {
      return Expected("'}' (at most 256 faces per brush)", t);
    }
    brush->faces.emplace_back();
    core::Status s = ParseFace(&brush->faces.back());
    if (!s.ok()) return s;
  }
}

core::Status Parser::ParseFace(RawFace* face) {
  face->line = tok_.Here().line;
  for (DVec3& p : face->points) {
    core::Status s = ParsePoint(&p);
    if (!s.ok()) return s;
  }
  Token tex = tok_.NextTextureName();
  bool bad_name = tex.kind == TokenKind::kEnd || tex.kind == TokenKind::kError ||
                  (tex.kind == TokenKind::kWord &&
                   (tex.text == "{" || tex.text.find_first_of("()[]}") == 0));
  if (bad_name) return Expected("a texture name", tex);
  face->texture = tex.kind == TokenKind::kString ? Unescape(tex.text) : std::string(tex.text);
  return ParseTextureParams(tex.pos.line);
}

core::Status Parser::ParseTextureParams(int face_line) {
  double unused = 0;
  Token next = tok_.Peek();
  bool valve = next.kind == TokenKind::kPunct && next.text[0] == '[';
  saw_valve_face_ |= valve;
  int plain_numbers = 5;
  if (valve) {
    for (int axis = 0; axis < 2; ++axis) {
      if (auto s = ExpectPunct('[', "'[' to open a texture axis"); !s.ok()) return s;
      for (int i = 0; i < 4; ++i) {
        if (auto s = ParseNum("a texture axis number", false, &unused); !s.ok()) return s;
      }
      if (auto s = ExpectPunct(']', "']' to close a texture axis"); !s.ok()) return s;
    }
    plain_numbers = 3;  // rotation, x scale, y scale
  }
  for (int i = 0; i < plain_numbers; ++i) {
    if (auto s = ParseNum("a texture offset, rotation or scale", false, &unused); !s.ok()) return s;
  }
  for (int i = 0; i < kMaxExtraFaceNumbers; ++i) {
    Token extra = tok_.Peek();
    if (extra.kind != TokenKind::kWord || extra.pos.line != face_line ||
        !ParseNumber(extra.text, &unused)) {
      break;
    }
    tok_.Next();
  }
  return core::Status::OK();
}

core::Status Parser::ParsePoint(DVec3* point) {
  if (auto s = ExpectPunct('(', "'(' to open a plane point"); !s.ok()) return s;
  for (double* v : {&point->x, &point->y, &point->z}) {
    if (auto s = ParseNum("a coordinate", true, v); !s.ok()) return s;
  }
  return ExpectPunct(')', "')' to close a plane point (3 coordinates)");
}

core::Status Parser::ParseNum(std::string_view what, bool coordinate, double* out) {
  Token t = tok_.Next();
  if (t.kind != TokenKind::kWord || !ParseNumber(t.text, out)) {
    std::string expected = std::string(what) + " (a finite number)";
    return Expected(expected, t);
  }
  if (coordinate && std::fabs(*out) > kMaxCoord) {
    return Expected("a coordinate within -1000000..1000000", t);
  }
  return core::Status::OK();
}

}  // namespace

bool ParseNumber(std::string_view text, double* out) {
  if (text.empty() || text.size() > static_cast<size_t>(kMaxNumberChars)) return false;
  if (text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return false;
  }
  *out = value;
  return true;
}

core::Status ParseRawMap(std::string_view text, const std::string& name, RawMap* out) {
  *out = RawMap{};
  Parser parser(text, name);
  core::Status s = parser.ParseMap(out);
  if (!s.ok()) {
    *out = RawMap{};
    return s;
  }
  out->valve220 |= text.substr(0, 4096).find("// Format: Valve") != std::string_view::npos;
  return s;
}

}  // namespace maps
