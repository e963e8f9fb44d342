// The counter-based generator every backend uses: Philox4x32-10 (Salmon et al., SC'11), keyed
// by the op's 64-bit seed, with the element's row-major index as the counter. Element i of any
// random op depends only on (seed, i), so every backend draws the same bits for the same seed
// and shape, in any order and on any number of threads.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace tessel::rng {

using Block = std::array<uint32_t, 4>;

inline Block philox4x32(uint64_t counter, uint64_t stream, uint64_t seed) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  Block c = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32),
             static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

// Uniform in [0, 1) with 24 random bits (exact in f32 and every wider type).
inline double uniform01(uint32_t bits) { return static_cast<double>(bits >> 8) * 0x1.0p-24; }

// Element i's uniform in [0, 1): word 0 of block i.
inline double uniform(uint64_t seed, uint64_t i, uint64_t stream = 0) {
  return uniform01(philox4x32(i, stream, seed)[0]);
}

// Element i's standard normal: Box–Muller on words 0 and 1 of block i, evaluated in f64.
inline double normal(uint64_t seed, uint64_t i, uint64_t stream = 0) {
  Block b = philox4x32(i, stream, seed);
  double u1 = (static_cast<double>(b[0] >> 8) + 1.0) * 0x1.0p-24;  // (0, 1]: log is finite
  double u2 = uniform01(b[1]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace tessel::rng
