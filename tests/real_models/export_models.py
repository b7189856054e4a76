"""Exports one real model to ONNX with torch and records torch's outputs (run by the test).

Usage: /usr/bin/python3 export_models.py MODEL OUT_DIR
MODEL: resnet18 | mobilenet_v2 | transformer_encoder | gpt | gpt2_small | any name in TORCHVISION_FAMILY
Writes OUT_DIR/model.onnx (batch axis dynamic, named "batch") and, for batch sizes 1 and 3,
OUT_DIR/batch_N/input_0.pb and output_0.pb as ONNX TensorProtos. Weights are random with a fixed
seed; nothing here is committed. Runs with Debian's torch 1.13 and torchvision 0.14.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZES = (1, 3)
IMAGE_SIZE = 64  # small images keep the reference interpreter fast; adaptive pooling allows it


class Gpt(nn.Module):
    """A small GPT-style decoder: token + position embedding, pre-norm blocks of causal
    self-attention and a GELU MLP, final layer norm, LM head tied to the token embedding."""

    def __init__(self, vocab=96, context=16, dim=64, heads=4, layers=2):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, context) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


class Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        att = att.masked_fill(~self.causal[:t, :t], float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


# More of torchvision's classification family (the importer must handle the family, not only
# the two flagship models). Cheap variants keep the reference interpreter fast.
TORCHVISION_FAMILY = (
    "efficientnet_b0", "densenet121", "googlenet", "mobilenet_v3_small", "shufflenet_v2_x0_5",
    "squeezenet1_0", "regnet_x_400mf", "mnasnet0_5", "resnext50_32x4d",
)


def build(name):
    """(model, input maker taking a batch size, batch dimension, opset)."""
    if name in ("resnet18", "mobilenet_v2") + TORCHVISION_FAMILY:
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        return model, lambda n: torch.randn(n, 3, IMAGE_SIZE, IMAGE_SIZE), 0, 13
    if name == "transformer_encoder":
        # batch_first=False: (sequence, batch, feature); also keeps torch off its fused fast path.
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=512, dropout=0.0)
        model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        return model, lambda n: torch.randn(10, n, 256), 1, 17
    if name == "gpt":
        model = Gpt()
        return model, lambda n: torch.randint(0, 96, (n, 16)), 0, 17
    if name == "gpt2_small":
        # GPT-2 small's shape (124M parameters, ~500 MB of weights): the compile-time benchmark's
        # large model (weights dominate hashing, caching and reports), 16-token inputs.
        model = Gpt(vocab=50257, context=1024, dim=768, heads=12, layers=12)
        return model, lambda n: torch.randint(0, 50257, (n, 16)), 0, 17
    raise SystemExit("unknown model '%s'" % name)


def save(tensor, path):
    from onnx import numpy_helper  # here: tools/cuda_real_models.py imports build() without onnx

    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(tensor.detach().numpy()).SerializeToString())


def main():
    name, out_dir = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model, make_input, batch_dim, opset = build(name)
    model.eval()
    os.makedirs(out_dir, exist_ok=True)
    example = make_input(2)
    torch.onnx.export(model, (example,), os.path.join(out_dir, "model.onnx"), opset_version=opset,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {batch_dim: "batch"}, "y": {batch_dim: "batch"}})
    for n in BATCH_SIZES:
        x = make_input(n)
        with torch.no_grad():
            y = model(x)
        d = os.path.join(out_dir, "batch_%d" % n)
        os.makedirs(d, exist_ok=True)
        save(x, os.path.join(d, "input_0.pb"))
        save(y, os.path.join(d, "output_0.pb"))
    print("exported %s (opset %d) to %s" % (name, opset, out_dir))


if __name__ == "__main__":
    main()
