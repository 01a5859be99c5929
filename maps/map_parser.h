// Syntax pass of the .map loader: text -> entities with key/values and brushes given as face
// planes (three points each), in either dialect. No geometry or game meaning yet (map_loader.cc).
// Internal to as_maps. Pure function of its input; thread-safe.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "maps/map_tokenizer.h"
#include "server/core/status.h"

namespace maps {

// Limits that keep any input cheap to load. Coordinates beyond kMaxCoord are an error.
inline constexpr double kMaxCoord = 1'000'000;
inline constexpr int kMaxFacesPerBrush = 256;
inline constexpr int kMaxNumberChars = 64;
inline constexpr int kMaxKeyBytes = 1024;
// A map of more entities, or more key/value pairs in all, is refused: a file of "{}" pairs cost
// about 290 bytes of memory per 2 bytes of text, so a file under the size cap could need 37 GB.
// Quake's own maps have a few hundred entities and keys in the thousands; the wire format
// carries at most 32768 entities.
inline constexpr int kMaxEntities = 32768;
inline constexpr int kMaxKeys = 262144;

struct DVec3 {
  double x = 0, y = 0, z = 0;
};

struct RawFace {
  std::array<DVec3, 3> points;
  std::string texture;
  int line = 0;
};

struct RawBrush {
  std::vector<RawFace> faces;
  int line = 0;  // of its '{'
};

struct RawKey {
  std::string key, value;
  TextPos value_pos;  // of the value's opening quote, for messages about the value
};

struct RawEntity {
  std::vector<RawKey> keys;
  std::vector<RawBrush> brushes;
  int line = 0;  // of its '{'
};

struct RawMap {
  std::vector<RawEntity> entities;
  bool valve220 = false;  // a "// Format: Valve" header or a face with [ u ] [ v ] axes
};

// Parses `text`. On a syntax error returns InvalidArgument "NAME:LINE:COL: expected X, found Y".
core::Status ParseRawMap(std::string_view text, const std::string& name, RawMap* out);

// Parses a whole string as one finite number (Quake style: "12", "-0.5", "1e3", "+4").
// Returns false for anything else, including nan/inf, overflow and more than kMaxNumberChars.
bool ParseNumber(std::string_view text, double* out);

}  // namespace maps
