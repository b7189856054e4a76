"""Exports one shape-arithmetic model to ONNX with torch and records torch's outputs.

Usage: /usr/bin/python3 export_shape_models.py MODEL OUT_DIR
MODEL: window_pad | window_pad_static | heads_reshape | slice_from_shape | floor_divide |
       interpolate
Writes OUT_DIR/model.onnx and, for each input shape of the model, OUT_DIR/set_N/input_0.pb and
output_0.pb as ONNX TensorProtos. These models compute pad amounts, reshape targets and slice
bounds from Shape -> Gather -> arithmetic -> Concat chains, as exports of real models do (a
windowed-attention vision transformer pads its feature map to a multiple of the window). The
dynamic axes are named, so coil imports one graph with symbolic sizes and runs it at every
recorded shape. Weights are random with a fixed seed; nothing here is committed. Runs with
Debian's torch 1.13.
"""
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

WINDOW = 7


class WindowPad(nn.Module):
    """Windowed attention's partition: pad H and W up to a multiple of the window, split into
    windows, mix channels per window, merge the windows and crop the padding off again."""

    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):  # [B, H, W, C]
        b, h, w, c = x.shape
        ph = (WINDOW - h % WINDOW) % WINDOW
        pw = (WINDOW - w % WINDOW) % WINDOW
        x = F.pad(x, (0, 0, 0, pw, 0, ph), value=0.5)
        hp, wp = h + ph, w + pw
        x = x.view(b, hp // WINDOW, WINDOW, wp // WINDOW, WINDOW, c)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(-1, WINDOW * WINDOW, c)
        x = x + x.mean(dim=1, keepdim=True)  # the padding takes part, as in the real model
        x = self.proj(x)
        x = x.view(b, hp // WINDOW, wp // WINDOW, WINDOW, WINDOW, c)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, c)
        return x[:, :h, :w, :].contiguous()


class HeadsReshape(nn.Module):
    """Multi-head self-attention whose head split reads the sizes from the input:
    [batch, -1, heads, dim] built by Shape -> Gather -> Unsqueeze -> Concat."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):  # [B, T, C]
        b = x.shape[0]
        c = x.shape[2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, -1, self.heads, c // self.heads).transpose(1, 2)
        k = k.reshape(b, -1, self.heads, c // self.heads).transpose(1, 2)
        v = v.reshape(b, -1, self.heads, c // self.heads).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, -1, c))


class SliceFromShape(nn.Module):
    """Slice bounds from shape arithmetic: the first and the last floor(L / 2) positions (a
    negative start), and a middle window [L // 4, L - L // 4)."""

    def forward(self, x):  # [B, C, L]
        n = x.shape[2]
        half = n // 2
        first = x[:, :, :half]
        last = x[:, :, -half:]
        mid = x[:, :, n // 4 : n - n // 4]
        return torch.cat([first * last, mid], dim=2)


class FloorDivide(nn.Module):
    """torch.div(..., rounding_mode="floor") on sizes, which torch exports with a sign fix-up
    (Div, then Where(Mod != 0 and signs differ, q - 1, q)), and a ceiling division."""

    def forward(self, x):  # [B, C, L]
        n = x.shape[2]
        q = torch.div(n, 4, rounding_mode="floor")
        c = torch.div(n + 3, 4, rounding_mode="floor")
        return torch.cat([x[:, :, :q], x[:, :, n - c :]], dim=2)


class Interpolate(nn.Module):
    """Resize sizes computed from shapes: a downscale whose size torch recomputes in floating
    point (floor(h * 0.5) through Cast and Floor), then back up to the input's size."""

    def forward(self, x):  # [B, C, H, W]
        y = F.interpolate(x, scale_factor=0.5, mode="nearest", recompute_scale_factor=True)
        return F.interpolate(y * 2.0, size=x.shape[2:], mode="nearest")


MODELS = {
    # name: (module, input shapes (first one traced), dynamic axes of the input or None)
    "window_pad": (WindowPad, [(2, 10, 12, 8), (2, 14, 7, 8), (2, 3, 16, 8)], {1: "h", 2: "w"}),
    "window_pad_static": (WindowPad, [(2, 10, 12, 8)], None),
    "heads_reshape": (HeadsReshape, [(2, 5, 32), (3, 11, 32)], {0: "batch", 1: "seq"}),
    "slice_from_shape": (SliceFromShape, [(2, 3, 9), (1, 3, 16), (2, 3, 2)], {0: "batch", 2: "len"}),
    "floor_divide": (FloorDivide, [(1, 2, 9), (2, 2, 12), (1, 2, 3)], {0: "batch", 2: "len"}),
    "interpolate": (Interpolate, [(1, 2, 9, 6), (1, 2, 8, 11)], {2: "h", 3: "w"}),
}


def main():
    name, out_dir = sys.argv[1], sys.argv[2]
    module, shapes, dynamic = MODELS[name]
    torch.manual_seed(0)
    model = module().eval()
    os.makedirs(out_dir, exist_ok=True)
    example = torch.randn(*shapes[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), os.path.join(out_dir, "model.onnx"),
                          input_names=["x"], output_names=["y"], opset_version=13,
                          dynamic_axes=None if dynamic is None else {"x": dynamic})
    for i, shape in enumerate(shapes):
        x = torch.randn(*shape)
        with torch.no_grad():
            y = model(x)
        d = os.path.join(out_dir, "set_%d" % i)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
        with open(os.path.join(d, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y.numpy(), "y").SerializeToString())
    with open(os.path.join(out_dir, "sets"), "w") as f:
        f.write("%d\n" % len(shapes))


if __name__ == "__main__":
    main()
