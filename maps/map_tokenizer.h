// Tokenizer for the Quake .map text format: punctuation, quoted strings and bare words, with the
// line and column of each token. Skips whitespace (every byte <= ' ') and `//` comments.
// Internal to as_maps. One Tokenizer per parse; not thread-safe; `text` must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace maps {

// 1-based line and column (in bytes) of a place in the text.
struct TextPos {
  int line = 1;
  int col = 1;
};

enum class TokenKind : uint8_t {
  kEnd,     // end of the text
  kPunct,   // one of { } ( ) [ ]
  kString,  // "quoted": text is the raw contents between the quotes (\" not yet unescaped)
  kWord,    // a run of bytes up to whitespace, punctuation or a quote
  kError,   // a string that does not close on its line: text says what was found instead
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  TextPos pos;   // where the token starts (for kError: where the problem is)
  TextPos open;  // kError only: where the unterminated string opened
};

// Longest quoted string accepted; a longer one is an error (keeps one bad quote from swallowing
// a whole file into one value).
inline constexpr int kMaxStringBytes = 8192;

class Tokenizer {
 public:
  // A UTF-8 byte order mark at the start is skipped (columns on line 1 then count from after it).
  explicit Tokenizer(std::string_view text) : text_(text) {
    if (text_.starts_with("\xEF\xBB\xBF")) at_ = 3;
  }

  // Consumes and returns the next token.
  Token Next();
  // Returns the next token without consuming it.
  Token Peek();
  // Reads a texture name: a quoted string, or the raw run of non-whitespace bytes at the cursor
  // (texture names may begin with '{', '*' or '+', so punctuation does not end them).
  Token NextTextureName();
  // Position of the cursor (after the last consumed token and any whitespace).
  TextPos Here();

 private:
  void SkipSpaceAndComments();
  void Advance();  // one byte, tracking line and column
  Token ReadString();

  std::string_view text_;
  size_t at_ = 0;
  TextPos pos_;
};

// Human-readable form of a token for "found Y" in messages: 'word', "string", '{', end of file.
// Long text is cut and unprintable bytes escaped.
std::string DescribeToken(const Token& token);

// `text` as it may go into a message: its first `max_shown` bytes, each control or non-ASCII byte
// written as \xHH, then "..." if it was longer. DescribeToken shows tokens this way.
std::string EscapeForMessage(std::string_view text, size_t max_shown = 40);

// Removes the \" escapes from a string token's text.
std::string Unescape(std::string_view raw);

}  // namespace maps
