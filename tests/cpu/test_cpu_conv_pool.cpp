// cpu conv_pool kernels against the reference: Conv (1-D/2-D/3-D, groups, depthwise, stride,
// padding, dilation, bias), ConvTranspose2d, Im2Col and every PoolKind, over every claimed dtype,
// odd and lane-straddling sizes, threaded sizes, non-contiguous and broadcast inputs and empty
// tensors. cpu runs in checked mode (outputs poisoned, guarded), so an unwritten element or a
// stray write fails.
#include <cmath>
#include <thread>

#include "backends/cpu/isa.h"
#include "ir/builder.h"
#include "op_test_util.h"
#include "passes/passes.h"
#include "runtime/host_executable.h"

namespace tessel::testing {
namespace {

std::string str(const std::vector<int64_t>& v) { return shape_str(v); }

// ---------------------------------------------------------------------------------------------
// Conv

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t groups = 1;
  bool bias = true;
};

Attrs conv_attrs(const ConvCase& c) {
  Attrs a;
  a.set("strides", c.strides).set("pads", c.pads).set("dilations", c.dilations);
  a.set("groups", c.groups);
  return a;
}

std::string conv_what(const ConvCase& c) {
  return "x" + str(c.x) + " w" + str(c.w) + " s" + str(c.strides) + " p" + str(c.pads) + " d" +
         str(c.dilations) + " g" + std::to_string(c.groups) + (c.bias ? " bias" : "");
}

void conv_parity(OpKind kind, const ConvCase& c, DType dt, bool layouts, int64_t bias_len) {
  std::vector<HostTensor> in = {random_values(dt, c.x, 1), random_values(dt, c.w, 2, -0.5, 0.5),
                                c.bias ? random_values(dt, {bias_len}, 3) : HostTensor{}};
  if (layouts)
    expect_parity_layouts(kind, conv_attrs(c), in, conv_what(c));
  else
    expect_parity(kind, conv_attrs(c), in, conv_what(c));
}

const std::vector<ConvCase> kConvCases = {
    // 2-D: plain, odd sizes, stride, padding (symmetric and begin/end), dilation, groups.
    {{1, 1, 5, 5}, {1, 1, 3, 3}, {}, {}, {}},
    {{2, 3, 7, 9}, {4, 3, 3, 3}, {}, {1, 1}, {}},
    {{2, 3, 17, 15}, {5, 3, 3, 2}, {2, 1}, {1, 0}, {}, 1, false},
    {{1, 4, 33, 19}, {6, 2, 3, 3}, {1, 2}, {0, 1, 2, 1}, {2, 1}, 2},
    {{3, 6, 9, 65}, {6, 2, 5, 3}, {2, 2}, {2, 1}, {1, 3}, 3},
    {{2, 5, 12, 13}, {7, 5, 1, 1}, {}, {}, {}},                // 1×1: x is the gemm's B
    {{2, 5, 12, 13}, {7, 5, 1, 1}, {2, 3}, {}, {}, 1, false},  // strided 1×1: im2col
    {{1, 3, 4, 4}, {2, 3, 4, 4}, {}, {}, {}},                  // kernel = input
    // Depthwise (one input channel per group), with and without a channel multiplier.
    {{2, 8, 17, 33}, {8, 1, 3, 3}, {}, {1, 1}, {}, 8},
    {{1, 6, 15, 63}, {12, 1, 3, 5}, {1, 1}, {1, 2}, {1, 1}, 6},
    {{2, 4, 16, 67}, {4, 1, 5, 5}, {2, 2}, {2, 2}, {}, 4, false},
    {{1, 3, 9, 40}, {3, 1, 3, 3}, {1, 1}, {2, 3}, {2, 2}, 3},
    {{1, 1, 8, 130}, {3, 1, 3, 3}, {}, {1, 1}, {}},  // one input channel, O = 3
    // 1-D and 3-D.
    {{2, 3, 129}, {4, 3, 5}, {}, {2}, {}},
    {{3, 4, 65}, {4, 1, 7}, {2}, {3}, {2}, 4},
    {{1, 2, 33}, {6, 1, 4}, {3}, {1, 2}, {1}, 2},
    {{2, 2, 5, 6, 7}, {3, 2, 3, 2, 3}, {}, {1, 0, 1}, {}},
    {{1, 4, 6, 7, 9}, {4, 2, 2, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 2, 1}, 2},
    {{1, 3, 5, 9, 17}, {3, 1, 3, 3, 3}, {}, {1, 1, 1}, {}, 3},
};

TEST(CpuConvPool, Conv) {
  for (const ConvCase& c : kConvCases) conv_parity(OpKind::Conv, c, DType::F32, true, c.w[0]);
  for (DType dt : kFloatDTypes)
    for (size_t i = 0; i < kConvCases.size(); i += 3)
      conv_parity(OpKind::Conv, kConvCases[i], dt, dt == DType::F64, kConvCases[i].w[0]);
}

TEST(CpuConvPool, ConvThreaded) {
  // Big enough to thread im2col and gemm (few images) and across images (many).
  const std::vector<ConvCase> cases = {
      {{1, 16, 40, 40}, {24, 16, 3, 3}, {}, {1, 1}, {}},
      {{8, 8, 20, 20}, {16, 4, 3, 3}, {}, {1, 1}, {}, 2},
      {{2, 32, 48, 48}, {32, 1, 3, 3}, {}, {1, 1}, {}, 32},
      {{1, 24, 30, 30}, {24, 24, 1, 1}, {}, {}, {}},
  };
  for (const ConvCase& c : cases) {
    conv_parity(OpKind::Conv, c, DType::F32, false, c.w[0]);
    conv_parity(OpKind::Conv, c, DType::BF16, false, c.w[0]);
  }
  // A big non-contiguous f64 input.
  conv_parity(OpKind::Conv, cases[0], DType::F64, true, cases[0].w[0]);
}

// Convolutions with output rows of 16 or more, unstrided or of stride 2 along the row, pack the
// gemm's B panels straight from x: runs crossing micro-panels and output rows, padding and
// dilation on both sides, depth, more than one k block (K = 360), and more output channels than
// one row block holds (M = 300). Stride 2: odd and even rows, padded or not, and a 1×1 whose
// last tap is x's last element (a read past it fails the sanitizer build).
TEST(CpuConvPool, ConvPanelsPackedFromTheInput) {
  const std::vector<ConvCase> cases = {
      {{1, 30, 20, 37}, {300, 30, 3, 4}, {}, {1, 1}, {}},  // 3 × 4: not Winograd's
      {{2, 8, 19, 41}, {20, 8, 3, 3}, {1, 1}, {2, 3, 2, 1}, {2, 2}},
      {{1, 4, 5, 6, 24}, {6, 4, 3, 3, 3}, {}, {1, 1, 1}, {}},
      {{2, 6, 17, 21}, {10, 3, 2, 4}, {2, 1}, {0, 2, 1, 1}, {1, 1}, 2, false},
      {{1, 3, 41, 67}, {16, 3, 3, 3}, {2, 2}, {1, 1}, {}},
      {{2, 5, 13, 40}, {7, 5, 1, 1}, {2, 2}, {}, {}},
      {{1, 4, 9, 70}, {6, 2, 3, 5}, {1, 2}, {1, 2, 0, 1}, {1, 2}, 2, false},
      {{1, 1, 3, 33}, {2, 1, 1, 1}, {2, 2}, {}, {}},
  };
  for (const ConvCase& c : cases) {
    conv_parity(OpKind::Conv, c, DType::F32, false, c.w[0]);
    conv_parity(OpKind::Conv, c, DType::F64, false, c.w[0]);
  }
}

// Convolutions with output rows shorter than 16 at column stride 1 pack the gemm's B from
// zero-padded copies of the input planes (runs of each output row crossing micro-panels):
// ResNet-like channel counts (K = 1440: two k blocks; 300 output channels: several row blocks;
// 99 positions: a partial panel), row stride 2 with dilation and asymmetric padding, a 1-D
// convolution, and groups over several images (a task each, single-threaded inside).
TEST(CpuConvPool, ConvShortRowsFromPaddedPlanes) {
  const std::vector<ConvCase> cases = {
      {{1, 160, 7, 9}, {300, 160, 3, 3}, {}, {1, 1}, {}},  // too few tiles for Winograd's
      {{2, 24, 15, 13}, {40, 24, 3, 3}, {2, 1}, {1, 0, 2, 1}, {2, 1}},
      {{2, 8, 12}, {10, 8, 3}, {}, {1}, {}, 1, false},
      {{4, 12, 10, 10}, {18, 4, 3, 3}, {}, {1, 1}, {}, 3},
  };
  for (const ConvCase& c : cases) {
    conv_parity(OpKind::Conv, c, DType::F32, false, c.w[0]);
    conv_parity(OpKind::Conv, c, DType::F64, false, c.w[0]);
  }
}

// Convolutions of column stride up to 4 with at most 64 output channels a group run as an
// implicit GEMM on AVX-512 (B read from a zero-padded band of input rows): output rows of
// exactly 16, of 17 (a partial 32-wide tile) and of 100 (tiles of 48, 32 and 20: a last tile of
// at most a vector is avoided); channel counts that fill no 8-row panel; asymmetric padding,
// dilation and row stride 2 / dilation 2 across bands; groups; a 1×3 and a 1-D kernel; no bias;
// several images; 64 channels of a 56×56 plane (tiles of 32 and 24); past 64 output channels,
// where the weights fit L2 and the rows' tiles fill their lanes: 100 channels (a partial 8-row
// panel) over 30-wide rows, and 72 channels over 28-wide rows; and column strides past 1.
TEST(CpuConvPool, ConvImplicitGemm) {
  const std::vector<ConvCase> cases = {
      {{1, 5, 18, 18}, {7, 5, 3, 3}, {}, {}, {}},
      {{2, 3, 9, 19}, {13, 3, 3, 3}, {}, {1, 0}, {}, 1, false},
      {{1, 6, 23, 100}, {24, 6, 3, 3}, {}, {1, 1}, {}},
      {{1, 4, 30, 41}, {10, 4, 3, 3}, {2, 1}, {0, 2, 3, 1}, {2, 2}},
      {{2, 6, 11, 33}, {15, 2, 3, 2}, {}, {1, 1}, {1, 3}, 3},
      {{1, 8, 7, 50}, {9, 8, 1, 3}, {}, {0, 1}, {}},
      {{3, 5, 70}, {11, 5, 5}, {}, {2}, {2}},
      {{1, 16, 56, 56}, {64, 16, 3, 3}, {}, {1, 1}, {}},
      {{1, 12, 10, 30}, {100, 12, 3, 3}, {}, {1, 1}, {}},
      {{2, 9, 7, 28}, {72, 9, 3, 3}, {}, {1, 1}, {}, 1, false},
      // Column strides 2 and 3 (the band's rows in phases): a 7×7 stride-2 stem, a stride
      // across columns only with asymmetric padding, dilation 3 (taps in both phases), and a
      // 3×4 kernel at column stride 3.
      {{1, 3, 40, 70}, {16, 3, 7, 7}, {2, 2}, {3, 3}, {}},
      {{2, 5, 17, 53}, {12, 5, 3, 3}, {1, 2}, {0, 1, 2, 2}, {}},
      {{1, 4, 21, 61}, {6, 4, 3, 3}, {2, 2}, {3, 3}, {3, 3}, 1, false},
      {{1, 2, 12, 80}, {9, 2, 3, 4}, {1, 3}, {1, 2}, {}},
  };
  for (const ConvCase& c : cases) conv_parity(OpKind::Conv, c, DType::F32, false, c.w[0]);
}

// Unstrided 3 × 3 convolutions of 32 input and 24 output channels and more, on planes of 25 tiles
// (2 × 2 outputs) or more, run by Winograd's F(2 × 2, 3 × 3) (AVX-512 and AVX2): even and odd
// output sizes (a half tile at the right and bottom edges), planes of fewer tiles than a block
// (7 × 7 outputs, four images: a block spans tile rows) and of rows longer than a
// vector of tiles, output channels that fill no register panel, no padding and asymmetric
// padding, several images, no bias, input channels past the AVX2 tile's k chunk (300), few
// blocks (panels split between tasks), and transformed weights past L2 (a task runs several
// blocks, the last of them partial); 40 → 24 channels.
TEST(CpuConvPool, ConvWinograd) {
  const std::vector<ConvCase> cases = {
      {{1, 64, 14, 14}, {64, 64, 3, 3}, {}, {1, 1}, {}},
      {{4, 64, 7, 7}, {70, 64, 3, 3}, {}, {1, 1}, {}},
      {{2, 72, 13, 37}, {64, 72, 3, 3}, {}, {1, 1}, {}, 1, false},
      {{1, 64, 20, 9}, {66, 64, 3, 3}, {}, {0, 0}, {}},
      {{1, 65, 11, 12}, {64, 65, 3, 3}, {}, {0, 2, 1, 1}, {}},
      {{1, 300, 10, 10}, {96, 300, 3, 3}, {}, {1, 1}, {}},
      {{2, 64, 17, 50}, {128, 64, 3, 3}, {}, {1, 1}, {}},
      {{1, 128, 19, 21}, {130, 128, 3, 3}, {}, {1, 1}, {}},  // U past L2: runs of blocks a task
      {{1, 40, 18, 21}, {24, 40, 3, 3}, {}, {1, 1}, {}},
  };
  for (const ConvCase& c : cases) conv_parity(OpKind::Conv, c, DType::F32, false, c.w[0]);
}

// Convolutions with the weights a graph constant, as an imported model's: Winograd's transformed
// weights and the implicit GEMM's packed ones are made on the executable's first run and kept
// (runtime/derived_constants.h), which also takes planes of 9 to 24 tiles (7 × 7, 5 × 5) to
// Winograd. Each executable runs twice on different inputs, against the reference; the
// convolution's node then holds one derived item (none on the portable kernels, nor on the gemm
// path: a 4 × 4 plane, a 1 × 1). With the weights an argument instead, nothing is kept: two runs
// with different weights each match the reference. A fresh executable's first runs race on two
// threads. Conv alone and as a ConvRegion (a ReLU fused after it).
TEST(CpuConvPool, ConvConstantWeights) {
  struct Case {
    Shape x, w;
    bool relu;
    size_t derived;  // with AVX2 or AVX-512 (the shapes take the same path on both: the implicit
                     // GEMM's rows a whole AVX-512 vector or more)
  };
  const std::vector<Case> cases = {
      {{1, 64, 7, 7}, {64, 64, 3, 3}, false, 1},   // Winograd at 16 tiles
      {{1, 40, 5, 6}, {30, 40, 3, 3}, true, 1},    // Winograd at 9 tiles
      {{2, 64, 14, 14}, {70, 64, 3, 3}, true, 1},  // Winograd
      {{1, 96, 9, 9}, {24, 96, 3, 3}, false, 1},   // Winograd
      {{1, 64, 4, 4}, {64, 64, 3, 3}, false, 0},   // 4 tiles: gemm
      {{1, 16, 9, 21}, {20, 16, 5, 5}, true, 1},   // the implicit GEMM
      {{1, 24, 6, 6}, {32, 24, 1, 1}, false, 0},   // gemm
  };
  const Backend& cpu = backend("cpu");
  for (const Case& c : cases) {
    for (bool constant : {true, false}) {
      const std::string what = "x" + str(c.x) + " w" + str(c.w) + (c.relu ? " relu" : "") +
                               (constant ? " constant weights" : " weights an argument");
      Graph g;
      GraphBuilder gb(g);
      const HostTensor w0 = random_values(DType::F32, c.w, 2, -0.5, 0.5);
      const HostTensor b0 = random_values(DType::F32, {c.w[0]}, 3);
      Value x = g.input(DType::F32, c.x);
      Value w = constant ? g.constant(w0) : g.input(DType::F32, c.w);
      const int64_t pad = c.w[2] / 2;
      Value y = gb.op1(OpKind::Conv, Attrs().set("pads", std::vector<int64_t>{pad, pad, pad, pad}),
                       {x, w, g.constant(b0)});
      g.outputs = {c.relu ? gb.activation(ActivationKind::Relu, y) : y};
      const auto exe = compile_for(g, cpu);
      const auto ref = compile_for(g, backend("reference"));
      for (uint64_t run = 0; run < 2; ++run) {
        std::vector<HostTensor> args = {random_values(DType::F32, c.x, 10 + run)};
        if (!constant) args.push_back(random_values(DType::F32, c.w, 20 + run, -0.5, 0.5));
        expect_close(exe->run(args)[0], ref->run(args)[0], 2e-5, 2e-5,
                     what + " run " + std::to_string(run));
      }
      const auto* host = dynamic_cast<const HostExecutable*>(exe.get());
      ASSERT_NE(host, nullptr);
      size_t derived = 0, convs = 0;
      for (const Node& n : host->graph().nodes())
        if (n.kind == OpKind::Conv || n.kind == OpKind::ConvRegion) {
          ++convs;
          derived += host->derived(n.id).size();
        }
      EXPECT_EQ(convs, 1u) << what;
      EXPECT_EQ(derived, constant && cpu::active_isa() != cpu::Isa::Portable ? c.derived : 0u)
          << what;
      // A fresh executable's first runs on two threads at once: both wait for the one that
      // makes the derived data, and both match.
      if (constant && &c == &cases[0]) {
        const auto fresh = compile_for(g, cpu);
        const std::vector<HostTensor> args = {random_values(DType::F32, c.x, 30)};
        const HostTensor want = ref->run(args)[0];
        HostTensor got[2];
        std::thread other([&] { got[1] = fresh->run(args)[0]; });
        got[0] = fresh->run(args)[0];
        other.join();
        for (const HostTensor& t : got) expect_close(t, want, 2e-5, 2e-5, what + " concurrent");
      }
    }
  }
}

TEST(CpuConvPool, ConvEmptyAndBroadcast) {
  // No images; no input channels (the output is the bias).
  conv_parity(OpKind::Conv, {{0, 3, 5, 5}, {4, 3, 3, 3}, {}, {}, {}}, DType::F32, false, 4);
  conv_parity(OpKind::Conv, {{2, 0, 5, 5}, {4, 0, 3, 3}, {}, {}, {}}, DType::F32, false, 4);
  conv_parity(OpKind::Conv, {{2, 0, 5, 5}, {4, 0, 3, 3}, {}, {}, {}, 1, false}, DType::F64, false,
              4);
  // Stride-0 (broadcast) inputs.
  for (DType dt : {DType::F32, DType::F16}) {
    HostTensor x = broadcast_view(random_values(dt, {1, 3, 1, 21}, 4), {2, 3, 11, 21});
    HostTensor w = broadcast_view(random_values(dt, {1, 3, 3, 3}, 5), {4, 3, 3, 3});
    HostTensor b = broadcast_view(random_values(dt, {1}, 6), {4});
    expect_parity(OpKind::Conv, Attrs().set("pads", std::vector<int64_t>{1, 1}), {x, w, b},
                  "broadcast x, w, b");
  }
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose2d

struct DeconvCase {
  ConvCase c;
  std::vector<int64_t> output_padding;
};

TEST(CpuConvPool, ConvTranspose2d) {
  const std::vector<DeconvCase> cases = {
      {{{1, 1, 3, 3}, {1, 1, 3, 3}, {}, {}, {}}, {}},
      {{{2, 3, 5, 7}, {3, 4, 3, 3}, {2, 2}, {1, 1}, {}}, {1, 1}},
      {{{2, 4, 6, 5}, {4, 3, 3, 2}, {1, 2}, {0, 1, 2, 0}, {2, 1}, 2, false}, {0, 1}},
      {{{1, 6, 9, 17}, {6, 1, 4, 4}, {2, 2}, {1, 1}, {}, 6}, {}},
      {{{3, 2, 4, 33}, {2, 5, 1, 3}, {1, 3}, {}, {1, 2}}, {0, 1}},
      {{{1, 3, 7, 7}, {3, 2, 5, 5}, {3, 1}, {2, 2}, {1, 1}}, {2, 0}},
      {{{0, 3, 4, 4}, {3, 2, 3, 3}, {}, {}, {}}, {}},
      {{{2, 0, 4, 4}, {0, 2, 3, 3}, {}, {}, {}}, {}},
      // Stride = kernel, unpadded: the tiles are placed, not scattered (2-wide tiles by vector
      // interleaves, rows longer than two vectors plus a tail; 3×1 tiles element by element;
      // groups; no bias; output padding, which leaves gaps, scatters again).
      {{{2, 5, 3, 37}, {5, 3, 2, 2}, {2, 2}, {}, {}}, {}},
      {{{1, 4, 5, 9}, {4, 2, 3, 1}, {3, 1}, {}, {}, 2, false}, {}},
      {{{1, 3, 4, 20}, {3, 2, 2, 2}, {2, 2}, {}, {}}, {1, 1}},
  };
  for (const DeconvCase& d : cases) {
    Attrs a = conv_attrs(d.c);
    a.set("output_padding", d.output_padding);
    int64_t out_channels = d.c.w[1] * d.c.groups;
    for (DType dt : kFloatDTypes) {
      std::vector<HostTensor> in = {random_values(dt, d.c.x, 7),
                                    random_values(dt, d.c.w, 8, -0.5, 0.5),
                                    d.c.bias ? random_values(dt, {out_channels}, 9) : HostTensor{}};
      const std::string what = conv_what(d.c) + " op" + str(d.output_padding);
      if (dt == DType::F32 || dt == DType::F64)
        expect_parity_layouts(OpKind::ConvTranspose2d, a, in, what);
      else
        expect_parity(OpKind::ConvTranspose2d, a, in, what);
    }
  }
  // Threaded (few images: col2im over channels; many images: one task each).
  for (const Shape& x : {Shape{1, 16, 24, 24}, Shape{6, 8, 12, 12}}) {
    DeconvCase d{{x, {x[1], 12, 4, 4}, {2, 2}, {1, 1}, {}}, {}};
    expect_parity(OpKind::ConvTranspose2d, conv_attrs(d.c),
                  {random_values(DType::F32, x, 10), random_values(DType::F32, d.c.w, 11),
                   random_values(DType::F32, {12}, 12)},
                  "threaded " + conv_what(d.c));
  }
}

// ---------------------------------------------------------------------------------------------
// Im2Col

TEST(CpuConvPool, Im2Col) {
  struct C {
    Shape x;
    std::vector<int64_t> kernel, strides, pads, dilations;
  };
  const std::vector<C> cases = {
      {{1, 1, 4, 4}, {2, 2}, {}, {}, {}},
      {{2, 3, 7, 9}, {3, 3}, {}, {1, 1}, {}},
      {{2, 2, 17, 33}, {3, 2}, {2, 3}, {1, 2}, {2, 1}},
      {{1, 4, 5, 65}, {1, 5}, {1, 2}, {0, 2}, {1, 3}},
      {{3, 2, 6, 6}, {6, 6}, {}, {}, {}},
      {{0, 2, 6, 6}, {3, 3}, {}, {}, {}},
      {{2, 8, 40, 40}, {3, 3}, {}, {1, 1}, {}},  // threaded
  };
  for (const C& c : cases) {
    Attrs a;
    a.set("kernel", c.kernel).set("strides", c.strides).set("pads", c.pads);
    a.set("dilations", c.dilations);
    const std::string what = "x" + str(c.x) + " k" + str(c.kernel) + " s" + str(c.strides) + " p" +
                             str(c.pads) + " d" + str(c.dilations);
    for (DType dt : kFloatDTypes)
      expect_parity_layouts(OpKind::Im2Col, a, {random_values(dt, c.x, 1)}, what);
    for (DType dt : kIntDTypes)
      expect_parity_layouts(OpKind::Im2Col, a, {random_values(dt, c.x, 2)}, what);
  }
}

// ---------------------------------------------------------------------------------------------
// Pool

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
};

const std::vector<PoolCase> kPoolCases = {
    {{1, 1, 5, 5}, {2, 2}, {}, {}, {}},
    {{2, 3, 7, 9}, {3, 3}, {1, 1}, {1, 1}, {}},
    {{2, 3, 17, 33}, {3, 3}, {2, 2}, {1, 1}, {}, true},
    {{1, 2, 15, 65}, {2, 5}, {1, 1}, {0, 2}, {}},
    {{2, 2, 16, 63}, {3, 2}, {2, 1}, {1, 0, 0, 1}, {}, true},
    {{1, 3, 11, 129}, {4, 3}, {3, 2}, {2, 1}, {}, true},
    {{3, 2, 127}, {3}, {1}, {1}, {}},  // 1-D
    {{2, 2, 33}, {4}, {3}, {2}, {}, true},
    {{1, 2, 5, 6, 7}, {2, 3, 2}, {}, {1, 1, 1}, {}},  // 3-D
    {{2, 1, 7, 5, 17}, {3, 2, 3}, {2, 1, 2}, {}, {}, true},
};

Attrs pool_attrs(PoolKind kind, const PoolCase& c, bool include_pad, bool pads) {
  Attrs a;
  a.set("kind", kind).set("kernel", c.kernel).set("strides", c.strides);
  if (pads) a.set("pads", c.pads);
  a.set("dilations", c.dilations).set("ceil_mode", c.ceil_mode);
  a.set("count_include_pad", include_pad);
  return a;
}

std::string pool_what(const PoolCase& c) {
  return "x" + str(c.x) + " k" + str(c.kernel) + " s" + str(c.strides) + " p" + str(c.pads) + " d" +
         str(c.dilations) + (c.ceil_mode ? " ceil" : "");
}

TEST(CpuConvPool, PoolMax) {
  std::vector<PoolCase> cases = kPoolCases;
  cases.push_back({{2, 3, 13, 35}, {3, 3}, {1, 2}, {1, 1}, {2, 2}});  // dilation
  cases.push_back({{1, 2, 17}, {3}, {2}, {1}, {3}, true});
  cases.push_back({{1, 1, 2}, {2}, {1}, {1}, {3}});  // a window wholly in the padding
  for (const PoolCase& c : cases) {
    Attrs a = pool_attrs(PoolKind::Max, c, false, true);
    for (DType dt : kFloatDTypes)
      expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 1)}, pool_what(c));
    for (DType dt : kIntDTypes)
      expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 2)}, pool_what(c));
  }
  // NaN propagates.
  HostTensor x = random_values(DType::F64, {1, 2, 9, 20}, 3);
  x.set_f64(25, std::nan(""));
  x.set_f64(200, std::nan(""));
  for (DType dt : {DType::F32, DType::F64, DType::F16})
    expect_parity(OpKind::Pool,
                  pool_attrs(PoolKind::Max, {x.shape, {3, 3}, {1, 1}, {1, 1}, {}}, false, true),
                  {cast_to(x, dt)}, "NaN");
}

