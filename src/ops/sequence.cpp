// Shape rules of the Sequence category (kernels pending: "sequence models").
//
// Layouts:
//   SelectiveScan  (Mamba S6, as in ops.def) u, delta [B,L,D]; A [D,N]; B, C [B,L,N]; D? [D]
//                  -> y [B,L,D]. A and D may be another float dtype than u (Mamba keeps A in f32).
//   GatedDeltaNet  (uncertain; the flash-linear-attention layout of chunk_gated_delta_rule,
//                  head_first = false) q, k [B,T,H,K]; v [B,T,H,V]; g, beta [B,T,H]
//                  -> o [B,T,H,V].
//   Lstm/Gru/Rnn   ONNX layouts, one direction (the rows have no direction attribute):
//                  x [seq, batch, input]; w [1, G·H, input]; r [1, G·H, H]; b? [1, 2·G·H];
//                  h0?, c0? [1, batch, H] -> y [seq, 1, batch, H], h_n (, c_n) [1, batch, H],
//                  G = 4 (LSTM, gates i o f c), 3 (GRU, z r h), 1 (RNN).
//   Mamba2         (uncertain; mamba_chunk_scan_combined) x [B,L,H,P]; dt [B,L,H]; A [H];
//                  B, C [B,L,G,N] with G dividing H; D? [H] or [H,P] -> y [B,L,H,P].
#include "ops/rules.h"
#include "ops/shape_util.h"

namespace tessel {
namespace {

void require_shape(const InferCtx& ctx, int i, const Shape& shape, const char* what) {
  if (ctx.in(i).shape != shape)
    ctx.fail(ErrorKind::Shape, what, " ", ctx.in(i).str(), " must be ", shape_str(shape));
}

std::vector<TensorType> infer_selective_scan(const InferCtx& ctx) {
  for (int i = 0; i < 6; ++i)
    if (ctx.has(i)) require_dtype(ctx, i, dtypes::kFloat, "every input");
  same_dtype(ctx, {0, 1, 3, 4});
  require_rank(ctx, 0, 3);
  require_rank(ctx, 2, 2);
  const Shape& u = ctx.in(0).shape;
  int64_t b = u[0], l = u[1], d = u[2], n = ctx.in(2).shape[1];
  require_shape(ctx, 1, u, "delta");
  require_shape(ctx, 2, {d, n}, "A");
  require_shape(ctx, 3, {b, l, n}, "B");
  require_shape(ctx, 4, {b, l, n}, "C");
  if (ctx.has(5)) require_shape(ctx, 5, {d}, "D");
  return {ctx.in(0)};
}

std::vector<TensorType> infer_gated_delta_net(const InferCtx& ctx) {
  for (int i = 0; i < 5; ++i) require_dtype(ctx, i, dtypes::kFloat, "every input");
  DType t = same_dtype(ctx, {0, 1, 2, 3, 4});
  require_rank(ctx, 0, 4);
  require_rank(ctx, 2, 4);
  const Shape& q = ctx.in(0).shape;
  require_shape(ctx, 1, q, "k");
  const Shape& v = ctx.in(2).shape;
  if (v[0] != q[0] || v[1] != q[1] || v[2] != q[2])
    ctx.fail(ErrorKind::Shape, "v ", ctx.in(2).str(), " must be [B=", q[0], ", T=", q[1],
             ", H=", q[2], ", V]");
  require_shape(ctx, 3, {q[0], q[1], q[2]}, "g");
  require_shape(ctx, 4, {q[0], q[1], q[2]}, "beta");
  return {{t, v}};
}

// The ONNX recurrences; `gates` = G. Returns y, h_n (and c_n for the LSTM).
std::vector<TensorType> infer_recurrence(const InferCtx& ctx, int64_t gates, bool has_cell) {
  int n = ctx.num_inputs();
  for (int i = 0; i < n; ++i)
    if (ctx.has(i)) require_dtype(ctx, i, dtypes::kFloat, "every input");
  DType t = same_dtype(ctx, {0, 1, 2, 3, 4, 5});
  int64_t hidden = ctx.attrs().i("hidden");
  if (hidden < 1) ctx.fail(ErrorKind::Value, "hidden=", hidden, " must be positive");
  require_rank(ctx, 0, 3);
  const Shape& x = ctx.in(0).shape;
  int64_t seq = x[0], batch = x[1], input = x[2];
  require_shape(ctx, 1, {1, gates * hidden, input}, "w");
  require_shape(ctx, 2, {1, gates * hidden, hidden}, "r");
  if (ctx.has(3)) require_shape(ctx, 3, {1, 2 * gates * hidden}, "b");
  Shape state{1, batch, hidden};
  if (ctx.has(4)) require_shape(ctx, 4, state, "h0");
  if (has_cell && ctx.has(5)) require_shape(ctx, 5, state, "c0");
  std::vector<TensorType> out{{t, {seq, 1, batch, hidden}}, {t, state}};
  if (has_cell) out.push_back({t, state});
  return out;
}

std::vector<TensorType> infer_lstm(const InferCtx& ctx) { return infer_recurrence(ctx, 4, true); }
std::vector<TensorType> infer_gru(const InferCtx& ctx) { return infer_recurrence(ctx, 3, false); }

std::vector<TensorType> infer_rnn(const InferCtx& ctx) {
  int act = static_cast<int>(ctx.attrs().e<ActivationKind>("act"));
  if (!op_info(OpKind::Activation).variant_differentiable(act))
    ctx.fail(ErrorKind::Value, "act=", op_info(OpKind::Activation).variant_name(act),
             " is not differentiable; an RNN needs a smooth activation (Tanh, Relu, Sigmoid, ...)");
  return infer_recurrence(ctx, 1, false);
}

std::vector<TensorType> infer_mamba2(const InferCtx& ctx) {
  for (int i = 0; i < 6; ++i)
    if (ctx.has(i)) require_dtype(ctx, i, dtypes::kFloat, "every input");
  DType t = same_dtype(ctx, {0, 1, 3, 4});
  int64_t chunk = ctx.attrs().i("chunk");
  if (chunk < 1) ctx.fail(ErrorKind::Value, "chunk=", chunk, " must be positive");
  require_rank(ctx, 0, 4);
  require_rank(ctx, 3, 4);
  const Shape& x = ctx.in(0).shape;
  int64_t b = x[0], l = x[1], h = x[2], p = x[3];
  require_shape(ctx, 1, {b, l, h}, "dt");
  require_shape(ctx, 2, {h}, "A");
  const Shape& bm = ctx.in(3).shape;
  if (bm[0] != b || bm[1] != l || bm[2] < 1 || h % bm[2] != 0)
    ctx.fail(ErrorKind::Shape, "B ", ctx.in(3).str(), " must be [B=", b, ", L=", l,
             ", G, N] with G dividing H=", h);
  require_shape(ctx, 4, bm, "C");
  if (ctx.has(5) && ctx.in(5).shape != Shape{h} && ctx.in(5).shape != Shape{h, p})
    ctx.fail(ErrorKind::Shape, "D ", ctx.in(5).str(), " must be [H=", h, "] or [H, P=", p, "]");
  return {{t, x}};
}

}  // namespace

void register_rules_Sequence(RuleTable& table) {
  table[OpKind::SelectiveScan].infer = infer_selective_scan;
  table[OpKind::GatedDeltaNet].infer = infer_gated_delta_net;
  table[OpKind::Lstm].infer = infer_lstm;
  table[OpKind::Gru].infer = infer_gru;
  table[OpKind::Rnn].infer = infer_rnn;
  table[OpKind::Mamba2].infer = infer_mamba2;
}

}  // namespace tessel
