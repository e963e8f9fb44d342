"""DLPack with numpy and raw capsules: zero-copy both ways (proven by data pointers), shared
writes, lifetimes against the host allocator's statistics, strided inputs through ops on both
host devices, 0-d / empty / bool tensors, the capsule protocol and clear errors."""
import ctypes
import gc

import numpy as np
import pytest

import tessel
from tessel import ops

DEVICES = ["cpu", "reference"]


def np_ptr(a):
    return a.__array_interface__["data"][0]


# ---- a hand-made DLPack producer (ctypes), for dtypes, devices and offsets numpy won't give ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAME = b"dltensor"


class Producer:
    """Owns a buffer and a DLManagedTensor over it; counts deleter calls."""

    def __init__(self, buffer, shape, code, bits, lanes=1, strides=None, byte_offset=0,
                 device_type=1):
        self.buffer = buffer
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.deleted = 0

        def deleter(_):
            self.deleted += 1
        self.deleter = DELETER(deleter)
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = np_ptr(buffer)
        t.device = DLDevice(device_type, 0)
        t.ndim = len(shape)
        t.dtype = DLDataType(code, bits, lanes)
        t.shape = self.shape
        t.strides = self.strides
        t.byte_offset = byte_offset
        self.managed.deleter = self.deleter

    def capsule(self):
        return _capsule_new(ctypes.addressof(self.managed), _NAME, None)


# ---- export: tessel -> numpy ----

def test_dlpack_device():
    for dev in DEVICES:
        assert tessel.Tensor([1.0], device=dev).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_export_to_numpy_is_zero_copy(device):
    x = (tessel.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=device) * 2).eval()
    a = np.from_dlpack(x)
    assert np_ptr(a) == x._data_ptr()
    assert a.shape == (3, 4) and a.dtype == np.float32
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) * 2)


def test_export_evaluates_lazy_tensor():
    x = tessel.Tensor(np.ones(3, np.float32)) + 1
    assert not x.is_evaluated
    a = np.from_dlpack(x)
    np.testing.assert_array_equal(a, [2, 2, 2])
    assert np_ptr(a) == x._data_ptr()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "float16",
                                   "float32", "float64", "complex64"])
def test_export_dtypes(dtype):
    src = np.arange(6).astype(dtype)
    x = tessel.Tensor(src)
    a = np.from_dlpack(x)
    assert a.dtype == np.dtype(dtype) and np_ptr(a) == x._data_ptr()
    np.testing.assert_array_equal(a, src)


def test_export_unsupported_dtype():
    x = tessel.Tensor([1.0, 2.0]).astype("float8_e4m3fn")
    with pytest.raises(tessel.DTypeError, match="DLPack has no f8_e4m3fn"):
        x.__dlpack__()


def test_export_stream_must_be_none():
    with pytest.raises(tessel.InvalidValueError, match="stream"):
        tessel.Tensor([1.0]).__dlpack__(stream=1)


# ---- import: numpy -> tessel ----

