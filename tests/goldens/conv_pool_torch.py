"""PyTorch pieces shared by the ConvPool golden generators (gen_conv_pool.py and
gen_conv_pool_grad.py): ONNX-style pads as F.pad arguments and the functional ops per rank."""
import torch.nn.functional as F


def fpad(begins, ends):
    """F.pad's argument (last dim first) for ONNX begins/ends listed first dim first."""
    out = []
    for b, e in zip(reversed(begins), reversed(ends)):
        out += [b, e]
    return out


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
MAXP = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVGP = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
AAVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
AMAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}
