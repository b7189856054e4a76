"""Torch's nn modules (Debian's torch 1.13) with their parameters, inputs and outputs, for
capture/nn/nn_test.cc. Each case `c` writes c.<state_dict key> (parameters and buffers),
c/x (inputs: c/x, c/key, ...) and c/expected.

Parameters are torch's default init under a fixed seed, except where the default is trivial
(LayerNorm/BatchNorm affine and running stats, MultiheadAttention biases), which get random
values so that the test sees them.
"""
import torch

from capture.nn.torch_values import Writer

torch.manual_seed(0)
w = Writer()


def randomize(m, *names):
    for n in names:
        p = dict(m.named_parameters(), **dict(m.named_buffers()))[n]
        with torch.no_grad():
            p.copy_(torch.randn(p.shape))


def case(name, m, *inputs, input_names=("x",)):
    m.eval()
    with torch.no_grad():
        out = m(*inputs)
    if isinstance(out, tuple):
        out = out[0]
    w.module(name, m)
    for n, t in zip(input_names, inputs):
        w.add("%s/%s" % (name, n), t)
    w.add("%s/expected" % name, out)


# Linear
case("linear", torch.nn.Linear(5, 3), torch.randn(2, 4, 5))
case("linear_nobias", torch.nn.Linear(5, 3, bias=False), torch.randn(3, 5))

# Conv2d
case("conv", torch.nn.Conv2d(3, 4, 3, stride=2, padding=1), torch.randn(2, 3, 7, 7))
case("conv_groups",
     torch.nn.Conv2d(4, 6, (3, 1), padding=(1, 0), dilation=(2, 1), groups=2, bias=False),
     torch.randn(1, 4, 6, 5))

# LayerNorm
m = torch.nn.LayerNorm(6)
randomize(m, "weight", "bias")
case("layer_norm", m, torch.randn(2, 3, 6))
m = torch.nn.LayerNorm([3, 6], eps=1e-3)
randomize(m, "weight", "bias")
case("layer_norm_2d", m, torch.randn(2, 3, 6))
case("layer_norm_noaffine", torch.nn.LayerNorm(6, elementwise_affine=False), torch.randn(4, 6))

# BatchNorm2d (inference: running statistics)
m = torch.nn.BatchNorm2d(4, eps=1e-3)
randomize(m, "weight", "bias", "running_mean")
with torch.no_grad():
    m.running_var.copy_(torch.rand(4) + 0.5)
case("batch_norm", m, torch.randn(2, 4, 3, 3))

# Embedding
case("embedding", torch.nn.Embedding(10, 4), torch.tensor([[1, 0, 9], [4, 4, 2]]))
case("embedding_padding", torch.nn.Embedding(10, 4, padding_idx=0),
     torch.tensor([[1, 0, 9], [0, 4, 2]]))

# MultiheadAttention
def mha(E, H, **kw):
    m = torch.nn.MultiheadAttention(E, H, **kw)
    if m.in_proj_bias is not None:
        randomize(m, "in_proj_bias", "out_proj.bias")
    return m


class SelfAttention(torch.nn.Module):
    """Self-attention, optionally causal (torch's bool mask: True = not attended)."""

    def __init__(self, m, causal):
        super().__init__()
        self.m, self.causal = m, causal

    def forward(self, x):
        L = x.shape[1] if self.m.batch_first else x.shape[0]
        mask = torch.triu(torch.ones(L, L, dtype=torch.bool), 1) if self.causal else None
        return self.m(x, x, x, attn_mask=mask, need_weights=False)[0]

    def state_dict(self):
        return self.m.state_dict()


case("mha", SelfAttention(mha(8, 2, batch_first=True), False), torch.randn(2, 5, 8))
case("mha_causal", SelfAttention(mha(8, 2, batch_first=True), True), torch.randn(2, 5, 8))
case("mha_seq_first", SelfAttention(mha(8, 4), True), torch.randn(5, 2, 8))
case("mha_nobias", SelfAttention(mha(6, 3, batch_first=True, bias=False), False),
     torch.randn(3, 4, 6))
m = mha(8, 2, batch_first=True)
case("mha_cross", m, torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8),
     input_names=("query", "key", "value"))

# Activations
x = torch.randn(3, 4) * 3
case("gelu", torch.nn.GELU(), x)
case("gelu_tanh", torch.nn.GELU(approximate="tanh"), x)
case("relu", torch.nn.ReLU(), x)
case("silu", torch.nn.SiLU(), x)

w.main()
