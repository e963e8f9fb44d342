// Object-detection ONNX ops: NonMaxSuppression.
//
// The numeric work (box corners, the IoU-based suppression matrix of all box pairs, score
// thresholding, the greedy suppression masks) is Tessel ops on the run's device. The number of
// selected boxes decides the output shape, so the greedy loop runs on the host: each step reads
// back only the index of the best remaining candidate of every (batch, class) pair.
#include <algorithm>
#include <limits>

#include "frontends/onnx/convert_util.h"

namespace tessel::onnx {
namespace {

// --- NonMaxSuppression --------------------------------------------------------------------------

Tensor logical_or(const Tensor& a, const Tensor& b) { return binary("BitOr", a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return binary("BitAnd", a, b); }

// suppress[b, i, j]: box j is suppressed once box i is selected (batch b), as ONNX Runtime
// decides it: a positive intersection and IoU > iou_threshold. boxes: [B, N, 4].
Tensor suppression_matrix(const NodeCtx& ctx, const Tensor& boxes, bool center_point_box,
                          double iou_threshold) {
  const int64_t b = boxes.shape()[0], n = boxes.shape()[1];
  Tensor c0 = narrow(boxes, 2, 0, 1), c1 = narrow(boxes, 2, 1, 1), c2 = narrow(boxes, 2, 2, 1),
         c3 = narrow(boxes, 2, 3, 1);  // each [B, N, 1]
  Tensor xmin, xmax, ymin, ymax;
  if (center_point_box) {  // (x_center, y_center, width, height)
    Tensor half = ctx.scalar_tensor(2, boxes.dtype());
    Tensor hw = binary("Div", c2, half), hh = binary("Div", c3, half);
    xmin = binary("Sub", c0, hw), xmax = binary("Add", c0, hw);
    ymin = binary("Sub", c1, hh), ymax = binary("Add", c1, hh);
  } else {  // (y1, x1, y2, x2), either corner pair first
    ymin = binary("Min", c0, c2), ymax = binary("Max", c0, c2);
    xmin = binary("Min", c1, c3), xmax = binary("Max", c1, c3);
  }
  // Box i along axis 1, box j along axis 2.
  auto col = [&](const Tensor& t) { return reshape(t, {b, 1, n}); };
  Tensor zero = ctx.scalar_tensor(0, boxes.dtype());
  Tensor iw = binary(
      "Max", binary("Sub", binary("Min", xmax, col(xmax)), binary("Max", xmin, col(xmin))), zero);
  Tensor ih = binary(
      "Max", binary("Sub", binary("Min", ymax, col(ymax)), binary("Max", ymin, col(ymin))), zero);
  Tensor inter = binary("Mul", iw, ih);  // [B, N, N]
  Tensor area = binary("Mul", binary("Sub", xmax, xmin), binary("Sub", ymax, ymin));
  Tensor uni = binary("Sub", binary("Add", area, col(area)), inter);
  Tensor positive = logical_and(compare("Gt", inter, zero), compare("Gt", uni, zero));
  Tensor safe_uni = op1("Where", {positive, uni, ctx.scalar_tensor(1, boxes.dtype())});
  Tensor iou = binary("Div", inter, safe_uni);
  return logical_and(positive, compare("Gt", iou, ctx.scalar_tensor(iou_threshold, boxes.dtype())));
}

std::vector<Value> non_max_suppression(NodeCtx& ctx) {
  Tensor boxes = ctx.in(0), scores = ctx.in(1);
  require_float(ctx, boxes, "boxes");
  require_float(ctx, scores, "scores");
  if (boxes.rank() != 3 || boxes.shape()[2] != 4)
    ctx.fail(ErrorKind::Shape, "boxes must be [batches, boxes, 4], got ", shape_str(boxes.shape()));
  if (scores.rank() != 3)
    ctx.fail(ErrorKind::Shape, "scores must be [batches, classes, boxes], got ",
             shape_str(scores.shape()));
  const int64_t nb = boxes.shape()[0], n = boxes.shape()[1], nc = scores.shape()[1];
  if (scores.shape()[0] != nb || scores.shape()[2] != n)
    ctx.fail(ErrorKind::Shape, "scores ", shape_str(scores.shape()), " do not match boxes ",
             shape_str(boxes.shape()), " (batches and boxes must agree)");
  const int64_t center_point_box = ctx.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1)
    ctx.fail(ErrorKind::Value, "center_point_box must be 0 or 1, not ", center_point_box);

  // Control values, read on the host: the per-class output limit and the thresholds.
  int64_t max_out = 0;  // absent: no boxes are selected
  if (ctx.has(2)) {
    const std::vector<int64_t> v = ctx.ints(2);
    if (v.size() > 1)
      ctx.fail(ErrorKind::Shape, "max_output_boxes_per_class must hold one element, not ",
               v.size());
    if (!v.empty()) max_out = std::max<int64_t>(v[0], 0);
  }
  const double iou_threshold = ctx.has(3) ? ctx.scalar(3) : 0.0;
  const bool has_score_threshold = ctx.has(4);
  const double score_threshold = has_score_threshold ? ctx.scalar(4) : 0.0;

  // alive[b, c, j]: box j is still a candidate of class c (batch b).
  Tensor alive = has_score_threshold
                     ? compare("Gt", scores, ctx.scalar_tensor(score_threshold, scores.dtype()))
                     : expand_to(ctx.scalar_tensor(1, DType::Bool), scores.shape());
  std::vector<std::vector<int64_t>> picked(static_cast<size_t>(nb * nc));
  const int64_t steps = std::min(max_out, n);
  if (nb * nc > 0 && steps > 0) {
    Tensor supp = suppression_matrix(ctx, boxes, center_point_box == 1, iou_threshold);
    Tensor neg_inf = ctx.scalar_tensor(-std::numeric_limits<double>::infinity(), scores.dtype());
    Tensor zero = ctx.scalar_tensor(0, scores.dtype());
    Tensor none = ctx.constant([] {
      HostTensor t = HostTensor::empty(DType::I64, {});
      t.set_i64(0, -1);
      return t;
    }());
    Tensor no = ctx.scalar_tensor(0, DType::Bool);
    Tensor iota = op1(
        "Range", {},
        {{"start", 0.0}, {"limit", static_cast<double>(n)}, {"delta", 1.0}, {"dtype", DType::I64}},
        ctx.device());
    eval({supp, alive});  // computed once, not again in every step's graph
    for (int64_t step = 0; step < steps; ++step) {
      // The best remaining candidate of each (batch, class): ArgMax takes the first maximum, so
      // ties go to the lower box index, as in ONNX Runtime. A candidate scoring -inf is found
      // as the first still alive.
      Tensor masked = op1("Where", {alive, scores, neg_inf});
      Tensor alive_f = cast(alive, scores.dtype());
      Tensor top = reduce_op("Max", masked, {2}, false);
      Tensor best = op1(
          "Where", {compare("Eq", top, neg_inf), op1("ArgMax", {alive_f}, {{"axis", int64_t{2}}}),
                    op1("ArgMax", {masked}, {{"axis", int64_t{2}}})});
      Tensor any = compare("Gt", reduce_op("Max", alive_f, {2}, false), zero);
      Tensor sel = op1("Where", {any, best, none});  // [B, C]: a box index, or -1 when done
      // Drop the selected box and every box it suppresses (its row of the matrix).
      Tensor best3 = reshape(best, {nb, nc, 1});
      Tensor rows = op1("GatherNd", {supp, best3}, {{"batch_dims", int64_t{1}}});  // [B, C, N]
      Tensor kill = logical_or(rows, compare("Eq", iota, best3));
      alive = op1("Where", {kill, no, alive});
      eval({alive, sel});
      // Host read: the selected index of each (batch, class), the loop's control value.
      const HostTensor h = sel.data();
      bool any_selected = false;
      for (int64_t k = 0; k < nb * nc; ++k) {
        const int64_t i = h.get_i64(k);
        if (i < 0) continue;
        picked[static_cast<size_t>(k)].push_back(i);
        any_selected = true;
      }
      if (!any_selected) break;
    }
  }

  // The selected (batch, class, box) triples are the host-read control values; ordered by
  // batch, class, then selection order (descending score).
  std::vector<int64_t> triples;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t c = 0; c < nc; ++c)
      for (int64_t i : picked[static_cast<size_t>(b * nc + c)])
        triples.insert(triples.end(), {b, c, i});
  const auto k = static_cast<int64_t>(triples.size() / 3);
  return {ctx.constant(HostTensor::from_vector(DType::I64, {k, 3}, triples))};
}

constexpr Converter kConverters[] = {
    {"", "NonMaxSuppression", non_max_suppression},
};

}  // namespace

std::span<const Converter> detection_converters() { return kConverters; }

}  // namespace tessel::onnx
