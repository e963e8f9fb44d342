#!/usr/bin/python3
"""Generates Tessel's extra ONNX test cases, in the backend-test layout.

    /usr/bin/python3 tests/onnx/generate_cases.py [OUT_ROOT]   (default: this script's directory,
    tests/onnx: correctness cases go to extra/, bad inputs to bad/)

writes (after deleting them)
  OUT_ROOT/cases/test_<name>/  model.onnx + test_data_set_0/{input,output}_N.pb: correctness
                               cases, run by `tessel onnx-test --device cpu,reference .../cases`
                               (and by tests/onnx/conformance.sh);
  OUT_ROOT/bad/test_<name>/    model.onnx + test_data_set_0/input_N.pb: models or inputs the
                               importer must reject with a clean tessel::Error
                               (tests/onnx/test_onnx_bad_inputs.cpp).

Needs python3-onnx (1.12), numpy and python3-torch (1.13): torch computes the expected outputs
of Resize, GridSample, Conv/ConvTranspose, LpPool and MaxPool-with-indices, an independent
reference for ops whose numpy re-implementation would only mirror the converter. Every random
input comes from a fixed seed (one generator per section, so a new case shifts no other
section's data) and torch runs on one thread: regenerating is byte-stable.
"""
import itertools
import os
import shutil
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper as oh
from onnx import numpy_helper as nh

torch.set_num_threads(1)

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))


def elem_type(a):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.asarray(a).dtype]


def write_pb(path, a, name):
    with open(path, 'wb') as f:
        f.write(nh.from_array(np.asarray(a), name).SerializeToString())


def write_case(kind, name, nodes, inputs, outputs, opset, consts=None):
    """kind: 'extra' (expected outputs written) or 'bad' (inputs only).
    inputs: [(name, array or None)]; None declares nothing (an omitted optional input, or a name
    the graph reads but never defines). consts: {name: array}, initializers, not graph inputs.
    outputs: [(name, array)]; for 'bad' cases the arrays only give the declared types."""
    consts = consts or {}
    d = os.path.join(ROOT, kind, 'test_' + name)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    feeds = [(n, np.asarray(a)) for n, a in inputs if a is not None and n not in consts]
    graph = oh.make_graph(
        nodes, name,
        [oh.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in feeds],
        [oh.make_tensor_value_info(n, elem_type(a), np.asarray(a).shape) for n, a in outputs],
        initializer=[nh.from_array(np.asarray(a), n) for n, a in consts.items()])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid('', opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for k, (n, a) in enumerate(feeds):
        write_pb(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % k), a, n)
    if kind == 'extra':
        for k, (n, a) in enumerate(outputs):
            write_pb(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % k), a, n)


def case(name, op, inputs, outputs, attrs=None, opset=13, consts=None, node_inputs=None,
         kind='extra'):
    """A one-node model. An input given as None is omitted: '' in the node's inputs."""
    if node_inputs is None:
        node_inputs = [n if a is not None else '' for n, a in inputs]
    node = oh.make_node(op, node_inputs, [n for n, _ in outputs], **(attrs or {}))
    write_case(kind, name, [node], inputs, outputs, opset, consts)


def bad(name, op, inputs, outputs, attrs=None, opset=13, consts=None, node_inputs=None):
    case(name, op, inputs, outputs, attrs, opset, consts, node_inputs, kind='bad')


def i64(*v):
    return np.array(v, dtype=np.int64)


T = torch.from_numpy


def N(t):
    return t.detach().numpy()


