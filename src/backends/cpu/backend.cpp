// The cpu backend: native multi-threaded SIMD kernels (kernels/, one table per ISA, picked at
// start-up by isa.h), run by the shared host executor with its liveness-planned arena on the
// caching allocator. Whatever the reference backend claims and cpu has no kernel for is claimed
// as a decomposition into kinds cpu runs natively; the parity harness proves every cell.
#include "backends/cpu/isa.h"
#include "ops/rules.h"
#include "runtime/host_backend.h"
#include "runtime/kernel_registry.h"

namespace tessel {
namespace cpu {
namespace portable {
void register_all(KernelRegistry& r);
}
#if defined(TESSEL_CPU_HAS_AVX2)
namespace avx2 {
void register_all(KernelRegistry& r);
}
#endif
#if defined(TESSEL_CPU_HAS_AVX512)
namespace avx512 {
void register_all(KernelRegistry& r);
}
#endif

namespace {

KernelRegistry make_registry(Isa isa) {
  KernelRegistry r;
  // Bound by the executor itself (arguments and literals).
  for (OpKind k : {OpKind::Input, OpKind::Param, OpKind::Constant})
    r.claims.add({k, dtypes::kEvery, How::Native, {}});
  switch (isa) {
    case Isa::Portable:
      portable::register_all(r);
      break;
    case Isa::Avx2:
#if defined(TESSEL_CPU_HAS_AVX2)
      avx2::register_all(r);
#else
      TESSEL_ASSERT(false, "avx2 kernels are not in this build");
#endif
      break;
    case Isa::Avx512:
#if defined(TESSEL_CPU_HAS_AVX512)
      avx512::register_all(r);
#else
      TESSEL_ASSERT(false, "avx512 kernels are not in this build");
#endif
      break;
  }
  return r;
}

// Every (kind, variant, dtype) cell the reference claims that this registry does not, claimed as
// decomposed when the kind has a decomposition (legalization then needs its parts to be claimed,
// which the parity harness checks). Kinds without one must have a kernel: the coverage test
// fails on any reference cell cpu leaves unclaimed.
void claim_remaining_as_decomposed(KernelRegistry& r, const ClaimTable& ref) {
  for (const OpInfo& op : all_ops()) {
    if (!rules_for(op.kind).decompose || !ref.claims_kind(op.kind)) continue;
    for (int v = 0; v < op.num_variants(); ++v) {
      DTypeSet missing =
          DTypeSet::from_bits(ref.dtypes(op.kind, v).bits() & ~r.claims.dtypes(op.kind, v).bits());
      if (!missing.empty())
        r.decomposed(
            op.kind, missing,
            op.variant_enum == VariantEnum::None ? std::vector<int>{} : std::vector<int>{v});
    }
  }
}

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(const Backend& reference) {
  KernelRegistry r = cpu::make_registry(cpu::active_isa());
  cpu::claim_remaining_as_decomposed(r, reference.claims());
  return std::make_unique<HostBackend>("cpu", std::move(r));
}

}  // namespace tessel
