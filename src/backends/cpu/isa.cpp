#include "backends/cpu/isa.h"

#include <cstdlib>
#include <string_view>

#include "tessel/error.h"

namespace tessel::cpu {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Portable:
      return "portable";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "?";
}

// Whether this CPU has the ISA and this build has its kernels.
bool cpu_supports(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
  (void)avx2;
  switch (isa) {
    case Isa::Portable:
      return true;
    case Isa::Avx2:
#if defined(TESSEL_CPU_HAS_AVX2)
      return avx2;
#else
      return false;  // not in this build
#endif
    case Isa::Avx512:
#if !defined(TESSEL_CPU_HAS_AVX512)
      return false;
#endif
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::Portable;
#endif
}

namespace {
Isa decide() {
  if (const char* env = std::getenv("TESSEL_CPU_ISA")) {
    for (Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512}) {
      if (std::string_view(env) != isa_name(isa)) continue;
      if (!cpu_supports(isa))
        throw_error(ErrorKind::Device, "TESSEL_CPU_ISA=", env,
                    ": this CPU (or this build) does not support it");
      return isa;
    }
    throw_error(ErrorKind::Value, "TESSEL_CPU_ISA='", env,
                "' is not one of portable, avx2, avx512");
  }
  for (Isa isa : {Isa::Avx512, Isa::Avx2})
    if (cpu_supports(isa)) return isa;
  return Isa::Portable;
}
}  // namespace

Isa active_isa() {
  static const Isa isa = decide();
  return isa;
}

}  // namespace tessel::cpu
