"""tessel.Tensor: construction from numpy / scalars / nested lists, the numpy bridge, dtypes,
devices, properties and the operators with Python scalars."""
import numpy as np
import pytest

import tessel

DEVICES = ["cpu", "reference"]

NUMPY_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                np.float32, np.float64, np.complex64, np.uint16, np.uint32, np.uint64,
                np.complex128]


@pytest.mark.parametrize("np_dtype", NUMPY_DTYPES)
def test_numpy_round_trip_keeps_dtype_and_values(np_dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(np_dtype)
    t = tessel.Tensor(a)
    assert t.dtype == np.dtype(np_dtype)
    assert t.dtype.numpy == np.dtype(np_dtype)
    assert t.shape == (3, 4) and t.ndim == 2 and t.size == 12 and len(t) == 3
    b = t.numpy()
    assert b.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(b, a)


def test_numpy_input_is_copied_and_non_contiguous_input_read_by_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = a[::2, ::-3]  # strided, negative step
    t = tessel.Tensor(view)
    np.testing.assert_array_equal(t.numpy(), view)
    a[:] = -1  # the tensor holds its own copy
    assert t.numpy()[0, 0] == 5


def test_numpy_view_is_zero_copy_read_only_and_outlives_the_tensor():
    t = tessel.Tensor(np.ones((2, 3), np.float32)) * 2
    a = t.numpy()
    assert not a.flags.writeable
    assert a.ctypes.data == t.numpy().ctypes.data  # the same buffer, not a copy
    with pytest.raises(ValueError):
        a[0, 0] = 5
    del t
    np.testing.assert_array_equal(a, np.full((2, 3), 2, np.float32))


def test_non_native_byte_order():
    a = np.arange(5, dtype=">i4")
    np.testing.assert_array_equal(tessel.Tensor(a).numpy(), np.arange(5))


@pytest.mark.parametrize("value,dtype", [(True, tessel.bool_), (3, tessel.int64),
                                         (2.5, tessel.float32), (1 + 2j, tessel.complex64)])
def test_python_scalars_take_pytorchs_default_dtypes(value, dtype):
    t = tessel.Tensor(value)
    assert t.dtype == dtype and t.shape == ()
    assert t.item() == value
    assert type(t.item()) is type(value)


def test_nested_lists_and_explicit_dtype_and_device():
    t = tessel.Tensor([[1, 2, 3], [4, 5, 6]])
    assert t.dtype == tessel.int64 and t.shape == (2, 3)
    assert tessel.Tensor([[1.0, 2], [3, 4]]).dtype == tessel.float32
    f = tessel.Tensor([[1, 2], [3, 4]], dtype="float64", device="reference")
    assert f.dtype == tessel.float64 and f.device == "reference"
    np.testing.assert_array_equal(f.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    np_typed = tessel.Tensor(np.float64(1.5))
    assert np_typed.dtype == tessel.float64  # numpy scalars keep their dtype


def test_tensor_from_tensor_casts_and_moves():
    t = tessel.Tensor([1.5, 2.5])
    assert tessel.Tensor(t)._same(t)  # no copy, no cast
    u = tessel.Tensor(t, dtype=tessel.float64, device="reference")
    assert u.dtype == tessel.float64 and u.device == "reference"
    np.testing.assert_array_equal(u.numpy(), [1.5, 2.5])


def test_bad_data_raises_a_clear_error():
    with pytest.raises(ValueError, match="inhomogeneous"):
        tessel.Tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="non-numeric"):
        tessel.Tensor(["a", "b"])
    with pytest.raises(TypeError):
        tessel.Tensor(object())


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_dtypes_numpy_lacks_are_cast_in_tessel(name):
    t = tessel.Tensor([1.0, 2.5, -3.0], dtype=name)
    assert t.dtype.name == name and t.dtype.numpy is None
    with pytest.raises(TypeError, match="numpy has no"):
        t.numpy()
    np.testing.assert_array_equal(t.astype(tessel.float32).numpy(), [1.0, 2.5, -3.0])
    assert "dtype=" + name in repr(t)


def test_dtype_objects_compare_with_every_spelling():
    f32 = tessel.float32
    assert f32 == "float32" and f32 == "f32" and f32 == np.float32 and f32 == np.dtype("f4")
    assert f32 != tessel.float64 and f32 != "int32" and f32 != "not a dtype"
    assert tessel.dtype("torch.bfloat16") == tessel.bfloat16
    assert tessel.dtype(float) == tessel.float32 and tessel.dtype(int) == tessel.int64
    assert tessel.dtype("double") == tessel.float64
    assert f32.itemsize == 4 and f32.short_name == "f32" and repr(f32) == "tessel.float32"
    assert tessel.bool_.name == "bool" and tessel.int8.is_integer
    assert tessel.complex128.is_storage_only and not f32.is_storage_only
    assert len({tessel.float32, tessel.dtype("f32")}) == 1  # hashable, equal hashes
    with pytest.raises(TypeError, match="unknown dtype name"):
        tessel.dtype("float31")
    assert len(tessel.dtypes) == len({d.name for d in tessel.dtypes})


def test_array_protocol_and_conversions():
    t = tessel.Tensor([[1.0, 2.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    assert np.array(t, dtype=np.float64).dtype == np.float64
    assert t.tolist() == [[1.0, 2.0]]
    s = tessel.Tensor(7)
    assert int(s) == 7 and float(s) == 7.0 and [0, 1, 2, 3, 4, 5, 6, 7][s] == 7
    assert bool(tessel.Tensor(True))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(tessel.Tensor([1, 2]))
    with pytest.raises(ValueError, match="one element"):
        tessel.Tensor([1, 2]).item()
    with pytest.raises(TypeError):
        len(tessel.Tensor(1.0))


@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic_operators_with_scalars_on_either_side(device):
    a = np.array([[1.0, -2.0, 3.5], [0.5, 4.0, -1.0]], np.float32)
    b = np.array([[2.0, 0.5, -1.0], [3.0, 1.0, 2.0]], np.float32)
    x, y = tessel.Tensor(a, device=device), tessel.Tensor(b, device=device)
    cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
             (x + 2, a + 2), (2 + x, 2 + a), (x - 1.5, a - 1.5), (1.5 - x, 1.5 - a),
             (x * 3, a * 3), (3 * x, 3 * a), (x / 4, a / 4), (4 / y, 4 / b),
             (abs(x) ** 0.5, np.abs(a) ** 0.5), (2 ** x, 2.0 ** a), (-x, -a), (+x, a)]
    for got, want in cases:
        assert got.device == device and got.dtype == tessel.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_comparisons_give_bool(device):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    x = tessel.Tensor(a, device=device)
    for got, want in [(x < 2, a < 2), (x <= 2, a <= 2), (x > 2, a > 2), (x >= 2, a >= 2),
                      (x == 2, a == 2), (x != 2, a != 2), (2 < x, 2 < a)]:
        assert got.dtype == tessel.bool_
        np.testing.assert_array_equal(got.numpy(), want)


def test_scalar_promotion_follows_pytorch():
    i = tessel.Tensor([1, 2, 3])  # int64
    assert (i + 1).dtype == tessel.int64
    assert (i + 1.5).dtype == tessel.float32
    np.testing.assert_allclose((i + 1.5).numpy(), [2.5, 3.5, 4.5])
    h = tessel.Tensor([1.0], dtype=tessel.float16)
    assert (h * 2.0).dtype == tessel.float16  # a Python float does not widen f16
    assert (h + tessel.Tensor([1.0])).dtype == tessel.float32  # tensor-tensor promotes
    b = tessel.Tensor([True, False])
    assert (b + 1).dtype == tessel.int64
    assert (i / 2).dtype == tessel.float32  # true division, as in PyTorch
    np.testing.assert_allclose((i / 2).numpy(), [0.5, 1.0, 1.5])


def test_numpy_array_operand_promotes_like_a_tensor():
    x = tessel.Tensor([1.0, 2.0])
    y = x + np.array([1.0, 1.0])  # an f64 array is an f64 tensor
    assert isinstance(y, tessel.Tensor) and y.dtype == tessel.float64
    z = np.array([1.0, 1.0], np.float32) + x  # numpy defers to Tensor's reflected operator
    assert isinstance(z, tessel.Tensor)
    np.testing.assert_array_equal(z.numpy(), [2.0, 3.0])


def test_laziness_and_eval():
    x = tessel.Tensor([1.0, 2.0])
    y = x * 3 + 1
    assert x.is_evaluated and not y.is_evaluated
    assert y.eval() is not None and y.is_evaluated
    z, w = y * 2, y - 1
    tessel.eval(z, [w])
    assert z.is_evaluated and w.is_evaluated
    np.testing.assert_array_equal(z.numpy(), [8.0, 14.0])


def test_devices_are_explicit():
    a = tessel.Tensor([1.0, 2.0], device="cpu")
    b = tessel.Tensor([1.0, 2.0], device="reference")
    with pytest.raises(RuntimeError, match="devices 'cpu' and 'reference'"):
        a + b
    np.testing.assert_array_equal((a + b.to("cpu")).numpy(), [2.0, 4.0])
    with pytest.raises(tessel.DeviceError, match="cuda9"):
        tessel.Tensor([1.0], device="cuda9")


def test_default_device_is_cpu_and_settable():
    assert tessel.default_device() == "cpu"
    tessel.set_default_device("reference")
    try:
        assert tessel.Tensor(1.0).device == "reference"
    finally:
        tessel.set_default_device("cpu")
    with pytest.raises(tessel.DeviceError):
        tessel.set_default_device("nope")


def test_repr_shows_values_dtype_and_device():
    r = repr(tessel.Tensor([[1, 2], [3, 4]], dtype=tessel.int32))
    assert r.startswith("tessel.Tensor([[1, 2],") and "dtype=int32" in r and "device='cpu'" in r


def test_tensors_are_immutable_and_unhashable():
    t = tessel.Tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 3.0
    with pytest.raises(TypeError):
        hash(t)


def test_empty_and_zero_dim_tensors():
    e = tessel.Tensor(np.zeros((0, 3), np.float32))
    assert e.shape == (0, 3) and e.numpy().shape == (0, 3)
    assert (e + 1).numpy().shape == (0, 3)
    s = tessel.Tensor(np.float32(4.0))
    assert s.shape == () and (s * s).item() == 16.0
