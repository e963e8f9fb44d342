// Median latency of one ONNX model under ONNX Runtime (npm onnxruntime-node), for
// bench/onnx_vs_ort.sh: node ort_latency.js MODEL N,C,H,W THREADS RUNS -> "median_ms <x>".
'use strict';
const ort = require('onnxruntime-node');
(async () => {
  const [model, dims, threads, runs] = process.argv.slice(2);
  const shape = dims.split(',').map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; ++i) data[i] = ((i * 7919) % 2000) / 1000 - 1;
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  await session.run(feeds);  // warm-up
  const times = [];
  for (let r = 0; r < Number(runs); ++r) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`median_ms ${times[Math.floor(times.length / 2)].toFixed(3)}`);
})().catch((e) => { console.error(e); process.exit(1); });
