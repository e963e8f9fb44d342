"""tessel.onnx: loading, running with numpy / Tensor / dict inputs, sequences and strings, the
conformance of a backend-test case, and errors that name what is wrong."""
import os

import numpy as np
import pytest

import tessel

NODE = "/usr/share/libonnx-testdata/data/node"
needs_testdata = pytest.mark.skipif(not os.path.isdir(NODE),
                                    reason="libonnx-testdata is not installed")
onnx = pytest.importorskip("onnx", reason="python3-onnx builds the test models")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def model_bytes(nodes, inputs, outputs, opset=13, initializers=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def test_runs_a_model_from_numpy_and_by_name(device):
    w = np.array([1.0, -2.0, 0.5], np.float32)
    data = model_bytes([helper.make_node("Add", ["x", "w"], ["s"]),
                        helper.make_node("Relu", ["s"], ["y"])],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                       initializers=[numpy_helper.from_array(w, "w")])
    m = tessel.onnx.parse(data)
    assert m.inputs == [{"name": "x", "type": "tensor(float)", "shape": ["N", 3]}]
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 6
    (y,) = m.run([x], device=device)
    assert y.device == device
    np.testing.assert_array_equal(y.numpy(), np.maximum(x + w, 0))
    (y2,) = m.run({"x": tessel.Tensor(x[:1])}, device=device)
    assert y2.shape == (1, 3)


def test_sequences_and_string_tensors_cross_as_lists_and_numpy():
    data = model_bytes(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["seq"]),
         helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
         helper.make_node("Identity", ["s"], ["s_out"])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("cat", TensorProto.FLOAT, [5]),
         helper.make_tensor_value_info("s_out", TensorProto.STRING, [2])], opset=11)
    m = tessel.onnx.parse(data)
    cat, s = m.run([np.ones(2, np.float32), np.zeros(3, np.float32), np.array(["hi", "there"])])
    np.testing.assert_array_equal(cat.numpy(), [1, 1, 0, 0, 0])
    assert s.tolist() == ["hi", "there"]


@needs_testdata
def test_a_backend_test_case_matches_its_expected_output(device):
    case = os.path.join(NODE, "test_conv_with_strides_padding")
    m = tessel.onnx.load(os.path.join(case, "model.onnx"))
    read = lambda name: numpy_helper.to_array(  # noqa: E731
        onnx.load_tensor(os.path.join(case, "test_data_set_0", name)))
    (y,) = m.run([read("input_0.pb"), read("input_1.pb")], device=device)
    np.testing.assert_allclose(y.numpy(), read("output_0.pb"), rtol=1e-5)


def test_errors_name_what_is_wrong():
    with pytest.raises(tessel.FormatError, match="not a valid ModelProto"):
        tessel.onnx.parse(b"\xff" * 40)
    with pytest.raises(tessel.IoError):
        tessel.onnx.load("/nonexistent.onnx")
    data = model_bytes([helper.make_node("Frobnicate", ["x"], ["y"])],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    with pytest.raises(tessel.UnsupportedError, match="Frobnicate"):
        tessel.onnx.parse(data)
    m = tessel.onnx.parse(model_bytes(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]))
    with pytest.raises(tessel.ShapeError, match="'x'"):
        m.run([np.zeros(3, np.float32)])
    with pytest.raises(tessel.DTypeError, match="tensor\\(float\\)"):
        m.run([np.zeros(2, np.int32)])
    with pytest.raises(ValueError, match="no input 'z'"):
        m.run({"z": np.zeros(2, np.float32)})
