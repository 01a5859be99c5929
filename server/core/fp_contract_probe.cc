// Compiled with -mfma on x86-64 (server/core/CMakeLists.txt): see fp_contract_probe.h.
#include "server/core/fp_contract_probe.h"

namespace core {

float ProbeMultiplyAdd(float a, float b, float c) { return a * b + c; }
float ProbeDot(Vec3 a, Vec3 b) { return Dot(a, b); }

}  // namespace core
