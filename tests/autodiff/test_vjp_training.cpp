// model.freeze and model.graft: Freeze is the identity forward and masks the gradient to zero
// where frozen (all of it without a mask); Graft copies src into dst's slot. Checked on the
// reference and cpu backends.
#include <gtest/gtest.h>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"
#include "passes/passes.h"

namespace tessel::testing {
namespace {

// d/dx Σ (Freeze(x, mask) · x) = x·[not frozen] + x: the frozen path contributes nothing.
TEST(AutodiffTraining, FreezeMasksTheGradient) {
  HostTensor x = rnd({2, 3}, 1);
  for (const char* mask_dtype : {"bool", "f32"}) {
    Graph g;
    GraphBuilder b(g);
    Value xv = g.input(DType::F64, {2, 3}, "x");
    HostTensor mask = HostTensor::empty(*dtype_from_name(mask_dtype), {3});
    mask.set_f64(1, 1);  // column 1 frozen
    Value y = b.op1(OpKind::Freeze, Attrs(), {xv, g.constant(mask)});
    g.outputs = {b.sum(b.mul(y, xv), {0, 1})};
    Graph gg = grad_graph(g, {0});
    for (const char* backend : {"reference", "cpu"}) {
      std::vector<HostTensor> out =
          compile_for(gg, tessel::backend(backend))->run(std::vector<HostTensor>{x});
      for (int64_t i = 0; i < 6; ++i) {
        double want = (i % 3 == 1 ? 1 : 2) * x.get_f64(i);
        EXPECT_NEAR(out[1].get_f64(i), want, 1e-12) << backend << " " << mask_dtype << " " << i;
      }
      EXPECT_NEAR(
          out[0].get_f64(0),
          [&] {
            double s = 0;
            for (double v : x.to_f64()) s += v * v;
            return s;
          }(),
          1e-12);
    }
  }
}

// Without a mask everything is frozen: d/dx Σ (Freeze(x) + x²) = 2x.
TEST(AutodiffTraining, FreezeWithoutMaskStopsEveryGradient) {
  HostTensor x = rnd({4}, 2);
  Graph g;
  GraphBuilder b(g);
  Value xv = g.input(DType::F64, {4}, "x");
  Value y = b.add(b.op1(OpKind::Freeze, Attrs(), {xv, Value{}}), b.mul(xv, xv));
  g.outputs = {b.sum(y, {0})};
  Graph gg = grad_graph(g, {0});
  for (const char* backend : {"reference", "cpu"}) {
    std::vector<HostTensor> out =
        compile_for(gg, tessel::backend(backend))->run(std::vector<HostTensor>{x});
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_NEAR(out[1].get_f64(i), 2 * x.get_f64(i), 1e-12) << backend << " " << i;
  }
}

TEST(AutodiffTraining, GraftCopiesSource) {
  HostTensor dst = rnd({2, 2}, 3), src = rnd({2, 2}, 4);
  for (const char* backend : {"reference", "cpu"})
    expect_close(run_op1(OpKind::Graft, Attrs(), {dst, src}, backend), src, 0, 0, backend);
  expect_error(
      ErrorKind::Shape,
      [&] {
        run_op1(OpKind::Graft, Attrs(), {dst, rnd({4}, 5)});
      },
      "graft of another shape", "slot");
}

}  // namespace
}  // namespace tessel::testing
