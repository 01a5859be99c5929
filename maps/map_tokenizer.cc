// Tokenizer for the Quake .map text format (see map_tokenizer.h). Follows Quake's COM_Parse:
// whitespace is any byte <= ' ', and punctuation ends a bare word. Unlike COM_Parse, a quoted
// string may not span lines, so a missing quote is reported where its line ends.
#include "maps/map_tokenizer.h"

#include <cstdio>
#include <limits>

namespace maps {
namespace {

bool IsSpace(char c) { return static_cast<unsigned char>(c) <= ' '; }
bool IsPunct(char c) {
  return c == '{' || c == '}' || c == '(' || c == ')' || c == '[' || c == ']';
}

}  // namespace

// Line and column saturate instead of overflowing on absurdly large inputs.
void Tokenizer::Advance() {
  if (text_[at_] == '\n') {
    if (pos_.line < std::numeric_limits<int>::max()) ++pos_.line;
    pos_.col = 1;
  } else if (pos_.col < std::numeric_limits<int>::max()) {
    ++pos_.col;
  }
  ++at_;
}

void Tokenizer::SkipSpaceAndComments() {
  while (at_ < text_.size()) {
    if (IsSpace(text_[at_])) {
      Advance();
    } else if (text_[at_] == '/' && at_ + 1 < text_.size() && text_[at_ + 1] == '/') {
      while (at_ < text_.size() && text_[at_] != '\n') Advance();
    } else {
      return;
    }
  }
}

TextPos Tokenizer::Here() {
  SkipSpaceAndComments();
  return pos_;
}

// Reads "..." starting at the opening quote. \" does not close the string.
Token Tokenizer::ReadString() {
  Token token;
  token.pos = pos_;
  Advance();  // opening quote
  size_t start = at_;
  while (true) {
    if (at_ >= text_.size() || text_[at_] == '\n' || text_[at_] == '\r') {
      Token error{TokenKind::kError, at_ >= text_.size() ? "end of file" : "end of line", pos_,
                  token.pos};
      return error;
    }
    if (at_ - start > static_cast<size_t>(kMaxStringBytes)) {
      return {TokenKind::kError, "a string longer than 8192 bytes", pos_, token.pos};
    }
    char c = text_[at_];
    if (c == '"') break;
    if (c == '\\' && at_ + 1 < text_.size() && text_[at_ + 1] == '"') Advance();
    Advance();
  }
  token.kind = TokenKind::kString;
  token.text = text_.substr(start, at_ - start);
  Advance();  // closing quote
  return token;
}

Token Tokenizer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.pos = pos_;
  if (at_ >= text_.size()) return token;  // kEnd
  char c = text_[at_];
  if (c == '"') return ReadString();
  if (IsPunct(c)) {
    token.kind = TokenKind::kPunct;
    token.text = text_.substr(at_, 1);
    Advance();
    return token;
  }
  size_t start = at_;
  while (at_ < text_.size() && !IsSpace(text_[at_]) && !IsPunct(text_[at_]) &&
         text_[at_] != '"') {
    Advance();
  }
  token.kind = TokenKind::kWord;
  token.text = text_.substr(start, at_ - start);
  return token;
}

Token Tokenizer::Peek() {
  size_t saved_at = at_;
  TextPos saved_pos = pos_;
  Token token = Next();
  at_ = saved_at;
  pos_ = saved_pos;
  return token;
}

Token Tokenizer::NextTextureName() {
  SkipSpaceAndComments();
  Token token;
  token.pos = pos_;
  if (at_ >= text_.size()) return token;
  if (text_[at_] == '"') return ReadString();
  size_t start = at_;
  while (at_ < text_.size() && !IsSpace(text_[at_])) Advance();
  token.kind = TokenKind::kWord;
  token.text = text_.substr(start, at_ - start);
  return token;
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of file";
  if (token.kind == TokenKind::kError) return std::string(token.text);
  const char* quote = token.kind == TokenKind::kString ? "\"" : "'";
  return quote + EscapeForMessage(token.text) + quote;
}

std::string EscapeForMessage(std::string_view text, size_t max_shown) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_shown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_shown) out += "...";
  return out;
}

std::string Unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '"') ++i;
    out += raw[i];
  }
  return out;
}

}  // namespace maps