# ===================================================================================== shape ops
def shape_ops():
    def f32(*s):  # the same data for the same shape: cases below rely on it
        return np.random.RandomState(0).randn(*s).astype(np.float32)

    x = f32(2, 3, 4)
    case('pad_v2_reflect', 'Pad', [('x', x)], [('y', np.pad(x, ((0, 0), (1, 2), (2, 1)), 'reflect'))], dict(pads=[0, 1, 2, 0, 2, 1], mode='reflect'), opset=2)
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    case('pad_v11_int', 'Pad', [('x', xi), ('p', i64(1, 0, 0, 2)), ('v', np.array(7, np.int32))], [('y', np.pad(xi, ((1, 0), (0, 2)), constant_values=7))], opset=11)
    case('pad_v11_crop', 'Pad', [('x', x), ('p', i64(0, -1, 1, 0, 0, -2))], [('y', np.pad(x, ((0, 0), (0, 0), (1, 0)))[:, 1:, :-2])], opset=11)
    case('reshape_v1', 'Reshape', [('x', x)], [('y', x.reshape(4, 6))], dict(shape=[4, -1]), opset=1)
    case('unsqueeze_v11', 'Unsqueeze', [('x', x)], [('y', x.reshape(1, 2, 3, 1, 4))], dict(axes=[0, -2]), opset=11)
    case('squeeze_all', 'Squeeze', [('x', x.reshape(1, 2, 1, 3, 4, 1))], [('y', x)], opset=13)
    case('squeeze_v11', 'Squeeze', [('x', x.reshape(1, 2, 1, 3, 4, 1))], [('y', x.reshape(2, 1, 3, 4))], dict(axes=[0, -1]), opset=11)
    case('split_v11_attr', 'Split', [('x', x)], [('a', x[:, :1]), ('b', x[:, 1:])], dict(axis=1, split=[1, 2]), opset=11)
    case('split_v13_equal', 'Split', [('x', x)], [('a', x[..., :2]), ('b', x[..., 2:])], dict(axis=-1), opset=13)
    case('expand_bidir', 'Expand', [('x', f32(3, 1)), ('s', i64(2, 1, 6))], [('y', np.broadcast_to(f32(3, 1), (2, 3, 6)).copy())])
    case('expand_smaller', 'Expand', [('x', f32(3, 4)), ('s', i64(1))], [('y', f32(3, 4))])
    case('gather_neg_axis1', 'Gather', [('x', x), ('i', i64(-1, 0, 2, -3).reshape(2, 2))], [('y', np.take(x, [[-1, 0], [2, -3]], axis=1))], dict(axis=1))
    case('gather_scalar_idx', 'Gather', [('x', x), ('i', np.array(1, np.int64))], [('y', x[:, :, 1])], dict(axis=-1))
    c = np.array([[0, 1.5, 0], [2, 0, 3]], np.float32)
    case('nonzero_float2d', 'NonZero', [('x', c)], [('y', np.array(np.nonzero(c), np.int64))], opset=13)
    c3 = (np.arange(24).reshape(2, 3, 4) % 5 == 0).astype(bool)
    case('nonzero_bool3d', 'NonZero', [('x', c3)], [('y', np.array(np.nonzero(c3), np.int64))], opset=13)
    case('nonzero_none', 'NonZero', [('x', np.zeros((2, 3), np.float32))], [('y', np.zeros((2, 0), np.int64))], opset=13)
    case('compress_axis1_short', 'Compress', [('x', x), ('c', np.array([False, True], bool))], [('y', np.compress([False, True], x, axis=1))], dict(axis=1), opset=11)
    case('compress_none', 'Compress', [('x', x), ('c', np.array([False, False], bool))], [('y', x[:, :0, :])], dict(axis=1), opset=11)
    case('eyelike_k_neg', 'EyeLike', [('x', f32(4, 3))], [('y', np.eye(4, 3, k=-1, dtype=np.float32))], dict(k=-1), opset=9)
    case('eyelike_k_big', 'EyeLike', [('x', np.zeros((2, 3), np.int32))], [('y', np.eye(2, 3, k=5, dtype=np.int32))], dict(k=5), opset=9)
    case('range_float_neg', 'Range', [('a', np.array(5, np.float32)), ('b', np.array(-1, np.float32)), ('c', np.array(-1.5, np.float32))], [('y', np.arange(5, -1, -1.5, dtype=np.float32))], opset=11)
    case('range_empty', 'Range', [('a', np.array(5, np.int64)), ('b', np.array(1, np.int64)), ('c', np.array(2, np.int64))], [('y', np.zeros(0, np.int64))], opset=11)
    case('onehot_float_idx', 'OneHot', [('i', np.array([[1.7, -1], [5, 0]], np.float32)), ('d', np.array(3.0, np.float32)), ('v', np.array([2, 9], np.int32))], [('y', np.array([[[2, 9, 2], [2, 2, 9]], [[2, 2, 2], [9, 2, 2]]], np.int32))], opset=11)
    case('onehot_axis0', 'OneHot', [('i', i64(0, 2)), ('d', i64(3)), ('v', np.array([0., 1.], np.float32))], [('y', np.eye(3, dtype=np.float32)[[0, 2]].T.copy())], dict(axis=0), opset=11)
    rs = f32(4, 3, 2)
    exp = rs.copy()
    for b, n in enumerate([4, 1, 2]):
        exp[:n, b] = rs[:n, b][::-1]
    case('reversesequence_3d', 'ReverseSequence', [('x', rs), ('l', i64(4, 1, 2))], [('y', exp)], dict(time_axis=0, batch_axis=1), opset=10)
    case('constantofshape_scalar', 'ConstantOfShape', [('s', np.zeros(0, np.int64))], [('y', np.array(7, np.int64))], dict(value=nh.from_array(np.array([7], np.int64))), opset=9)
    case('constantofshape_default', 'ConstantOfShape', [('s', i64(2, 3))], [('y', np.zeros((2, 3), np.float32))], opset=9)
    case('constant_ints', 'Constant', [], [('y', i64(3, -4))], dict(value_ints=[3, -4]), opset=13)
    case('constant_float', 'Constant', [], [('y', np.array(2.5, np.float32))], dict(value_float=2.5), opset=13)
    case('slice_v1', 'Slice', [('x', x)], [('y', x[:, 1:100, -3:-1])], dict(starts=[1, -3], ends=[100, -1], axes=[1, 2]), opset=1)
    case('slice_neg_step_clamp', 'Slice', [('x', x), ('s', i64(100, -1)), ('e', i64(-100, -100)), ('a', i64(2, 1)), ('st', i64(-2, -1))], [('y', x[:, ::-1, ::-2])], opset=13)
    case('transpose_perm', 'Transpose', [('x', x)], [('y', x.transpose(1, 2, 0))], dict(perm=[1, 2, 0]))
    case('tile_zero', 'Tile', [('x', x), ('r', i64(1, 0, 2))], [('y', np.tile(x, (1, 0, 2)))])
    case('flatten_scalar', 'Flatten', [('x', np.array(3., np.float32))], [('y', np.array([[3.]], np.float32))], dict(axis=0))
    case('shape_v15_empty', 'Shape', [('x', x)], [('y', np.zeros(0, np.int64))], dict(start=2, end=1), opset=15)
    case('trilu_k', 'Trilu', [('x', x), ('k', np.array(-1, np.int64))], [('y', np.tril(x, -1))], dict(upper=0), opset=14)
    case('depthtospace_crd_big', 'DepthToSpace', [('x', f32(2, 8, 3, 2))], [('y', f32(2, 8, 3, 2).reshape(2, 2, 2, 2, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4))], dict(blocksize=2, mode='CRD'), opset=13)
    case('unique_int_axis1', 'Unique', [('x', np.array([[1, 1, 0, 1], [2, 2, 5, 2]], np.int64))], [('y', np.array([[0, 1], [5, 2]], np.int64)), ('i', i64(2, 0)), ('inv', i64(1, 1, 0, 1)), ('c', i64(1, 3))], dict(axis=1, sorted=1), opset=11)
    case('scatternd_mul_v16', 'ScatterND', [('d', np.ones((4,), np.float32) * 2), ('i', i64(1, 1, 3).reshape(3, 1)), ('u', np.array([3, 5, 7], np.float32))], [('y', np.array([2, 30, 2, 14], np.float32))], dict(reduction='mul'), opset=16)
    case('scatterel_add_v16', 'ScatterElements', [('d', np.zeros((2, 3), np.float32)), ('i', i64(0, 0, 2, 1).reshape(2, 2)), ('u', np.array([[1, 2], [3, 4]], np.float32))], [('y', np.array([[3, 0, 0], [0, 4, 3]], np.float32))], dict(reduction='add', axis=1), opset=16)

    # opset 18
    x5 = f32(2, 3, 5)
    case('pad_v18_axes', 'Pad', [('x', x5), ('p', i64(1, 2, 0, 1)), ('v', np.array(1.5, np.float32)), ('a', i64(-1, 0))], [('y', np.pad(x5, ((2, 1), (0, 0), (1, 0)), constant_values=1.5))], opset=18)
    case('split_v18_num', 'Split', [('x', x5)], [('a', x5[..., :2]), ('b', x5[..., 2:4]), ('c', x5[..., 4:])], dict(axis=2, num_outputs=3), opset=18)
    case('ccp_v18', 'CenterCropPad', [('x', x5), ('s', i64(1, 8))], [('y', np.pad(x5[:, 1:2, :], ((0, 0), (0, 0), (1, 2))))], dict(axes=[1, 2]), opset=18)
    case('scatterel_max_v18', 'ScatterElements', [('d', np.zeros((2, 3), np.float32)), ('i', i64(0, 0, 2, 1).reshape(2, 2)), ('u', np.array([[1, 2], [3, 4]], np.float32))], [('y', np.array([[2, 0, 0], [0, 4, 3]], np.float32))], dict(reduction='max', axis=1), opset=18)

    # string tensors (Gather on strings is not supported: no case for it)
    s = np.array([['a', 'bb', 'c'], ['d', 'e', 'f']], dtype=object)
    case('str_identity', 'Identity', [('x', s)], [('y', s)])
    case('str_reshape', 'Reshape', [('x', s), ('sh', i64(3, -1))], [('y', s.reshape(3, 2))])
    case('str_shape', 'Shape', [('x', s)], [('y', i64(2, 3))])
    case('str_size', 'Size', [('x', s)], [('y', np.array(6, np.int64))])
    case('str_unsq', 'Unsqueeze', [('x', s), ('a', i64(1))], [('y', s.reshape(2, 1, 3))])

    # bad inputs (the output arrays only declare types)
    z = np.zeros(1, np.float32)
    bad('err_reshape_bad', 'Reshape', [('x', x), ('s', i64(5, -1))], [('y', z)])
    bad('err_reshape_two_neg', 'Reshape', [('x', x), ('s', i64(-1, -1))], [('y', z)])
    bad('err_reshape_zero_copy', 'Reshape', [('x', x.reshape(24)), ('s', i64(0, 0, -1))], [('y', z)])
    bad('err_slice_step0', 'Slice', [('x', x), ('s', i64(0)), ('e', i64(1)), ('a', i64(0)), ('st', i64(0))], [('y', z)])
    bad('err_slice_axis', 'Slice', [('x', x), ('s', i64(0)), ('e', i64(1)), ('a', i64(5))], [('y', z)])
    bad('err_slice_len', 'Slice', [('x', x), ('s', i64(0, 1)), ('e', i64(1))], [('y', z)])
    bad('err_gather_oob', 'Gather', [('x', x), ('i', i64(7))], [('y', z)])
    bad('err_gather_float_idx', 'Gather', [('x', x), ('i', np.array([0.], np.float32))], [('y', z)])
    bad('err_squeeze_non1', 'Squeeze', [('x', x), ('a', i64(1))], [('y', z)])
    bad('err_unsqueeze_dup', 'Unsqueeze', [('x', x), ('a', i64(1, 1))], [('y', z)])
    bad('err_split_sizes', 'Split', [('x', x), ('s', i64(1, 2))], [('a', z), ('b', z)])
    bad('err_split_uneven', 'Split', [('x', x)], [('a', z), ('b', z)], dict(axis=1))
    bad('err_pad_reflect', 'Pad', [('x', x), ('p', i64(0, 0, 5, 0, 0, 0))], [('y', z)], dict(mode='reflect'), opset=11)
    bad('err_pad_mode', 'Pad', [('x', x), ('p', i64(0, 0, 5, 0, 0, 0))], [('y', z)], dict(mode='bogus'), opset=11)
    bad('err_pad_len', 'Pad', [('x', x), ('p', i64(0, 0, 5))], [('y', z)], opset=11)
    bad('err_d2s_ch', 'DepthToSpace', [('x', f32(1, 3, 2, 2))], [('y', z)], dict(blocksize=2), opset=13)
    bad('err_d2s_rank', 'DepthToSpace', [('x', f32(3, 2, 2))], [('y', z)], dict(blocksize=2), opset=13)
    bad('err_s2d', 'SpaceToDepth', [('x', f32(1, 1, 3, 2))], [('y', z)], dict(blocksize=2), opset=13)
    bad('err_onehot_vals', 'OneHot', [('i', i64(0)), ('d', i64(3)), ('v', np.zeros(3, np.float32))], [('y', z)], opset=11)
    bad('err_onehot_depth', 'OneHot', [('i', i64(0)), ('d', i64(0)), ('v', np.zeros(2, np.float32))], [('y', z)], opset=11)
    bad('err_compress_long', 'Compress', [('x', x), ('c', np.array([0, 0, 0, 1], bool))], [('y', z)], dict(axis=1), opset=11)
    bad('err_expand', 'Expand', [('x', x), ('s', i64(5, 4))], [('y', z)])
    bad('err_expand_neg', 'Expand', [('x', x), ('s', i64(-2, 3, 4))], [('y', z)])
    bad('err_tile_len', 'Tile', [('x', x), ('r', i64(1, 2))], [('y', z)])
    bad('err_tile_neg', 'Tile', [('x', x), ('r', i64(1, -2, 1))], [('y', z)])
    bad('err_range_delta0', 'Range', [('a', np.array(0, np.int64)), ('b', np.array(3, np.int64)), ('c', np.array(0, np.int64))], [('y', z)], opset=11)
    bad('err_range_fdelta0', 'Range', [('a', np.array(0, np.float32)), ('b', np.array(3, np.float32)), ('c', np.array(0, np.float32))], [('y', z)], opset=11)
    bad('err_cos_neg', 'ConstantOfShape', [('s', i64(2, -1))], [('y', z)], opset=9)
    bad('err_transpose_perm', 'Transpose', [('x', x)], [('y', z)], dict(perm=[0, 0, 1]))
    bad('err_concat_shape', 'Concat', [('a', x), ('b', f32(2, 2, 2))], [('y', z)], dict(axis=0))
    bad('err_concat_axis', 'Concat', [('a', x), ('b', x)], [('y', z)], dict(axis=3))
    bad('err_flatten_axis', 'Flatten', [('x', x)], [('y', z)], dict(axis=4))
    bad('err_scatter_red', 'ScatterElements', [('d', x), ('i', np.zeros((2, 3, 4), np.int64)), ('u', x)], [('y', z)], dict(reduction='max'), opset=16)
    bad('err_scatter_oob', 'ScatterElements', [('d', x), ('i', np.full((2, 3, 4), 9, np.int64)), ('u', x)], [('y', z)], opset=13)
    bad('err_scatternd_k', 'ScatterND', [('d', x), ('i', np.zeros((1, 4), np.int64)), ('u', z)], [('y', z)], opset=13)
    bad('err_gathernd_bd', 'GatherND', [('d', x), ('i', np.zeros((2, 1), np.int64))], [('y', z)], dict(batch_dims=3), opset=13)
    bad('err_gather_el_oob', 'GatherElements', [('d', x), ('i', np.full((2, 3, 4), -9, np.int64))], [('y', z)], opset=13)
    bad('err_revseq_lens', 'ReverseSequence', [('x', rs), ('l', i64(1, 2))], [('y', z)], opset=10)
    bad('err_revseq_oob', 'ReverseSequence', [('x', rs), ('l', i64(9, 1, 2))], [('y', z)], opset=10)
    bad('err_eyelike_rank', 'EyeLike', [('x', x)], [('y', z)], opset=9)
    bad('err_trilu_rank', 'Trilu', [('x', f32(3))], [('y', z)], opset=14)
    bad('err_constant_none', 'Constant', [], [('y', z)], opset=13)
    bad('err_undefined_input', 'Shape', [('x', None)], [('y', z)], opset=13, node_inputs=['nope'])
    bad('err_unique_axis', 'Unique', [('x', x)], [('y', z)], dict(axis=3), opset=11)


