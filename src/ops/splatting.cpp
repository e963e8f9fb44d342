// Shape rules of the Splatting category (kernels pending: "gaussian splatting"). All four
// signatures are uncertain; Tessel's layout (one camera, gsplat conventions), all one float dtype:
//   means [N,3], scales [N,3] (axis lengths, not logs), rotations [N,4] (quaternion w x y z),
//   opacities [N], colors [N,C], viewmat [4,4] (world -> camera), intrinsics [3,3] (K);
//   image [height, width, C].
//   projected [N,8]: per Gaussian, sorted front to back: (u, v, depth, conic a, b, c, radius,
//   source index); a culled Gaussian has radius 0.
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

constexpr int64_t kProjectedColumns = 8;

void require_shape(const InferCtx& ctx, int i, const Shape& shape, const char* what) {
  if (ctx.in(i).shape != shape)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be ", shape_str(shape));
}

void check_float_inputs(const InferCtx& ctx) {
  require_dtype(ctx, 0, dtypes::kFloat, "every input");
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.in(i).dtype != ctx.in(0).dtype)
      ctx.fail(ErrorKind::DType, "inputs must share one float dtype, got ",
               dtype_name(ctx.in(0).dtype), " and ", dtype_name(ctx.in(i).dtype));
}

Shape image_shape(const InferCtx& ctx, int64_t channels) {
  int64_t w = ctx.attrs().i("width"), h = ctx.attrs().i("height");
  if (w < 1 || h < 1)
    ctx.fail(ErrorKind::Value, "width=", w, " and height=", h, " must be positive");
  return {h, w, channels};
}

// means, scales, rotations from input `first`; returns N.
int64_t check_gaussians(const InferCtx& ctx, int first) {
  if (ctx.in(first).rank() != 2 || ctx.in(first).shape[1] != 3)
    ctx.fail(ErrorKind::Shape, "means ", ctx.in(first).str(), " must be [N, 3]");
  int64_t n = ctx.in(first).shape[0];
  require_shape(ctx, first + 1, {n, 3}, "scales");
  require_shape(ctx, first + 2, {n, 4}, "rotations");
  return n;
}

void check_camera(const InferCtx& ctx, int viewmat) {
  require_shape(ctx, viewmat, {4, 4}, "viewmat");
  require_shape(ctx, viewmat + 1, {3, 3}, "intrinsics");
}

// opacities (input o) [N], colors (o + 1) [N, C]; returns C.
int64_t check_appearance(const InferCtx& ctx, int o, int64_t n) {
  require_shape(ctx, o, {n}, "opacities");
  if (ctx.in(o + 1).rank() != 2 || ctx.in(o + 1).shape[0] != n || ctx.in(o + 1).shape[1] < 1)
    ctx.fail(ErrorKind::Shape, "colors ", ctx.in(o + 1).str(), " must be [N=", n, ", C]");
  return ctx.in(o + 1).shape[1];
}

// means, scales, rotations, opacities, colors, viewmat, intrinsics -> image
std::vector<TensorType> infer_render(const InferCtx& ctx) {
  check_float_inputs(ctx);
  int64_t n = check_gaussians(ctx, 0);
  int64_t c = check_appearance(ctx, 3, n);
  check_camera(ctx, 5);
  return {{ctx.in(0).dtype, image_shape(ctx, c)}};
}

// dimage, then Render's inputs -> dmeans, dscales, drotations, dopacities, dcolors
std::vector<TensorType> infer_render_backward(const InferCtx& ctx) {
  check_float_inputs(ctx);
  int64_t n = check_gaussians(ctx, 1);
  int64_t c = check_appearance(ctx, 4, n);
  check_camera(ctx, 6);
  require_shape(ctx, 0, image_shape(ctx, c), "dimage");
  return {ctx.in(1), ctx.in(2), ctx.in(3), ctx.in(4), ctx.in(5)};
}

// means, scales, rotations, viewmat, intrinsics -> projected [N, 8]
std::vector<TensorType> infer_prepare(const InferCtx& ctx) {
  check_float_inputs(ctx);
  int64_t n = check_gaussians(ctx, 0);
  check_camera(ctx, 3);
  image_shape(ctx, 1);
  return {{ctx.in(0).dtype, {n, kProjectedColumns}}};
}

// projected, opacities, colors -> image
std::vector<TensorType> infer_rasterize(const InferCtx& ctx) {
  check_float_inputs(ctx);
  const TensorType& p = ctx.in(0);
  if (p.rank() != 2 || p.shape[1] != kProjectedColumns)
    ctx.fail(ErrorKind::Shape, "projected ", p.str(), " must be [N, ", kProjectedColumns,
             "] (GaussianSplatPrepare's output)");
  int64_t c = check_appearance(ctx, 1, p.shape[0]);
  return {{p.dtype, image_shape(ctx, c)}};
}

}  // namespace

void register_rules_Splatting(RuleTable& table) {
  table[OpKind::GaussianSplatRender].infer = infer_render;
  table[OpKind::GaussianSplatRenderBackward].infer = infer_render_backward;
  table[OpKind::GaussianSplatPrepare].infer = infer_prepare;
  table[OpKind::GaussianSplatRasterize].infer = infer_rasterize;
}

}  // namespace tessel
