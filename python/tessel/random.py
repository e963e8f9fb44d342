"""tessel.random: tensors of random numbers from Tessel's counter-based generator (the
RngUniform / RngNormal kinds). There is no hidden global state: the same shape, parameters and
seed give the same bits on every backend and every call, so pass a different seed for a
different draw (as with JAX's keys)."""
from . import _tessel, ops

__all__ = ["uniform", "normal"]


def _draw(kind, shape, seed, dtype, device, **params):
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"tessel.random.{kind}: seed must be an int, got {type(seed).__name__}")
    shape = [int(shape)] if isinstance(shape, int) else [int(s) for s in shape]
    fn = ops.rng_uniform if kind == "uniform" else ops.rng_normal
    out = fn(shape=shape, dtype=_tessel.dtype(dtype), seed=seed, **params)
    return out if device is None or out.device == device else out.to(device)


def uniform(shape=(), low=0.0, high=1.0, *, seed, dtype=_tessel.float32, device=None):
    """Uniform samples in [low, high) of the given shape (RngUniform)."""
    return _draw("uniform", shape, seed, dtype, device, low=float(low), high=float(high))


def normal(shape=(), mean=0.0, std=1.0, *, seed, dtype=_tessel.float32, device=None):
    """Normal samples with the given mean and standard deviation (RngNormal)."""
    return _draw("normal", shape, seed, dtype, device, mean=float(mean), std=float(std))