TEST(CpuConvPool, PoolAvg) {
  for (const PoolCase& c : kPoolCases)
    for (bool include_pad : {false, true}) {
      Attrs a = pool_attrs(PoolKind::Avg, c, include_pad, true);
      std::string what = pool_what(c) + (include_pad ? " include_pad" : "");
      for (DType dt : kFloatDTypes)
        expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 4)}, what);
    }
}

TEST(CpuConvPool, PoolLp) {
  for (const PoolCase& c : kPoolCases)
    for (int64_t p : {1, 2, 3}) {
      Attrs a = pool_attrs(PoolKind::Lp, c, false, false);
      a.set("p", p);
      std::string what = pool_what(c) + " unpadded p=" + std::to_string(p);
      for (DType dt : kFloatDTypes)
        expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 5, 0.1, 2)}, what);
    }
}

TEST(CpuConvPool, PoolAdaptive) {
  struct C {
    Shape x;
    std::vector<int64_t> size;
  };
  const std::vector<C> cases = {
      {{1, 1, 5, 5}, {2, 2}},       {{2, 3, 7, 9}, {3, 4}},   {{2, 2, 17, 33}, {5, 7}},
      {{1, 2, 6, 65}, {6, 1}},      {{1, 2, 4, 4}, {7, 9}},   {{3, 2, 127}, {10}},
      {{2, 2, 5, 6, 7}, {2, 3, 4}}, {{2, 2, 16, 16}, {1, 1}},
  };
  for (const C& c : cases)
    for (PoolKind kind : {PoolKind::AdaptiveMax, PoolKind::AdaptiveAvg}) {
      Attrs a;
      a.set("kind", kind).set("output_size", c.size);
      std::string what = "x" + str(c.x) + " out" + str(c.size);
      for (DType dt : kFloatDTypes)
        expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 6)}, what);
      if (kind == PoolKind::AdaptiveMax)
        for (DType dt : kIntDTypes)
          expect_parity_layouts(OpKind::Pool, a, {random_values(dt, c.x, 7)}, what);
    }
}

