"""DLPack interop: tessel.from_dlpack, and Tensor.__dlpack__ / __dlpack_device__ (bound in C++,
python/bindings/dlpack.cpp), so that numpy.from_dlpack(t) and torch.from_dlpack(t) share a
tessel tensor's memory and tessel.from_dlpack(x) shares theirs — no copies either way.

Memory is shared, not copied: a write through a numpy array or torch tensor is seen by the
tessel tensor on the other side (tessel treats values as immutable, so write only to memory no
tessel computation is reading). Either side may be deleted first; the memory is released when
the last user goes.

Strides are kept: a transposed or sliced numpy array imports as a strided tensor, which every
host kernel reads through its strides, and exports with its strides — except negative ones (a
reversed view), which torch 1.13 aborts on: such a tensor is exported as a contiguous copy.

Booleans travel as DLPack >= 0.8's kDLBool; numpy 1.24 and torch 1.13 cannot export or import
bool through DLPack (use tessel.Tensor(array), which copies, or a uint8 view). numpy refuses to
export read-only arrays (np.from_dlpack's results, Tensor.numpy() views) through DLPack;
tessel.Tensor(array) copies those.
"""
from . import _tessel

__all__ = ["from_dlpack"]

_KDL_CPU, _KDL_CUDA_HOST, _KDL_ROCM_HOST = 1, 3, 11


def from_dlpack(x, device=None):
    """A tessel.Tensor sharing the memory of `x` (zero-copy): any object with `__dlpack__`
    (numpy arrays, torch tensors, tessel tensors) or a raw DLPack capsule, which it consumes.

    `device` is the tessel host device of the result ("cpu" or "reference"; None: the default
    device). The producer's memory must be CPU memory (DeviceError otherwise); its dtype must
    be bool, an int or uint, float16/32/64, bfloat16 or complex64/128 (DTypeError otherwise).
    """
    if hasattr(x, "__dlpack__"):
        if hasattr(x, "__dlpack_device__"):
            dev_type, _ = x.__dlpack_device__()
            if int(dev_type) not in (_KDL_CPU, _KDL_CUDA_HOST, _KDL_ROCM_HOST):
                raise _tessel.DeviceError(
                    f"[from_dlpack] {type(x).__name__} is on DLPack device type {int(dev_type)}"
                    " (not CPU memory); copy it to the CPU first")
        capsule = x.__dlpack__()
    elif type(x).__name__ == "PyCapsule":
        capsule = x
    else:
        raise TypeError(f"[from_dlpack] expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(x).__name__}")
    return _tessel._from_dlpack_capsule(capsule, device)
