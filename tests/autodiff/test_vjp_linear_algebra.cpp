// DotGeneral's VJP against finite differences: batch dims anywhere, several contracted dims
// paired out of order, no contraction (an outer product).
#include <gtest/gtest.h>

#include "autodiff/gradient_check.h"
#include "op_test_util.h"

namespace tessel::testing {
namespace {

TEST(AutodiffLinearAlgebra, DotGeneral) {
  struct Case {
    Shape a, b;
    std::vector<int64_t> lb, rb, lc, rc;
  };
  for (const Case& c :
       {Case{{2, 3, 4}, {2, 4, 5}, {0}, {0}, {2}, {1}}, Case{{3}, {4}, {}, {}, {}, {}},
        Case{{3, 4, 2}, {2, 5, 4}, {}, {}, {1, 2}, {2, 0}},
        Case{{4, 2, 3}, {3, 5, 2}, {1}, {2}, {-1}, {0}},
        Case{{2, 3, 4, 2}, {4, 2, 3}, {0, 1}, {1, 2}, {2}, {0}}}) {
    // Shapes chosen so the paired dims agree: batch {0}·{0} = 2, contract {2}·{1} = 4, etc.
    expect_gradients(
        {rnd(c.a, 1), rnd(c.b, 2)},
        [&](GraphBuilder& b, const std::vector<Value>& in) {
          return b.op1(OpKind::DotGeneral,
                       Attrs()
                           .set("lhs_batch", c.lb)
                           .set("rhs_batch", c.rb)
                           .set("lhs_contract", c.lc)
                           .set("rhs_contract", c.rc),
                       {in[0], in[1]});
        },
        "DotGeneral " + shape_str(c.a) + " " + shape_str(c.b) + " batch " + shape_str(c.lb) + "/" +
            shape_str(c.rb) + " contract " + shape_str(c.lc) + "/" + shape_str(c.rc));
  }
}

TEST(AutodiffLinearAlgebra, GroupedMatMul) {
  HostTensor ids = HostTensor::from_vector(DType::I64, {5}, std::vector<int64_t>{2, 0, 2, 2, 1});
  expect_gradients(
      {rnd({5, 3}, 3), rnd({4, 3, 2}, 4), ids},
      [](GraphBuilder& b, const std::vector<Value>& in) {
        return b.op1(OpKind::GroupedMatMul, Attrs(), {in[0], in[1], in[2]});
      },
      "GroupedMatMul (expert 3 unused, expert 2 thrice)");
}

}  // namespace
}  // namespace tessel::testing
