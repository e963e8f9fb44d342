// Sources & leaves: arguments (Input, Param) and literals (Constant).
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

std::vector<TensorType> infer_argument(const InferCtx& ctx) {
  const Shape& shape = ctx.attrs().ints("shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail(ErrorKind::Shape, "negative dimension in shape ", shape_str(shape));
  return {{ctx.attrs().dtype("dtype"), shape}};
}

std::vector<TensorType> infer_constant(const InferCtx& ctx) {
  const auto& literal = ctx.node().literal;
  if (!literal) ctx.fail(ErrorKind::Value, "a Constant needs a literal value");
  return {{literal->dtype, literal->shape}};
}

}  // namespace

void register_rules_Sources(RuleTable& table) {
  table[OpKind::Input].infer = infer_argument;
  table[OpKind::Param].infer = infer_argument;
  table[OpKind::Constant].infer = infer_constant;
}

}  // namespace tessel