# ============================================================================== nn, reductions
def nn_ops():
    rng = np.random.default_rng(0)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    # Resize
    x = f32(1, 3, 4, 5)
    for mode, tm in [('nearest', 'nearest'), ('linear', 'bilinear'), ('cubic', 'bicubic')]:
        for scale in [2.0, 0.5, 1.7]:
            kw = {} if tm == 'nearest' else dict(align_corners=False)
            out = N(F.interpolate(T(x), scale_factor=scale, mode=tm, recompute_scale_factor=False, **kw))
            attrs = dict(mode=mode, coordinate_transformation_mode='asymmetric' if mode == 'nearest' else 'half_pixel')
            if mode == 'nearest':
                attrs['nearest_mode'] = 'floor'
            if mode == 'cubic':
                attrs['cubic_coeff_a'] = -0.75
            sc = np.array([1, 1, scale, scale], np.float32)
            case(f'resize_{mode}_scale_{scale}', 'Resize', [('X', x), ('roi', None), ('scales', sc)], [('Y', out)], attrs, opset=13, consts={'scales': sc})
        if tm != 'nearest':
            out = N(F.interpolate(T(x), size=(7, 9), mode=tm, align_corners=True))
            sz = np.array([1, 3, 7, 9], np.int64)
            case(f'resize_{mode}_align_corners_sizes', 'Resize', [('X', x), ('roi', None), ('scales', None), ('sizes', sz)], [('Y', out)], dict(mode=mode, coordinate_transformation_mode='align_corners'), opset=13, consts={'sizes': sz})
    # antialias (opset 18) against torch's antialias
    xa = f32(1, 2, 16, 12)
    for mode, tm in [('linear', 'bilinear'), ('cubic', 'bicubic')]:
        out = N(F.interpolate(T(xa), size=(5, 7), mode=tm, align_corners=False, antialias=True))
        sz = np.array([5, 7], np.int64)
        case(f'resize_{mode}_antialias_axes', 'Resize', [('X', xa), ('roi', None), ('scales', None), ('sizes', sz)], [('Y', out)], dict(mode=mode, antialias=1, exclude_outside=1, axes=[2, 3], cubic_coeff_a=-0.5 if mode == 'cubic' else -0.75), opset=18, consts={'sizes': sz})
    # keep_aspect_ratio_policy not_larger: sizes (8,8) from 16x12 -> scale min(0.5, 0.667) -> 8x6
    out = N(F.interpolate(T(xa), size=(8, 6), mode='bilinear', align_corners=False))
    sz = np.array([8, 8], np.int64)
    case('resize_linear_keep_aspect', 'Resize', [('X', xa), ('roi', None), ('scales', None), ('sizes', sz)], [('Y', out)], dict(mode='linear', axes=[2, 3], keep_aspect_ratio_policy='not_larger'), opset=18, consts={'sizes': sz})
    # nearest 2x half_pixel
    out = np.repeat(np.repeat(x, 2, 2), 2, 3)
    sc = np.array([1, 1, 2, 2], np.float32)
    case('resize_nearest_2x_half_pixel', 'Resize', [('X', x), ('roi', None), ('scales', sc)], [('Y', out)], dict(mode='nearest'), opset=13, consts={'scales': sc})
    case('resize10_nearest_2x', 'Resize', [('X', x), ('scales', sc)], [('Y', out)], dict(mode='nearest'), opset=10, consts={'scales': sc})
    case('upsample7_nearest', 'Upsample', [('X', x)], [('Y', out)], dict(mode='nearest', scales=[1., 1., 2., 2.]), opset=7)
    xi = rng.integers(0, 255, (1, 1, 3, 4)).astype(np.uint8)
    case('resize_nearest_uint8', 'Resize', [('X', xi), ('roi', None), ('scales', sc)], [('Y', np.repeat(np.repeat(xi, 2, 2), 2, 3))], dict(mode='nearest'), opset=13, consts={'scales': sc})

    # Reductions, softmax family, TopK, CumSum
    xr = f32(3, 4, 5)
    ax = np.array([0, 2], np.int64)
    case('reduce_mean_18', 'ReduceMean', [('X', xr), ('axes', ax)], [('Y', xr.mean(axis=(0, 2), keepdims=True))], {}, 18, consts={'axes': ax})
    case('reduce_max_18_noop', 'ReduceMax', [('X', xr)], [('Y', xr)], dict(noop_with_empty_axes=1), 18)
    case('reduce_l2_18_all', 'ReduceL2', [('X', xr)], [('Y', np.sqrt((xr**2).sum(keepdims=False)).astype(np.float32).reshape(()))], dict(keepdims=0), opset=18)
    case('reduce_logsum_11', 'ReduceLogSum', [('X', np.abs(xr))], [('Y', np.log(np.abs(xr).sum(axis=1)))], dict(axes=[1], keepdims=0), opset=11)
    xint = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    case('reduce_sum_int', 'ReduceSum', [('X', xint)], [('Y', xint.sum(axis=1, keepdims=True))], dict(axes=[1]), opset=11)
    xs = f32(2, 3, 4)

    def sm(a):
        e = np.exp(a - a.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    case('softmax_11_axis1', 'Softmax', [('X', xs)], [('Y', sm(xs.reshape(2, 12)).reshape(2, 3, 4))], dict(axis=1), opset=11)
    case('logsoftmax_11_default', 'LogSoftmax', [('X', xs)], [('Y', np.log(sm(xs.reshape(2, 12))).reshape(2, 3, 4))], {}, opset=11)
    hm = np.zeros((2, 12), np.float32)
    hm[np.arange(2), xs.reshape(2, 12).argmax(1)] = 1
    case('hardmax_11', 'Hardmax', [('X', xs)], [('Y', hm.reshape(2, 3, 4))], {}, opset=11)
    case('topk_1', 'TopK', [('X', xs)], [('V', -np.sort(-xs, axis=1)[:, :2]), ('I', np.argsort(-xs, axis=1, kind='stable')[:, :2].astype(np.int64))], dict(k=2, axis=1), opset=1)
    ax1 = np.array(1, np.int32)
    cs = np.flip(np.cumsum(np.flip(xs, 1), 1), 1) - xs
    case('cumsum_rev_excl', 'CumSum', [('X', xs), ('axis', ax1)], [('Y', cs)], dict(reverse=1, exclusive=1), opset=14, consts={'axis': ax1})

    # Normalization, pooling, convolution, matmul
    xg = f32(2, 6, 4, 5)
    sg = f32(3)
    bg = f32(3)
    xr_ = xg.reshape(2, 3, -1)
    m = xr_.mean(-1, keepdims=True)
    v = xr_.var(-1, keepdims=True)
    yg = ((xr_ - m) / np.sqrt(v + 1e-5)).reshape(2, 3, 2, 4, 5) * sg.reshape(1, 3, 1, 1, 1) + bg.reshape(1, 3, 1, 1, 1)
    case('group_norm_18', 'GroupNormalization', [('X', xg), ('scale', sg), ('bias', bg)], [('Y', yg.reshape(xg.shape).astype(np.float32))], dict(num_groups=3), opset=18)
    xl = f32(1, 2, 7, 6)
    xlp = np.pad(xl, ((0, 0), (0, 0), (1, 1), (0, 1)))
    case('lppool_18_pads', 'LpPool', [('X', xl)], [('Y', N(F.lp_pool2d(T(np.abs(xlp)), 3, (3, 2), (2, 1))))], dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], p=3), opset=18)
    case('globallppool', 'GlobalLpPool', [('X', xl)], [('Y', (np.abs(xl)**3).sum((2, 3), keepdims=True)**(1 / 3))], dict(p=3), opset=2)
    for dims in [1, 3]:
        shp = (2, 3) + (5,) * dims if dims == 3 else (2, 3, 11)
        xm = f32(*shp)
        fn = {1: F.max_pool1d, 3: F.max_pool3d}[dims]
        k, s, p = [3] * dims, [2] * dims, [1] * dims
        y, idx = fn(T(xm), k, s, p, return_indices=True)
        plane = int(np.prod(shp[2:]))
        idx = N(idx) + (np.arange(shp[0] * shp[1]).reshape(shp[0], shp[1], *([1] * dims)) * plane)
        case(f'maxpool_{dims}d_indices', 'MaxPool', [('X', xm)], [('Y', N(y)), ('I', idx.astype(np.int64))], dict(kernel_shape=k, strides=s, pads=p * 2), opset=12)
    xm = f32(1, 2, 9, 8)
    y, idx = F.max_pool2d(T(xm), 3, 2, 1, dilation=2, ceil_mode=True, return_indices=True)
    idx = N(idx) + np.arange(2).reshape(1, 2, 1, 1) * 72
    case('maxpool_2d_dil_ceil_indices', 'MaxPool', [('X', xm)], [('Y', N(y)), ('I', idx.astype(np.int64))], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2], ceil_mode=1), opset=12)
    xc, wc, bc = f32(1, 4, 3, 4, 3), f32(4, 3, 2, 3, 2), f32(6)
    y = N(F.conv_transpose3d(T(xc), T(wc), T(bc), stride=(2, 1, 2), padding=(1, 0, 1), groups=2, dilation=(1, 2, 1)))
    case('convtranspose_3d_groups', 'ConvTranspose', [('X', xc), ('W', wc), ('B', bc)], [('Y', y)], dict(strides=[2, 1, 2], pads=[1, 0, 1, 1, 0, 1], group=2, dilations=[1, 2, 1]), opset=11)
    xc, wc, bc = f32(2, 3, 5), f32(3, 2, 3), f32(2)
    y = N(F.conv_transpose1d(T(xc), T(wc), T(bc), stride=3, padding=1, output_padding=2))
    case('convtranspose_1d_outpad', 'ConvTranspose', [('X', xc), ('W', wc), ('B', bc)], [('Y', y)], dict(strides=[3], pads=[1, 1], output_padding=[2]), opset=11)
    xc, wc = f32(1, 2, 5, 6), f32(2, 3, 3, 3)
    y = N(F.conv_transpose2d(T(xc), T(wc), stride=2, padding=1, output_padding=1))
    case('convtranspose_2d_outpad', 'ConvTranspose', [('X', xc), ('W', wc)], [('Y', y)], dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]), opset=11)
    xc, wc = f32(1, 2, 6, 5, 7), f32(4, 2, 3, 2, 3)

    def same_lower_pads(i, k, s, d):
        o = -(-i // s)
        tot = max(0, (o - 1) * s + (k - 1) * d + 1 - i)
        return tot - tot // 2, tot // 2

    ps = [same_lower_pads(i, k, 2, d) for i, k, d in zip((6, 5, 7), (3, 2, 3), (1, 2, 1))]
    y = N(F.conv3d(T(np.pad(xc, ((0, 0), (0, 0)) + tuple(ps))), T(wc), stride=2, dilation=(1, 2, 1)))
    case('conv_3d_same_lower', 'Conv', [('X', xc), ('W', wc)], [('Y', y)], dict(auto_pad='SAME_LOWER', strides=[2, 2, 2], dilations=[1, 2, 1]), opset=11)
    xc, wc, bc = f32(2, 4, 9), f32(6, 2, 3), f32(6)
    y = N(F.conv1d(T(xc), T(wc), T(bc), stride=2, padding=2, groups=2))
    case('conv_1d_groups', 'Conv', [('X', xc), ('W', wc), ('B', bc)], [('Y', y)], dict(strides=[2], pads=[2, 2], group=2), opset=11)
    xa2 = f32(1, 1, 5, 5)

    def avgpool_np(a, k, pads, include):
        t = np.pad(a, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
        o = np.pad(np.ones_like(a), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
        H, W = t.shape[2] - k + 1, t.shape[3] - k + 1
        y = np.zeros((1, 1, H, W), np.float32)
        for i in range(H):
            for j in range(W):
                y[0, 0, i, j] = t[0, 0, i:i + k, j:j + k].sum() / (k * k if include else o[0, 0, i:i + k, j:j + k].sum())
        return y

    case('avgpool_big_pads', 'AveragePool', [('X', xa2)], [('Y', avgpool_np(xa2, 3, [2, 2, 2, 2], False))], dict(kernel_shape=[3, 3], pads=[2, 2, 2, 2]), opset=11)
    case('avgpool_big_pads_incl', 'AveragePool', [('X', xa2)], [('Y', avgpool_np(xa2, 3, [2, 2, 2, 2], True))], dict(kernel_shape=[3, 3], pads=[2, 2, 2, 2], count_include_pad=1), opset=11)
    xn, sn, bn = f32(2, 3, 4), f32(3, 4), f32(3, 4)
    mu = xn.mean((1, 2), keepdims=True)
    inv = 1 / np.sqrt(xn.var((1, 2), keepdims=True) + 1e-5)
    case('layernorm_stats', 'LayerNormalization', [('X', xn), ('S', sn), ('B', bn)], [('Y', (xn - mu) * inv * sn + bn), ('M', mu), ('I', inv)], dict(axis=1), opset=17)
    xb, sb, bb, mb, vb = f32(3, 2, 4), f32(2), f32(2), f32(2), np.abs(f32(2))
    bm, bv = xb.mean((0, 2)), xb.var((0, 2))
    yb = (xb - bm.reshape(1, 2, 1)) / np.sqrt(bv.reshape(1, 2, 1) + 1e-5) * sb.reshape(1, 2, 1) + bb.reshape(1, 2, 1)
    case('batchnorm_training', 'BatchNormalization', [('X', xb), ('s', sb), ('b', bb), ('m', mb), ('v', vb)], [('Y', yb), ('RM', mb * 0.9 + bm * 0.1), ('RV', vb * 0.9 + bv * 0.1)], dict(training_mode=1), opset=15)
    a, b = f32(4), f32(2, 4, 3)
    case('matmul_1d_3d', 'MatMul', [('A', a), ('B', b)], [('Y', np.matmul(a, b))], {}, opset=13)
    a, b = f32(2, 1, 3, 4), f32(5, 4, 2)
    case('matmul_bcast', 'MatMul', [('A', a), ('B', b)], [('Y', np.matmul(a, b))], {}, opset=13)
    a, b, c = f32(4, 3), f32(5, 4), f32(3, 1)
    case('gemm_ta_tb_c', 'Gemm', [('A', a), ('B', b), ('C', c)], [('Y', 0.5 * a.T @ b.T + 2 * c)], dict(transA=1, transB=1, alpha=0.5, beta=2.0), opset=13)
    ai = rng.integers(-3, 3, (2, 3)).astype(np.int32)
    bi = rng.integers(-3, 3, (3, 2)).astype(np.int32)
    case('matmul_int32', 'MatMul', [('A', ai), ('B', bi)], [('Y', ai @ bi)], {}, opset=13)
    e1, e2 = f32(2, 3, 4), f32(2, 4, 5)
    case('einsum_ellipsis', 'Einsum', [('A', e1), ('B', e2)], [('Y', np.einsum('...ij,...jk->...ik', e1, e2))], dict(equation='...ij,...jk->...ik'), opset=12)
    case('dropout_7_mask', 'Dropout', [('X', xs)], [('Y', xs), ('M', np.ones_like(xs))], dict(ratio=0.3), opset=7)
    xi3, si, bi3 = f32(2, 3, 4), f32(3), f32(3)
    mi, vi = xi3.mean(2, keepdims=True), xi3.var(2, keepdims=True)
    case('instancenorm_1d', 'InstanceNormalization', [('X', xi3), ('s', si), ('b', bi3)], [('Y', (xi3 - mi) / np.sqrt(vi + 1e-5) * si.reshape(1, 3, 1) + bi3.reshape(1, 3, 1))], {}, opset=6)
    xl3 = f32(2, 5, 3)
    sq = xl3**2
    acc = np.zeros_like(xl3)
    for c in range(5):  # size 4: channels c-1 .. c+2
        acc[:, c] = sq[:, max(0, c - 1):min(4, c + 2) + 1].sum(1)
    case('lrn_size4_3d', 'LRN', [('X', xl3)], [('Y', xl3 / (2 + 0.01 / 4 * acc)**0.6)], dict(size=4, alpha=0.01, beta=0.6, bias=2.0), opset=13)
    xgs = f32(1, 2, 5, 6)
    grid = rng.random((1, 3, 4, 2)).astype(np.float32) * 2.6 - 1.3
    for mode in ['bilinear', 'nearest', 'bicubic']:
        for pad in ['zeros', 'border', 'reflection']:
            for al in [0, 1]:
                y = N(F.grid_sample(T(xgs), T(grid), mode=mode, padding_mode=pad, align_corners=bool(al)))
                case(f'gridsample_{mode}_{pad}_{al}', 'GridSample', [('X', xgs), ('G', grid)], [('Y', y)], dict(mode=mode, padding_mode=pad, align_corners=al), opset=16)


def nn_edge_ops():
    rng = np.random.default_rng(0)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    xe = np.zeros((2, 0, 3), np.float32)
    ax = np.array([1], np.int64)
    case('reduce_sum_empty', 'ReduceSum', [('X', xe), ('axes', ax)], [('Y', np.zeros((2, 1, 3), np.float32))], {}, opset=13, consts={'axes': ax})
    case('reduce_prod_empty', 'ReduceProd', [('X', xe), ('axes', ax)], [('Y', np.ones((2, 1, 3), np.float32))], {}, opset=18, consts={'axes': ax})
    case('reduce_max_empty', 'ReduceMax', [('X', xe), ('axes', ax)], [('Y', np.full((2, 1, 3), -np.inf, np.float32))], {}, opset=18, consts={'axes': ax})
    case('reduce_lse_empty', 'ReduceLogSumExp', [('X', xe), ('axes', ax)], [('Y', np.full((2, 1, 3), -np.inf, np.float32))], {}, opset=18, consts={'axes': ax})
    xm = f32(2, 2, 5, 6)
    y, idx = F.max_pool2d(T(xm), 2, 2, return_indices=True)
    idx = N(idx)
    col_major = (idx % 6) * 5 + idx // 6 + np.arange(4).reshape(2, 2, 1, 1) * 30
    case('maxpool_storage_order', 'MaxPool', [('X', xm)], [('Y', N(y)), ('I', col_major.astype(np.int64))], dict(kernel_shape=[2, 2], strides=[2, 2], storage_order=1), opset=12)
    xi = rng.integers(-100, 100, (1, 2, 4, 4)).astype(np.int32)
    case('maxpool_int32_pads', 'MaxPool', [('X', xi)], [('Y', N(F.max_pool2d(T(xi.astype(np.float32)), 3, 1, 1)).astype(np.int32))], dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]), opset=12)
    xs = f32(3, 5)
    K = np.array([2], np.int64)
    case('topk_smallest_unsorted_axis0', 'TopK', [('X', xs), ('K', K)], [('V', np.sort(xs, 0)[:2]), ('I', np.argsort(xs, 0, kind='stable')[:2].astype(np.int64))], dict(axis=0, largest=0, sorted=1), opset=11, consts={'K': K})
    xa = np.round(f32(3, 4))
    case('argmin_last', 'ArgMin', [('X', xa)], [('Y', (2 - np.argmin(xa[::-1], 0)).astype(np.int64).reshape(1, 4))], dict(axis=0, select_last_index=1), opset=13)
    case('reduce_mean_int', 'ReduceMean', [('X', np.array([[1, 2], [4, 4]], np.int32))], [('Y', np.array([1, 4], np.int32))], dict(axes=[1], keepdims=0), opset=13)


def nn_bad_inputs():
    rng = np.random.default_rng(0)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    x = f32(1, 2, 4, 4)
    bad('conv_bad_w', 'Conv', [('X', x), ('W', f32(3, 2, 3))], [('Y', x)], {}, opset=11)
    sc = np.array([1, 1, 2, 2], np.float32)
    sz = np.array([1, 2, 8, 8], np.int64)
    bad('resize_both', 'Resize', [('X', x), ('roi', None), ('scales', sc), ('sizes', sz)], [('Y', x)], {}, opset=13, consts={'scales': sc, 'sizes': sz})
    bad('maxpool_no_kernel', 'MaxPool', [('X', x)], [('Y', x)], {}, opset=12)
    bad('softmax_int', 'Softmax', [('X', np.ones((2, 2), np.int64))], [('Y', x)], {}, opset=13)
    K = np.array([9], np.int64)
    bad('topk_big_k', 'TopK', [('X', x), ('K', K)], [('V', x), ('I', x)], {}, opset=11, consts={'K': K})
    bad('gemm_bad', 'Gemm', [('A', f32(2, 3)), ('B', f32(4, 5))], [('Y', x)], {}, opset=13)
    bad('gridsample_5d', 'GridSample', [('X', f32(1, 1, 2, 2, 2)), ('G', f32(1, 2, 2, 2, 3))], [('Y', x)], {}, opset=16)


# ================================================================ dilated AveragePool / LpPool
def dilated_pools():
    rng = np.random.default_rng(0)

    def out_size(i, pb, pe, k, s, d, ceil):
        span = i + pb + pe - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= i + pb:  # the last window must start inside input or left pad
            o -= 1
        return o

    def ref(x, op, kernel, strides, dil, pads, ceil, cip, p):
        n, ins = x.ndim - 2, x.shape[2:]
        outs = [out_size(ins[d], pads[d], pads[n + d], kernel[d], strides[d], dil[d], ceil) for d in range(n)]
        y = np.zeros(x.shape[:2] + tuple(outs), np.float64)
        for o in itertools.product(*[range(v) for v in outs]):
            acc = np.zeros(x.shape[:2])
            valid = inpad = 0
            for j in itertools.product(*[range(k) for k in kernel]):
                q = [o[d] * strides[d] - pads[d] + j[d] * dil[d] for d in range(n)]
                if all(-pads[d] <= q[d] < ins[d] + pads[n + d] for d in range(n)):
                    inpad += 1
                if all(0 <= q[d] < ins[d] for d in range(n)):
                    valid += 1
                    v = x[(slice(None), slice(None)) + tuple(q)].astype(np.float64)
                    acc += v if op == 'AveragePool' else np.abs(v)**p
            y[(slice(None), slice(None)) + o] = acc / (inpad if cip else valid) if op == 'AveragePool' else acc**(1.0 / p)
        return y.astype(x.dtype)

    def same_pads(ins, kernel, strides, dil, upper):
        n = len(ins)
        pads = [0] * (2 * n)
        for d in range(n):
            o = -(-ins[d] // strides[d])
            tot = max(0, (o - 1) * strides[d] + (kernel[d] - 1) * dil[d] + 1 - ins[d])
            pads[d] = tot // 2 if upper else tot - tot // 2
            pads[n + d] = tot - pads[d]
        return pads

    def pool(name, op, shape, kernel, strides=None, dil=None, pads=None, ceil=0, cip=None, p=None, auto_pad=None):
        n = len(shape) - 2
        s, d = strides or [1] * n, dil or [1] * n
        attrs = dict(kernel_shape=kernel)
        if strides:
            attrs['strides'] = strides
        if dil:
            attrs['dilations'] = dil
        if auto_pad:
            attrs['auto_pad'] = auto_pad
            pd = same_pads(shape[2:], kernel, s, d, auto_pad == 'SAME_UPPER')
        else:
            pd = pads or [0] * (2 * n)
            if pads:
                attrs['pads'] = pads
        if ceil:
            attrs['ceil_mode'] = 1
        if cip is not None:
            attrs['count_include_pad'] = cip
        if p is not None:
            attrs['p'] = p
        x = rng.standard_normal(shape).astype(np.float32)
        y = ref(x, op, kernel, s, d, pd, ceil, cip or 0, p if p is not None else 2)
        case(name, op, [('x', x)], [('y', y)], attrs, opset=18)

    A, L = 'AveragePool', 'LpPool'
    pool('avgpool_1d_dil', A, (2, 3, 11), [3], dil=[2])
    pool('avgpool_1d_dil_pads_cip0', A, (1, 2, 10), [3], dil=[3], pads=[2, 3])
    pool('avgpool_1d_dil_pads_cip1', A, (1, 2, 10), [3], dil=[3], pads=[2, 3], cip=1)
    pool('avgpool_1d_dil_stride_ceil_cip0', A, (1, 2, 12), [2], strides=[3], dil=[2], pads=[1, 0], ceil=1)
    pool('avgpool_1d_dil_stride_ceil_cip1', A, (1, 2, 12), [2], strides=[3], dil=[2], pads=[1, 0], ceil=1, cip=1)
    pool('avgpool_2d_dil', A, (2, 3, 9, 8), [2, 3], dil=[2, 2])
    pool('avgpool_2d_dil_strides', A, (1, 2, 10, 11), [3, 2], strides=[2, 3], dil=[2, 3])
    pool('avgpool_2d_dil_pads_cip0', A, (1, 2, 7, 8), [3, 3], dil=[2, 2], pads=[1, 2, 2, 1])
    pool('avgpool_2d_dil_pads_cip1', A, (1, 2, 7, 8), [3, 3], dil=[2, 2], pads=[1, 2, 2, 1], cip=1)
    pool('avgpool_2d_dil_bigpads_cip0', A, (1, 1, 6, 6), [2, 2], dil=[3, 2], pads=[3, 2, 2, 2])
    pool('avgpool_2d_dil_ceil_cip0', A, (1, 2, 8, 9), [3, 2], strides=[2, 2], dil=[2, 2], pads=[1, 1, 0, 1], ceil=1)
    pool('avgpool_2d_dil_ceil_cip1', A, (1, 2, 8, 9), [3, 2], strides=[2, 2], dil=[2, 2], pads=[1, 1, 0, 1], ceil=1, cip=1)
    pool('avgpool_2d_dil_ceil_nopad_cip1', A, (1, 2, 8, 9), [2, 2], strides=[3, 3], dil=[2, 2], ceil=1, cip=1)
    pool('avgpool_2d_dil_same_upper_cip0', A, (1, 2, 7, 8), [3, 2], strides=[2, 1], dil=[2, 3], auto_pad='SAME_UPPER')
    pool('avgpool_2d_dil_same_upper_cip1', A, (1, 2, 7, 8), [3, 2], strides=[2, 1], dil=[2, 3], auto_pad='SAME_UPPER', cip=1)
    pool('avgpool_2d_dil_same_lower_cip0', A, (1, 2, 7, 8), [3, 2], strides=[1, 2], dil=[2, 2], auto_pad='SAME_LOWER')
    pool('avgpool_2d_dil1_ceil_cip1', A, (1, 2, 8, 9), [3, 2], strides=[2, 2], pads=[1, 1, 0, 1], ceil=1, cip=1)
    pool('avgpool_3d_dil', A, (1, 2, 6, 7, 8), [2, 2, 2], dil=[2, 2, 3])
    pool('avgpool_3d_dil_pads_strides_cip0', A, (1, 2, 7, 6, 8), [2, 3, 2], strides=[2, 1, 2], dil=[2, 1, 3], pads=[1, 0, 2, 1, 1, 0])
    pool('avgpool_3d_dil_pads_ceil_cip1', A, (1, 2, 7, 6, 8), [2, 3, 2], strides=[2, 2, 3], dil=[2, 1, 3], pads=[1, 0, 2, 1, 1, 0], ceil=1, cip=1)
    for p in (1, 2, 3):
        pool(f'lppool_1d_dil_p{p}', L, (1, 3, 11), [3], dil=[2], pads=[1, 2], p=p)
        pool(f'lppool_2d_dil_p{p}', L, (2, 2, 8, 9), [2, 3], strides=[2, 1], dil=[3, 2], pads=[1, 0, 2, 1], p=p)
        pool(f'lppool_3d_dil_p{p}', L, (1, 2, 6, 7, 6), [2, 2, 2], dil=[2, 3, 2], p=p)
    pool('lppool_2d_dil_ceil_p2', L, (1, 2, 8, 9), [2, 2], strides=[3, 3], dil=[2, 2], pads=[1, 0, 0, 1], ceil=1, p=2)
    pool('lppool_2d_dil_same_upper_p3', L, (1, 2, 7, 8), [3, 2], strides=[2, 1], dil=[2, 3], auto_pad='SAME_UPPER', p=3)
    # ceil_mode windows that would start in the right pad are dropped
    pool('avgpool_1d_dil_ceil_drop_cip0', A, (1, 2, 4), [2], dil=[2], pads=[0, 3], ceil=1)
    pool('avgpool_1d_dil_ceil_drop_cip1', A, (1, 2, 4), [2], dil=[2], pads=[0, 3], ceil=1, cip=1)
    pool('avgpool_2d_dil_ceil_ext_pads_cip1', A, (1, 2, 12, 10), [2, 3], strides=[3, 4], dil=[2, 2], pads=[1, 1, 1, 1], ceil=1, cip=1)
    pool('avgpool_3d_dil_ceil_ext_pads_cip0', A, (1, 2, 12, 7, 6), [2, 2, 2], strides=[3, 2, 2], dil=[2, 2, 1], pads=[1, 0, 1, 1, 1, 0], ceil=1)
    pool('lppool_2d_dil_ceil_ext_p3', L, (1, 2, 12, 10), [2, 3], strides=[3, 4], dil=[2, 2], pads=[1, 1, 1, 1], ceil=1, p=3)
    pool('lppool_1d_dil_ceil_drop_p2', L, (1, 2, 4), [2], dil=[2], pads=[0, 3], ceil=1, p=2)


# ======================================================================================= uint64
def uint64_ops():
    a = np.array([1, 2**63 + 5, 2**64 - 1, 7, 2**63], np.uint64)
    b = np.array([2**63, 3, 2**64 - 2, 7, 1], np.uint64)
    s = np.array([0, 1, 63, 4, 62], np.uint64)
    nodes = [oh.make_node('Max', ['a', 'b'], ['mx']),
             oh.make_node('Min', ['a', 'b'], ['mn']),
             oh.make_node('Less', ['a', 'b'], ['lt']),
             oh.make_node('BitShift', ['a', 's'], ['sr'], direction='RIGHT'),
             oh.make_node('BitShift', ['a', 's'], ['sl'], direction='LEFT')]
    outs = [('mx', np.maximum(a, b)), ('mn', np.minimum(a, b)), ('lt', a < b),
            ('sr', a >> s), ('sl', a << s)]
    write_case('extra', 'u64_ops', nodes, [('a', a), ('b', b), ('s', s)], outs, opset=13)


def main():
    for kind in ('extra', 'bad'):
        shutil.rmtree(os.path.join(ROOT, kind), ignore_errors=True)
    shape_ops()
    nn_ops()
    nn_edge_ops()
    nn_bad_inputs()
    dilated_pools()
    uint64_ops()
    for kind in ('extra', 'bad'):
        print('%s: %d' % (os.path.join(ROOT, kind), len(os.listdir(os.path.join(ROOT, kind)))))


if __name__ == '__main__':
    main()
