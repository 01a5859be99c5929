// Vec3: a 3-component float vector in Quake units, and the few operations the game needs.
// Plain value type: no invariants, safe to copy between threads.
#pragma once

#include <cmath>

namespace core {

struct Vec3 {
  float x = 0, y = 0, z = 0;

  constexpr float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3& operator+=(Vec3 o) { x += o.x; y += o.y; z += o.z; return *this; }
  constexpr Vec3& operator-=(Vec3 o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  constexpr Vec3& operator*=(float s) { x *= s; y *= s; z *= s; return *this; }
  friend constexpr bool operator==(Vec3, Vec3) = default;
};

constexpr Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
constexpr Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
constexpr Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
constexpr Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
constexpr Vec3 operator*(float s, Vec3 a) { return a * s; }
constexpr float Dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 Cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float Length(Vec3 a) { return std::sqrt(Dot(a, a)); }
// Returns a unit vector along `a`, or the zero vector if `a` is (nearly) zero.
inline Vec3 Normalize(Vec3 a) {
  float len = Length(a);
  return len > 1e-12f ? a * (1.0f / len) : Vec3{};
}
// Whether every coordinate of every vector is finite. x - x is +0 for a finite x and NaN for an
// infinity or a NaN, so the sum is 0 exactly when all are finite: one test, no branch per
// coordinate (the build keeps IEEE semantics).
template <class... V>
inline bool AllFinite(const V&... v) {
  return (((v.x - v.x) + (v.y - v.y) + (v.z - v.z)) + ...) == 0.0f;
}
inline bool IsFinite(Vec3 a) { return AllFinite(a); }

}  // namespace core