TEST(CpuConvPool, PoolThreadedEmptyBroadcast) {
  HostTensor big = random_values(DType::F32, {4, 16, 56, 56}, 8);
  const PoolCase c3{big.shape, {3, 3}, {2, 2}, {1, 1}, {}};
  const PoolCase c1{big.shape, {3, 3}, {1, 1}, {1, 1}, {}};
  for (const PoolCase& c : {c3, c1}) {
    expect_parity(OpKind::Pool, pool_attrs(PoolKind::Max, c, false, true), {big}, "big max");
    expect_parity(OpKind::Pool, pool_attrs(PoolKind::Avg, c, true, true), {big}, "big avg");
  }
  Attrs adaptive;
  adaptive.set("kind", PoolKind::AdaptiveAvg).set("output_size", std::vector<int64_t>{7, 7});
  expect_parity(OpKind::Pool, adaptive, {big}, "big adaptive avg");
  // No images.
  for (PoolKind kind : {PoolKind::Max, PoolKind::Avg, PoolKind::Lp})
    expect_parity(OpKind::Pool, pool_attrs(kind, {{0, 3, 6, 6}, {2, 2}, {}, {}, {}}, false, true),
                  {random_values(DType::F32, {0, 3, 6, 6}, 9)}, "empty");
  // A stride-0 input.
  HostTensor row = random_values(DType::F32, {1, 1, 1, 37}, 10);
  expect_parity(OpKind::Pool,
                pool_attrs(PoolKind::Max, {{2, 3, 9, 37}, {3, 3}, {2, 1}, {1, 1}, {}}, false, true),
                {broadcast_view(row, {2, 3, 9, 37})}, "broadcast");
}

}  // namespace
}  // namespace tessel::testing
