// Which instruction set the cpu backend's kernels use: the best the CPU supports, or a lower one
// forced with TESSEL_CPU_ISA=portable|avx2|avx512 (to test every path on one machine). Asking
// for one the CPU lacks is a Device error, never a silent downgrade.
#pragma once

#include <string>

namespace tessel::cpu {

enum class Isa { Portable, Avx2, Avx512 };
const char* isa_name(Isa isa);
bool cpu_supports(Isa isa);
Isa active_isa();  // decided once per process

}  // namespace tessel::cpu
