"""DLPack with PyTorch: torch.from_dlpack / torch.utils.dlpack on tessel tensors and
tessel.from_dlpack on torch tensors share memory (proven by data pointers), writes show on the
other side, and either side may die first."""
import gc

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (DLPack interop with it "
                            "is untested here)")

import numpy as np  # noqa: E402

import tessel  # noqa: E402

DEVICES = ["cpu", "reference"]


@pytest.mark.parametrize("device", DEVICES)
def test_tessel_to_torch_is_zero_copy(device):
    x = (tessel.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=device) + 1).eval()
    t = torch.from_dlpack(x)
    assert t.data_ptr() == x._data_ptr()
    assert t.shape == (2, 3) and t.dtype == torch.float32
    assert torch.equal(t, torch.arange(1, 7, dtype=torch.float32).reshape(2, 3))
    u = torch.utils.dlpack.from_dlpack(x.__dlpack__())
    assert u.data_ptr() == x._data_ptr()


@pytest.mark.parametrize("device", DEVICES)
def test_torch_to_tessel_is_zero_copy(device):
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    x = tessel.from_dlpack(t, device=device)
    assert x._data_ptr() == t.data_ptr() and x.dtype == tessel.float64
    np.testing.assert_array_equal((x * 2).numpy(), (t * 2).numpy())
    y = tessel.from_dlpack(torch.utils.dlpack.to_dlpack(t))  # a raw capsule
    assert y._data_ptr() == t.data_ptr()


def test_dtypes():
    for dt in [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.float16,
               torch.bfloat16, torch.float32, torch.float64, torch.complex64]:
        t = torch.arange(4).to(dt)
        x = tessel.from_dlpack(t)
        assert x.dtype == tessel.dtype(dt) and x._data_ptr() == t.data_ptr(), dt
        back = torch.from_dlpack(x)
        assert back.dtype == dt and back.data_ptr() == t.data_ptr()
        assert torch.equal(back, t)


def test_bfloat16_computes():
    t = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    x = tessel.from_dlpack(t)
    np.testing.assert_array_equal(x.astype("float32").numpy(), t.float().numpy())


def test_writes_are_shared_both_ways():
    x = tessel.Tensor(np.zeros(4, np.float32))
    t = torch.from_dlpack(x)
    t[2] = 3.0  # torch's view is writable: the tessel tensor sees it
    assert x.numpy()[2] == 3.0
    s = torch.zeros(3, dtype=torch.int32)
    y = tessel.from_dlpack(s)
    s[0] = 42
    assert y.numpy()[0] == 42 and (y + 0).numpy()[0] == 42


def test_strided_torch_tensor():
    base = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    for t in [base.t(), base[1:, ::2], base.expand(2, 4, 5)[:, :, 1]]:
        for device in DEVICES:
            x = tessel.from_dlpack(t, device=device)
            assert x._data_ptr() == t.data_ptr()
            np.testing.assert_array_equal((x * 2 + 1).numpy(), (t * 2 + 1).numpy())
    back = torch.from_dlpack(tessel.from_dlpack(base.t()))
    assert back.stride() == base.t().stride() and torch.equal(back, base.t())


def test_negative_strides_export_as_a_copy():
    # torch 1.13 aborts the process on negative DLPack strides; tessel hands it a copy instead.
    a = np.arange(6, dtype=np.float32)[::-1]
    x = tessel.from_dlpack(a)
    assert x._data_ptr() == a.__array_interface__["data"][0]  # the import is zero-copy
    t = torch.from_dlpack(x)
    assert t.tolist() == [5, 4, 3, 2, 1, 0] and t.stride() == (1,)


def test_lifetimes():
    n = 1 << 16
    x = (tessel.Tensor(np.ones(n, np.float32)) * 3).eval()
    gc.collect()
    before = tessel.memory_stats()["in_use"]
    t = torch.from_dlpack(x)
    del x
    gc.collect()
    assert tessel.memory_stats()["in_use"] == before
    for _ in range(3):
        (tessel.Tensor(np.zeros(n, np.float32)) + 5).eval()
    assert torch.equal(t, torch.full((n,), 3.0))
    del t
    gc.collect()
    assert tessel.memory_stats()["in_use"] <= before - 4 * n

    s = torch.arange(1000, dtype=torch.int64)
    y = tessel.from_dlpack(s)
    del s
    gc.collect()
    np.testing.assert_array_equal((y + 1).numpy(), np.arange(1, 1001))


def test_zero_dim_and_empty():
    x = tessel.from_dlpack(torch.tensor(2.5))
    assert x.shape == () and x.item() == 2.5
    t = torch.from_dlpack(tessel.Tensor(np.float32(4.0)))
    assert t.shape == () and t.item() == 4.0
    e = tessel.from_dlpack(torch.zeros(0, 5))
    assert e.shape == (0, 5)
    assert torch.from_dlpack(tessel.Tensor(np.zeros((3, 0), np.float32))).shape == (3, 0)


def test_bool_is_refused_by_torch_1_13_not_crashing():
    # torch 1.13 has no DLPack bool; a newer torch would take tessel's kDLBool.
    x = tessel.Tensor([True, False])
    try:
        t = torch.from_dlpack(x)
    except (RuntimeError, TypeError, BufferError):
        return
    assert t.dtype == torch.bool and t.tolist() == [True, False]
