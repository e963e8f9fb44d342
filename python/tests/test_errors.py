"""tessel::Error reaches Python as an exception class per error kind, each also the builtin a
Python user catches (ValueError, TypeError, NotImplementedError, OSError, RuntimeError,
MemoryError), with the C++ message intact. Bad input never crashes the interpreter."""
import numpy as np
import pytest

import tessel


def test_hierarchy():
    pairs = [(tessel.ShapeError, ValueError), (tessel.DTypeError, TypeError),
             (tessel.UnsupportedError, NotImplementedError), (tessel.FormatError, ValueError),
             (tessel.IoError, OSError), (tessel.DeviceError, RuntimeError),
             (tessel.OutOfMemoryError, MemoryError), (tessel.InternalError, RuntimeError),
             (tessel.InvalidValueError, ValueError)]
    for cls, builtin in pairs:
        assert issubclass(cls, tessel.Error) and issubclass(cls, builtin)
        assert cls.__module__ == "tessel"


def test_shape_error_keeps_the_message():
    a, b = tessel.Tensor(np.ones((2, 3), np.float32)), tessel.Tensor(np.ones((4, 3), np.float32))
    with pytest.raises(tessel.ShapeError) as e:
        a + b
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith("[Binary]") and "[2,3] and [4,3] do not broadcast" in str(e.value)
    with pytest.raises(ValueError, match=r"\[MatMul\]"):
        tessel.ops.mat_mul(a, a)


def test_dtype_error_is_a_type_error():
    f = tessel.Tensor([1.0, 2.0])
    i = tessel.Tensor([1, 2], dtype=tessel.int32)
    with pytest.raises(TypeError, match=r"\[Binary\]"):
        tessel.ops.binary(f, i, op="Add")  # the raw op kind does not promote
    with pytest.raises(tessel.DTypeError, match="unknown dtype name 'f33'"):
        f.astype("f33")


def test_attribute_errors_name_the_attribute():
    x = tessel.Tensor([[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"\[Softmax\] no attribute 'axes' \(it has axis, log\)"):
        tessel.op("Softmax", x, axes=[0])
    with pytest.raises(TypeError, match=r"'axis' is an int, got a float"):
        tessel.op("Softmax", x, axis=0.5)
    with pytest.raises(TypeError, match=r"attribute 'axes' \(ints\): cannot use 'abc'"):
        tessel.op("Reduce", x, op="Sum", axes="abc")
    with pytest.raises(ValueError, match="is not a ReduceOp"):
        tessel.op("Reduce", x, op="Average")
    with pytest.raises(ValueError, match="not a value of ReduceOp"):
        tessel.op("Reduce", x, op=99)
    with pytest.raises(TypeError, match="missing a required argument: 'op'"):
        tessel.ops.reduce(x)


def test_unknown_op_and_graph_attributes():
    with pytest.raises(ValueError, match="neither an op kind nor a seed operation ID"):
        tessel.op("NoSuchOp", tessel.Tensor(1.0))
    with pytest.raises(NotImplementedError, match="graph attributes"):
        tessel.op("ElementwiseRegion", tessel.Tensor(1.0), body=object())


def test_out_of_memory_is_a_memory_error():
    huge = tessel.ops.range(start=0.0, limit=1e12, delta=1.0)  # 4 TB of float32
    with pytest.raises(MemoryError, match="exceeds this machine's physical memory"):
        huge.eval()


def test_io_and_format_errors(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        tessel.load_safetensors(tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(tessel.FormatError, match="bad.safetensors"):
        tessel.load_safetensors(bad)


def test_many_bad_calls_do_not_crash():
    x = tessel.Tensor(np.ones((2, 2), np.float32))
    bad_calls = [
        lambda: tessel.ops.reshape(x, shape=[3]),
        lambda: tessel.ops.transpose(x, perm=[0, 0]),
        lambda: tessel.ops.softmax(x, axis=5),
        lambda: tessel.ops.gather(x, tessel.Tensor([0.5]), axis=0),
        lambda: tessel.ops.concat([x, tessel.Tensor(np.ones((3, 3), np.float32))], axis=0),
        lambda: tessel.ops.slice(x, starts=[0], ends=[1], axes=[7]),
        lambda: tessel.ops.conv(x, x),
        lambda: tessel.ops.attention(x, x, x),
        lambda: tessel.op("Cast", x, to="nope"),
    ]
    for call in bad_calls:
        with pytest.raises(tessel.Error):
            call()
    np.testing.assert_array_equal((x + 1).numpy(), np.full((2, 2), 2.0))  # still usable
