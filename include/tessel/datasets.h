// Datasets for examples and tests, read in C++ (no Python at run time), and the deterministic
// shuffling and splitting that training needs: the same seed gives the same order on every
// platform (std::mt19937_64 is fully specified; the draws below avoid the library's
// implementation-defined distributions).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tessel/host_tensor.h"

namespace tessel {

struct Dataset {
  HostTensor x;  // [N, features] f32
  HostTensor y;  // [N] i64 class ids
  int64_t size() const { return x.shape.empty() ? 0 : x.shape[0]; }
};

// The 8x8 handwritten digits (1797 images, 64 pixels in 0..16, labels 0..9) that Debian's
// python3-sklearn ships as a gzip CSV; pixels are scaled to [0, 1]. A missing file is an Io error
// naming the package to install; a malformed one a Format error naming the line.
std::string default_digits_path();
Dataset load_digits(const std::string& path = default_digits_path());

// Uniform integer in [0, n) from a 64-bit generator, by rejection (no modulo bias).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n);
// Fisher–Yates shuffle with uniform_below.
void shuffle(std::vector<int64_t>& v, std::mt19937_64& rng);

// A stratified split after a seeded shuffle: ceil(test_fraction · N) rows go to the test set,
// allotted to classes in proportion to their size (largest remainders get the rest), each
// class's test rows drawn from its shuffled rows. Both index lists come out shuffled.
struct Split {
  std::vector<int64_t> train, test;
};
Split stratified_split(const HostTensor& labels, double test_fraction, uint64_t seed);

// The rows of `d` at `rows`, in that order (a copy).
Dataset take_rows(const Dataset& d, std::span<const int64_t> rows);

}  // namespace tessel