@pytest.mark.parametrize("device", DEVICES)
def test_import_from_numpy_is_zero_copy(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tessel.from_dlpack(a, device=device)
    assert x.device == device and x.shape == (2, 3) and x.dtype == tessel.float32
    assert x._data_ptr() == np_ptr(a)
    np.testing.assert_array_equal((x + 1).numpy(), a + 1)


def test_import_dtypes():
    for dtype in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float16", "float32", "float64", "complex64", "complex128"]:
        a = np.arange(4).astype(dtype)
        x = tessel.from_dlpack(a)
        assert x.dtype == np.dtype(dtype), dtype
        assert x._data_ptr() == np_ptr(a)
        np.testing.assert_array_equal(x.numpy(), a)


def test_writes_are_shared():
    a = np.zeros(4, np.float32)
    x = tessel.from_dlpack(a)
    a[1] = 5.0
    assert x.numpy()[1] == 5.0
    assert (x + 0).numpy()[1] == 5.0
    b = np.from_dlpack(x)  # numpy -> tessel -> numpy: one buffer throughout
    assert np_ptr(b) == np_ptr(a)
    a[2] = 7.0
    assert b[2] == 7.0


def test_round_trip_through_tessel():
    x = tessel.Tensor(np.arange(5, dtype=np.int32))
    y = tessel.from_dlpack(x)
    assert y._data_ptr() == x._data_ptr()
    z = tessel.from_dlpack(x.__dlpack__(), device="reference")  # a raw capsule
    assert z._data_ptr() == x._data_ptr() and z.device == "reference"
    np.testing.assert_array_equal(z.numpy(), [0, 1, 2, 3, 4])


def strided_cases():
    base = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    row = base[0].copy()
    return {
        "transposed": base.T,
        "sliced": base[1:, ::2],
        "offset": base[2:, 1:],
        "reversed": base[::-1, ::-1],
        "broadcast": np.lib.stride_tricks.as_strided(row, (3, 5), (0, 4)),
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(strided_cases()))
def test_strided_import_computes(device, case):
    a = strided_cases()[case]
    x = tessel.from_dlpack(a, device=device)
    assert x.shape == a.shape
    # Zero-copy: element 0 of the tensor is element 0 of the array.
    assert x._data_ptr() == np_ptr(a)
    e = np.exp(a)
    checks = [
        (x.numpy(), a),
        ((x * x + 1).numpy(), a * a + 1),
        (ops.mat_mul(x, x, transpose_b=True).numpy(), a @ a.T),
        (ops.reduce(x, op="Sum", axes=[1]).numpy(), a.sum(1)),
        (ops.reduce(x, op="Max", axes=[0]).numpy(), a.max(0)),
        (ops.reshape(x, shape=[-1]).numpy(), a.reshape(-1)),
        (ops.transpose(x, perm=[1, 0]).numpy(), a.T),
        (ops.softmax(x).numpy(), e / e.sum(-1, keepdims=True)),
        (ops.slice(x, starts=[1], ends=[3], axes=[0]).numpy(), a[1:3]),
        (ops.concat([x, x], axis=0).numpy(), np.concatenate([a, a])),
        (ops.cumsum(x, axis=1).numpy(), np.cumsum(a, 1)),
        (x.astype("float64").numpy(), a.astype(np.float64)),
        (x.to("cpu" if device == "reference" else "reference").numpy(), a),
    ]
    for got, want in checks:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_strided_export_keeps_strides():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tessel.from_dlpack(a.T)
    b = np.from_dlpack(x)
    assert b.strides == a.T.strides and np_ptr(b) == np_ptr(a)
    np.testing.assert_array_equal(b, a.T)


def test_negative_strides_export_as_contiguous_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[::-1, ::-1]
    x = tessel.from_dlpack(a)
    assert x._data_ptr() == np_ptr(a)
    b = np.from_dlpack(x)
    assert b.flags.c_contiguous and np_ptr(b) != np_ptr(a)
    np.testing.assert_array_equal(b, a)


def test_zero_dim():
    a = np.array(3.5)
    x = tessel.from_dlpack(a)
    assert x.shape == () and x.item() == 3.5 and x._data_ptr() == np_ptr(a)
    b = np.from_dlpack(tessel.Tensor(2.0))
    assert b.shape == () and b == 2.0


def test_empty():
    x = tessel.from_dlpack(np.zeros((0, 3), np.float32))
    assert x.shape == (0, 3) and x.dtype == tessel.float32
    assert (x + 1).shape == (0, 3)
    b = np.from_dlpack(tessel.Tensor(np.zeros((2, 0), np.int64)))
    assert b.shape == (2, 0) and b.dtype == np.int64


def test_bool():
    # numpy 1.24 cannot carry bool through DLPack; tessel <-> tessel uses DLPack 0.8's kDLBool.
    x = tessel.Tensor([True, False, True])
    y = tessel.from_dlpack(x.__dlpack__())
    assert y.dtype == tessel.bool_ and y._data_ptr() == x._data_ptr()
    assert y.numpy().tolist() == [True, False, True]
    buf = np.array([1, 0, 1], np.uint8)
    p = Producer(buf, [3], code=6, bits=8)
    z = tessel.from_dlpack(p.capsule())
    assert z.dtype == tessel.bool_ and z.numpy().tolist() == [True, False, True]


# ---- lifetimes ----

def test_consumer_outlives_producer():
    n = 1 << 16
    x = (tessel.Tensor(np.ones(n, np.float32)) * 2).eval()  # storage from the host allocator
    gc.collect()
    before = tessel.memory_stats()["in_use"]
    a = np.from_dlpack(x)
    del x
    gc.collect()
    assert tessel.memory_stats()["in_use"] == before  # the capsule holds the block
    for _ in range(5):  # same-size work must not be handed the exported block
        (tessel.Tensor(np.full(n, 9.0, np.float32)) + 1).eval().numpy()
    np.testing.assert_array_equal(a, np.full(n, 2.0))
    del a
    gc.collect()
    assert tessel.memory_stats()["in_use"] <= before - 4 * n


def test_unconsumed_capsule_releases_memory():
    n = 1 << 16
    x = (tessel.Tensor(np.ones(n, np.float32)) + 1).eval()
    gc.collect()
    before = tessel.memory_stats()["in_use"]
    capsule = x.__dlpack__()
    del x
    gc.collect()
    assert tessel.memory_stats()["in_use"] == before
    del capsule
    gc.collect()
    assert tessel.memory_stats()["in_use"] <= before - 4 * n


def test_imported_tensor_outlives_numpy_array():
    a = np.arange(1000, dtype=np.float64)
    ptr = np_ptr(a)
    x = tessel.from_dlpack(a)
    del a
    gc.collect()
    assert x._data_ptr() == ptr
    np.testing.assert_array_equal((x * 1).numpy(), np.arange(1000))


def test_producer_deleter_called_once():
    buf = np.arange(12, dtype=np.float32)
    p = Producer(buf, [2, 3], code=2, bits=32, strides=[4, 1], byte_offset=8)
    x = tessel.from_dlpack(p.capsule(), device="reference")
    # byte_offset 8 = two floats in; rows of stride 4.
    np.testing.assert_array_equal(x.numpy(), [[2, 3, 4], [6, 7, 8]])
    assert x._data_ptr() == np_ptr(buf) + 8
    y = x + 1
    del x
    gc.collect()
    assert p.deleted == 0  # y's pending op still reads x
    y.eval()
    del y
    gc.collect()
    assert p.deleted == 1


def test_empty_import_releases_producer_at_once():
    buf = np.zeros(1, np.float32)
    p = Producer(buf, [0, 4], code=2, bits=32)
    x = tessel.from_dlpack(p.capsule())
    assert x.shape == (0, 4) and p.deleted == 1


# ---- the capsule protocol and errors ----

def test_capsule_renamed_when_consumed():
    cap = tessel.Tensor([1.0, 2.0]).__dlpack__()
    assert _capsule_is_valid(cap, b"dltensor")
    tessel.from_dlpack(cap)
    assert _capsule_is_valid(cap, b"used_dltensor")
    with pytest.raises(tessel.InvalidValueError, match="already consumed"):
        tessel.from_dlpack(cap)


@pytest.mark.parametrize("code,bits,lanes", [(2, 128, 1), (2, 8, 1), (0, 32, 4), (3, 64, 1),
                                             (5, 32, 1), (6, 16, 1)])
def test_unsupported_dtype_rejected(code, bits, lanes):
    buf = np.zeros(8, np.float64)
    p = Producer(buf, [2], code=code, bits=bits, lanes=lanes)
    cap = p.capsule()
    with pytest.raises(tessel.DTypeError, match="no Tessel equivalent"):
        tessel.from_dlpack(cap)
    assert _capsule_is_valid(cap, b"dltensor")  # not consumed: its producer still owns it
    assert p.deleted == 0


def test_numpy_refuses_unsupported_dtype():
    with pytest.raises(BufferError):
        tessel.from_dlpack(np.zeros(3, np.longdouble))


def test_non_cpu_rejected():
    buf = np.zeros(4, np.float32)
    p = Producer(buf, [4], code=2, bits=32, device_type=2)
    with pytest.raises(tessel.DeviceError, match="CUDA"):
        tessel.from_dlpack(p.capsule())

    class OnGpu:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be asked for its capsule")
    with pytest.raises(tessel.DeviceError, match="not CPU memory"):
        tessel.from_dlpack(OnGpu())


def test_bad_arguments():
    with pytest.raises(TypeError, match="__dlpack__"):
        tessel.from_dlpack([1, 2, 3])
    with pytest.raises(tessel.DeviceError):
        tessel.from_dlpack(np.zeros(2), device="no_such_device")
    with pytest.raises(tessel.InvalidValueError, match="capsule"):
        tessel._tessel._from_dlpack_capsule(object())
