// maps::Entity accessors (the rest of map.h is plain data).
#include "maps/map.h"

namespace maps {

std::string Entity::Get(const std::string& key, const std::string& fallback) const {
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return fallback;
}

}  // namespace maps
