// Two float expressions of the kind every trace and move computes, compiled in their own
// translation unit with the target's fused multiply-add enabled where the target can have it
// (x86-64: -mfma; server/core/CMakeLists.txt), so that core_test sees whether the project's
// flags still keep the compiler from fusing them (-ffp-contract=off,
// cmake/AftershockOptions.cmake). Only core_test links it.
#pragma once

#include "server/core/vec3.h"

namespace core {

float ProbeMultiplyAdd(float a, float b, float c);  // a * b + c
float ProbeDot(Vec3 a, Vec3 b);                     // core::Dot(a, b)

}  // namespace core
