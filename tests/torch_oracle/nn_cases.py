"""Oracle cases of the nn op family: matmul, convolution, pooling, attention, upsampling.

Expected values come from torch 1.13 on the CPU. Low-precision dtypes are only used where
torch's CPU kernels accept them (no f16 matmul/conv/pool on the CPU); their tolerances are loose
because torch computes in that precision while coil's reference computes in double.
"""
import math

import torch
import torch.nn.functional as F

from oracle import Suite

s = Suite("nn")
torch.manual_seed(0)

F32 = dict(rtol=1e-4, atol=1e-5)
F64 = dict(rtol=1e-9, atol=1e-10)
BF16 = dict(rtol=2e-2, atol=2e-2)
EXACT = dict(rtol=0.0, atol=0.0)


def rand(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    lo = 0 if dtype == torch.uint8 else -4
    return torch.randint(lo, 5, shape, dtype=dtype)


def case(op, name, fn, *inputs, attrs=None, **kw):
    """A case whose expected value is fn(*inputs)."""
    s.case(op, list(inputs), fn(*inputs), attrs=attrs, name=name, **kw)


def tol(dtype):
    return {torch.float32: F32, torch.float64: F64, torch.bfloat16: BF16}.get(dtype, EXACT)


# ---------------------------------------------------------------------------------------------
# matmul family
# ---------------------------------------------------------------------------------------------
def matmul_cases():
    for dt in [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32]:
        a, b = rand(3, 4, dtype=dt), rand(4, 5, dtype=dt)
        s.case("aten.mm", [a, b], torch.mm(a, b), name="basic_%s" % str(dt)[6:], **tol(dt))
    a, b = rand(3, 4), rand(5, 4)
    s.case("aten.mm", [a, b.t()], torch.mm(a, b.t()), name="transposed", **F32)
    s.case("aten.mm", [a.t(), a], torch.mm(a.t(), a), name="both_views", **F32)
    case("aten.mm", "empty_n", torch.mm, rand(0, 4), rand(4, 5))
    case("aten.mm", "empty_k", torch.mm, rand(3, 0), rand(0, 5))  # zeros
    a, b = rand(1, 1), rand(1, 6)
    s.case("aten.mm", [a, b], torch.mm(a, b), name="size1", **F32)

    a, b = rand(2, 3, 4), rand(2, 4, 5)
    s.case("aten.bmm", [a, b], torch.bmm(a, b), name="basic", **F32)
    bt = rand(2, 5, 4).transpose(1, 2)
    s.case("aten.bmm", [a, bt], torch.bmm(a, bt), name="transposed", **F32)
    a, b = rand(0, 3, 4), rand(0, 4, 5)
    s.case("aten.bmm", [a, b], torch.bmm(a, b), name="empty_batch")
    a, b = rand(3, 2, 4, dtype=torch.float64), rand(3, 4, 1, dtype=torch.float64)
    s.case("aten.bmm", [a, b], torch.bmm(a, b), name="f64", **F64)

    shapes = [((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)),
              ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)),
              ((1, 3, 4), (6, 4, 2)), ((0, 3, 4), (4, 2)), ((2, 3, 0), (0, 2)), ((1,), (1,)),
              ((5, 1, 2, 3), (1, 3, 3))]
    for sa, sb in shapes:
        a, b = rand(*sa), rand(*sb)
        name = "%s_x_%s" % ("x".join(map(str, sa)), "x".join(map(str, sb)))
        s.case("aten.matmul", [a, b], torch.matmul(a, b), name=name, **F32)
    a = rand(2, 4, 3).transpose(1, 2)  # [2, 3, 4] non-contiguous
    w = rand(4, 3)[:, 1:2].expand(4, 6)
    s.case("aten.matmul", [a, w], torch.matmul(a, w), name="noncontig_expand", **F32)
    a, b = rand(2, 3, 4, dtype=torch.int64), rand(4, dtype=torch.int64)
    s.case("aten.matmul", [a, b], torch.matmul(a, b), name="int64")
    a, b = rand(2, 3, 4, dtype=torch.bfloat16), rand(4, 2, dtype=torch.bfloat16)
    s.case("aten.matmul", [a, b], torch.matmul(a, b), name="bf16", **BF16)

    a, b = rand(5), rand(5)
    s.case("aten.dot", [a, b], torch.dot(a, b), name="basic", **F32)
    a = rand(3, 10)[1, ::2]
    s.case("aten.dot", [a, b], torch.dot(a, b), name="strided", **F32)
    case("aten.dot", "empty", torch.dot, rand(0), rand(0))
    a, b = rand(3, 5), rand(5)
    s.case("aten.mv", [a, b], torch.mv(a, b), name="basic", **F32)
    v = rand(3)
    s.case("aten.mv", [a.t(), v], torch.mv(a.t(), v), name="transposed", **F32)

    m1, m2 = rand(3, 4), rand(4, 5)
    for bshape in [(5,), (3, 5), (1, 5), (3, 1), ()]:
        bias = rand(*bshape)
        s.case("aten.addmm", [bias, m1, m2], torch.addmm(bias, m1, m2, beta=0.5, alpha=2.0),
               attrs={"beta": 0.5, "alpha": 2.0}, name="bias_%d" % len(bshape), **F32)
    bias = torch.full((5,), float("nan"))
    s.case("aten.addmm", [bias, m1, m2], torch.addmm(bias, m1, m2, beta=0.0),
           attrs={"beta": 0.0}, name="beta0_nan_bias", **F32)
    bias = rand(5)
    m2t = rand(5, 4).t()
    s.case("aten.addmm", [bias, m1, m2t], torch.addmm(bias, m1, m2t), name="defaults", **F32)
    i1, i2, ib = rand(3, 4, dtype=torch.int64), rand(4, 2, dtype=torch.int64), rand(
        2, dtype=torch.int64)
    s.case("aten.addmm", [ib, i1, i2], torch.addmm(ib, i1, i2, beta=2, alpha=3),
           attrs={"beta": 2.0, "alpha": 3.0}, name="int64")
    bb = rand(2, 3, 5, dtype=torch.bfloat16)
    b1, b2 = rand(2, 3, 4, dtype=torch.bfloat16), rand(2, 4, 5, dtype=torch.bfloat16)
    s.case("aten.baddbmm", [bb, b1, b2], torch.baddbmm(bb, b1, b2), name="bf16", **BF16)
    bb, b1, b2 = rand(3, 1), rand(2, 3, 4), rand(2, 5, 4).transpose(1, 2)
    s.case("aten.baddbmm", [bb, b1, b2], torch.baddbmm(bb, b1, b2, beta=-1.0, alpha=0.5),
           attrs={"beta": -1.0, "alpha": 0.5}, name="broadcast_bias", **F32)

    x, w, b = rand(2, 3), rand(4, 3), rand(4)
    s.case("aten.linear", [x, w, b], F.linear(x, w, b), name="basic", **F32)
    s.case("aten.linear", [x, w], F.linear(x, w), name="no_bias", **F32)
    x3 = rand(2, 5, 3)
    s.case("aten.linear", [x3, w, b], F.linear(x3, w, b), name="3d", **F32)
    xt = rand(3, 5, 2).permute(2, 1, 0)
    wt = rand(3, 4).t()
    s.case("aten.linear", [xt, wt, b], F.linear(xt, wt, b), name="noncontig", **F32)
    x1 = rand(3)
    s.case("aten.linear", [x1, w, b], F.linear(x1, w, b), name="1d_input", **F32)
    w1 = rand(3)
    s.case("aten.linear", [x3, w1], F.linear(x3, w1), name="1d_weight", **F32)
    case("aten.linear", "empty", F.linear, rand(0, 3), w, b)
    b2d = rand(2, 4)
    s.case("aten.linear", [x, w, b2d], F.linear(x, w, b2d), name="bias_2d", **F32)
    xd, wd, bd = (rand(2, 3, dtype=torch.float64), rand(4, 3, dtype=torch.float64),
                  rand(4, dtype=torch.float64))
    s.case("aten.linear", [xd, wd, bd], F.linear(xd, wd, bd), name="f64", **F64)

    for da, db in [(torch.float32, torch.float32), (torch.int64, torch.float32),
                   (torch.bool, torch.bool), (torch.int32, torch.int64),
                   (torch.bfloat16, torch.float64)]:
        a, b = rand(3, dtype=da), rand(4, dtype=db)
        out = torch.outer(a, b)
        s.case("aten.outer", [a, b], out, name="%s_%s" % (str(da)[6:], str(db)[6:]),
               **tol(out.dtype))
    case("aten.outer", "strided_empty", torch.outer, rand(6)[::2], rand(0))


# ---------------------------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------------------------
def conv_case(name, x, w, b=None, stride=1, padding=0, dilation=1, transposed=False,
              output_padding=0, groups=1, **kw):
    d = w.dim() - 2
    rep = lambda v: [v] * d if isinstance(v, int) else list(v)
    attrs = {"stride": rep(stride), "padding": rep(padding), "dilation": rep(dilation),
             "transposed": transposed, "output_padding": rep(output_padding), "groups": groups}
    expect = torch.ops.aten.convolution(x, w, b, rep(stride), rep(padding), rep(dilation),
                                        transposed, rep(output_padding), groups)
    inputs = [x, w] + ([b] if b is not None else [])
    s.case("aten.convolution", inputs, expect, attrs=attrs, name=name, **(kw or tol(x.dtype)))


def weight_grad_case(name, x, w_shape, stride=1, padding=0, dilation=1, groups=1):
    """aten.convolution_backward_weight: the weight gradient of conv(x, w) for a random
    output gradient, from torch's convolution_backward (the weight's values do not matter)."""
    d = len(w_shape) - 2
    rep = lambda v: [v] * d if isinstance(v, int) else list(v)
    w = torch.zeros(w_shape, dtype=x.dtype)
    y = torch.ops.aten.convolution(x, w, None, rep(stride), rep(padding), rep(dilation), False,
                                   [0] * d, groups)
    g = rand(*y.shape, dtype=x.dtype)
    expect = torch.ops.aten.convolution_backward(
        g, x, w, None, rep(stride), rep(padding), rep(dilation), False, [0] * d, groups,
        [False, True, False])[1]
    attrs = {"kernel_size": list(w_shape[2:]), "stride": rep(stride), "padding": rep(padding),
             "dilation": rep(dilation), "groups": groups}
    s.case("aten.convolution_backward_weight", [x, g], expect, attrs=attrs, name=name,
           static_only=True, **tol(x.dtype))


def conv_cases():
    conv_case("1d", rand(2, 3, 9), rand(4, 3, 3), rand(4))
    conv_case("1d_stride_pad_dil", rand(2, 4, 11), rand(6, 2, 3), rand(6), stride=2, padding=2,
              dilation=2, groups=2)
    conv_case("2d", rand(2, 3, 7, 6), rand(5, 3, 3, 2), rand(5))
    conv_case("2d_no_bias", rand(1, 3, 5, 5), rand(2, 3, 3, 3), padding=1)
    conv_case("2d_groups", rand(2, 6, 8, 8), rand(9, 2, 3, 3), rand(9), groups=3, padding=1)
    conv_case("2d_depthwise", rand(1, 4, 6, 6), rand(8, 1, 3, 3), rand(8), groups=4)
    conv_case("2d_stride_gt_kernel", rand(2, 3, 10, 9), rand(4, 3, 2, 2), rand(4), stride=3)
    conv_case("2d_asym_params", rand(1, 2, 9, 8), rand(3, 2, 3, 2), rand(3), stride=(2, 1),
              padding=(1, 0), dilation=(1, 3))
    conv_case("2d_dilation", rand(2, 2, 9, 9), rand(2, 2, 3, 3), None, dilation=2, padding=2)
    conv_case("2d_size1", rand(2, 3, 1, 1), rand(4, 3, 1, 1), rand(4))
    conv_case("2d_size1_padded", rand(2, 3, 1, 1), rand(4, 3, 3, 3), rand(4), padding=1)
    conv_case("2d_empty_batch", rand(0, 3, 5, 5), rand(4, 3, 3, 3), rand(4))
    x = rand(2, 6, 5, 3).permute(0, 3, 2, 1)  # [2, 3, 5, 6], channels-last-like strides
    w = rand(3, 3, 4, 3).permute(2, 3, 0, 1)  # [4, 3, 3, 3]
    conv_case("2d_noncontig", x, w, rand(8)[::2], padding=1)
    conv_case("2d_f64", rand(1, 2, 6, 5, dtype=torch.float64),
              rand(3, 2, 2, 3, dtype=torch.float64), rand(3, dtype=torch.float64), stride=2)
    conv_case("2d_bf16", rand(1, 2, 6, 5, dtype=torch.bfloat16),
              rand(3, 2, 2, 3, dtype=torch.bfloat16), rand(3, dtype=torch.bfloat16), padding=1,
              rtol=3e-2, atol=5e-2)
    conv_case("2d_int64", rand(1, 2, 5, 5, dtype=torch.int64), rand(3, 2, 2, 2, dtype=torch.int64),
              rand(3, dtype=torch.int64), stride=2)
    conv_case("3d", rand(1, 2, 5, 4, 6), rand(3, 2, 2, 3, 2), rand(3), padding=(1, 0, 1),
              stride=(1, 2, 2))
    conv_case("3d_groups_dil", rand(2, 4, 6, 6, 5), rand(4, 2, 2, 2, 2), None, groups=2,
              dilation=2)
    # transposed
    conv_case("t1d", rand(2, 3, 5), rand(3, 4, 3), rand(4), transposed=True, stride=2)
    conv_case("t1d_pad_outpad", rand(1, 2, 6), rand(2, 3, 4), rand(3), transposed=True, stride=3,
              padding=1, output_padding=2)
    conv_case("t2d", rand(2, 4, 4, 5), rand(4, 3, 3, 3), rand(3), transposed=True)
    conv_case("t2d_groups", rand(2, 4, 4, 5), rand(4, 3, 3, 2), rand(6), transposed=True,
              groups=2, stride=2, padding=1, output_padding=1)
    conv_case("t2d_dilation_outpad", rand(1, 2, 4, 4), rand(2, 2, 3, 3), None, transposed=True,
              dilation=3, output_padding=(2, 1), stride=(1, 2))
    conv_case("t2d_empty_batch", rand(0, 2, 4, 4), rand(2, 2, 3, 3), rand(2), transposed=True)
    w = rand(3, 3, 2, 2).transpose(0, 1)
    conv_case("t2d_noncontig", rand(1, 3, 8, 4)[:, :, ::2], w, rand(3), transposed=True,
              stride=2)
    conv_case("t3d", rand(1, 2, 3, 3, 2), rand(2, 2, 2, 2, 2), rand(2), transposed=True,
              stride=2, padding=(0, 1, 0), output_padding=(1, 0, 1))
    # a plain convolution's weight gradient (torch's convolution_backward, weight only)
    weight_grad_case("2d", rand(2, 3, 7, 6), (5, 3, 3, 2), padding=1)
    weight_grad_case("2d_stride_dil_groups", rand(2, 6, 9, 9), (4, 3, 3, 2), stride=(2, 3),
                     padding=(1, 0), dilation=(1, 2), groups=2)
    weight_grad_case("2d_depthwise", rand(1, 4, 6, 6), (8, 1, 3, 3), groups=4)
    weight_grad_case("2d_stride_gt_kernel", rand(2, 3, 10, 9), (4, 3, 2, 2), stride=3)
    weight_grad_case("2d_noncontig", rand(2, 6, 5, 3).permute(0, 3, 2, 1), (4, 3, 3, 3),
                     padding=1)
    weight_grad_case("1d", rand(2, 3, 17), (4, 3, 5), stride=2, padding=2)
    weight_grad_case("3d", rand(1, 4, 5, 4, 3), (2, 2, 2, 3, 2), padding=(1, 0, 1),
                     stride=(1, 2, 1), groups=2)
    weight_grad_case("2d_f64", rand(2, 2, 6, 5, dtype=torch.float64), (3, 2, 2, 3), stride=2)
    conv_case("t2d_f64", rand(1, 2, 3, 3, dtype=torch.float64),
              rand(2, 1, 2, 2, dtype=torch.float64), rand(2, dtype=torch.float64),
              transposed=True, groups=2, stride=2)
    conv_case("t1d_int64", rand(1, 2, 4, dtype=torch.int64), rand(2, 2, 3, dtype=torch.int64),
              None, transposed=True, stride=2)
    conv_case("output_padding_ignored", rand(1, 2, 5), rand(3, 2, 2), output_padding=1)
    conv_case("bias_f64", rand(1, 2, 5), rand(3, 2, 2), rand(3, dtype=torch.float64))

    # The convenience wrappers (including unbatched inputs).
    x, w, b = rand(2, 4, 9), rand(6, 2, 3), rand(6)
    case("aten.conv1d", "groups", lambda x, w, b: F.conv1d(x, w, b, 2, 1, 1, 2), x, w, b,
         attrs={"stride": [2], "padding": [1], "groups": 2}, **F32)
    x, w, b = rand(3, 6, 7), rand(5, 3, 3, 2), rand(5)
    case("aten.conv2d", "unbatched", lambda x, w, b: F.conv2d(x, w, b, 1, (1, 0), 2), x, w, b,
         attrs={"padding": [1, 0], "dilation": [2]}, **F32)
    x, w = rand(1, 2, 4, 5, 3), rand(3, 2, 2, 2, 2)
    case("aten.conv3d", "basic", lambda x, w: F.conv3d(x, w, stride=(1, 2, 1)), x, w,
         attrs={"stride": [1, 2, 1]}, **F32)
    x, w, b = rand(4, 3, 5), rand(4, 2, 3, 3), rand(4)
    case("aten.conv_transpose2d", "unbatched",
         lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2, 1), x, w, b,
         attrs={"stride": [2], "padding": [1], "output_padding": [1], "groups": 2}, **F32)
    x, w = rand(2, 3, 6), rand(3, 2, 4)
    case("aten.conv_transpose1d", "dilation",
         lambda x, w: F.conv_transpose1d(x, w, None, 1, 2, 0, 1, 2), x, w,
         attrs={"padding": [2], "dilation": [2]}, **F32)
    x, w = rand(1, 2, 3, 2, 3), rand(2, 2, 2, 2, 2)
    case("aten.conv_transpose3d", "basic", lambda x, w: F.conv_transpose3d(x, w, stride=2), x, w,
         attrs={"stride": [2]}, **F32)


# ---------------------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------------------
def with_specials(x):
    """x with a NaN, +inf and -inf planted (floating x with at least 4 elements)."""
    x = x.clone()
    flat = x.view(-1)
    flat[1], flat[-1], flat[len(flat) // 2] = float("nan"), float("inf"), float("-inf")
    return x


def listify(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def max_pool_case(name, x, k, stride=(), padding=0, dilation=1, ceil_mode=False, **kw):
    d = x.dim() - 2
    fn = [F.max_pool1d, F.max_pool2d, F.max_pool3d][d - 1]
    expect = fn(x, k, stride or None, padding, dilation, ceil_mode)
    attrs = {"kernel_size": listify(k), "stride": listify(stride), "padding": listify(padding),
             "dilation": listify(dilation), "ceil_mode": ceil_mode}
    s.case("aten.max_pool%dd" % d, [x], expect, attrs=attrs, name=name, **(kw or tol(x.dtype)))


def avg_pool_case(name, x, k, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None, **kw):
    d = x.dim() - 2
    attrs = {"kernel_size": listify(k), "stride": listify(stride), "padding": listify(padding),
             "ceil_mode": ceil_mode, "count_include_pad": count_include_pad}
    if d == 1:
        expect = F.avg_pool1d(x, k, stride or None, padding, ceil_mode, count_include_pad)
    else:
        fn = F.avg_pool2d if d == 2 else F.avg_pool3d
        expect = fn(x, k, stride or None, padding, ceil_mode, count_include_pad, divisor_override)
        if divisor_override is not None:
            attrs["divisor_override"] = divisor_override
    s.case("aten.avg_pool%dd" % d, [x], expect, attrs=attrs, name=name, **(kw or tol(x.dtype)))


def pool_cases():
    max_pool_case("2d", rand(2, 3, 6, 6), 2)
    max_pool_case("2d_k3_s2_p1", with_specials(rand(2, 2, 7, 8)), 3, 2, 1)
    max_pool_case("2d_dilation", rand(1, 2, 9, 8), (3, 2), (1, 2), (1, 0), (2, 3))
    max_pool_case("2d_ceil_decrement", rand(1, 2, 5, 5), 2, 2, 1, ceil_mode=True)
    max_pool_case("2d_ceil", rand(1, 2, 6, 7), 3, 2, 0, ceil_mode=True)
    max_pool_case("2d_ceil_dil", rand(2, 1, 10, 9), 3, 3, 1, 2, ceil_mode=True)
    max_pool_case("2d_stride_gt_kernel", rand(1, 2, 9, 9), 2, 3)
    max_pool_case("2d_size1", rand(2, 3, 1, 1), 1)
    max_pool_case("2d_empty_batch", rand(0, 3, 4, 4), 2)
    max_pool_case("2d_noncontig", rand(2, 5, 6, 3).permute(0, 3, 1, 2), 2, 1)
    x = rand(3, 6, 5)
    s.case("aten.max_pool2d", [x], F.max_pool2d(x, 2, 2, 1), name="unbatched",
           attrs={"kernel_size": [2], "stride": [2], "padding": [1]}, **F32)
    max_pool_case("2d_f64", rand(1, 2, 5, 6, dtype=torch.float64), (2, 3), (2, 1), ceil_mode=True)
    max_pool_case("2d_bf16", rand(1, 2, 5, 6, dtype=torch.bfloat16), 2)
    max_pool_case("2d_all_neg_inf", torch.full((1, 1, 4, 4), float("-inf")), 2, padding=1)
    max_pool_case("1d", with_specials(rand(2, 3, 11)), 3, 2, 1)
    max_pool_case("1d_ceil_dil", rand(1, 3, 10), 2, 3, 1, 3, ceil_mode=True)
    max_pool_case("1d_bf16", rand(1, 3, 10, dtype=torch.bfloat16), 3)
    max_pool_case("3d", rand(1, 2, 5, 6, 4), 2, (1, 2, 2), (1, 0, 1))
    max_pool_case("3d_ceil_dil", rand(2, 1, 7, 5, 6), 2, 2, 0, (2, 1, 1), ceil_mode=True)

    avg_pool_case("2d", rand(2, 3, 6, 6), 2)
    avg_pool_case("2d_pad_include", rand(1, 2, 7, 5), 3, 2, 1)
    avg_pool_case("2d_pad_exclude", rand(1, 2, 7, 5), 3, 2, 1, count_include_pad=False)
    avg_pool_case("2d_ceil_include", rand(1, 2, 6, 7), 3, 2, 1, ceil_mode=True)
    avg_pool_case("2d_ceil_exclude", rand(1, 2, 6, 7), 3, 2, 1, ceil_mode=True,
                  count_include_pad=False)
    avg_pool_case("2d_ceil_decrement", rand(1, 2, 5, 5), 2, 2, 1, ceil_mode=True)
    avg_pool_case("2d_divisor", rand(2, 2, 5, 5), (2, 3), 1, (1, 0), divisor_override=3)
    avg_pool_case("2d_int64", rand(1, 2, 5, 5, dtype=torch.int64), 2, 1, 1)
    avg_pool_case("2d_int64_divisor", rand(1, 2, 5, 5, dtype=torch.int64), 2, 2,
                  divisor_override=3)
    avg_pool_case("2d_noncontig", rand(2, 6, 6, 3).transpose(1, 3), 2)
    avg_pool_case("2d_empty_batch", rand(0, 2, 4, 4), 2)
    avg_pool_case("2d_bf16", rand(1, 2, 6, 6, dtype=torch.bfloat16), 3, 1, 1)
    avg_pool_case("2d_inf_nan", with_specials(rand(1, 1, 6, 6)), 2)
    avg_pool_case("2d_f64", rand(1, 2, 5, 6, dtype=torch.float64), (3, 2), (1, 2), (1, 1),
                  ceil_mode=True, count_include_pad=False)
    avg_pool_case("1d", rand(2, 3, 10), 3, 2, 1)
    avg_pool_case("1d_ceil_exclude", rand(2, 3, 10), 4, 3, 2, ceil_mode=True,
                  count_include_pad=False)
    avg_pool_case("1d_int64", rand(1, 2, 7, dtype=torch.int64), 2, 2, 1, ceil_mode=True)
    avg_pool_case("3d", rand(1, 2, 5, 4, 6), 2, (1, 2, 2), (1, 0, 1))
    avg_pool_case("3d_ceil_divisor", rand(1, 2, 5, 4, 6), 3, 2, 1, ceil_mode=True,
                  divisor_override=5)
    x = rand(2, 5, 5, 6)
    s.case("aten.avg_pool3d", [x], F.avg_pool3d(x, 2, 2, 1, False, False), name="unbatched",
           attrs={"kernel_size": [2], "stride": [2], "padding": [1], "count_include_pad": False},
           **F32)

    for name, x, size in [("1d", rand(2, 3, 10), [4]), ("1d_up", rand(1, 2, 3), [7]),
                          ("2d", rand(2, 3, 7, 9), [3, 4]), ("2d_single", rand(2, 3, 5, 5), [1]),
                          ("2d_same", rand(1, 2, 4, 4), [4, 4]), ("2d_up", rand(1, 2, 3, 2), [5, 5]),
                          ("2d_noncontig", rand(1, 5, 6, 2).transpose(1, 3), [2, 3]),
                          ("2d_empty_batch", rand(0, 2, 5, 5), [2, 2]),
                          ("2d_zero_out", rand(1, 2, 4, 4), [0, 2]),
                          ("2d_unbatched", rand(3, 7, 5), [2, 3]),
                          ("2d_specials", with_specials(rand(1, 2, 6, 6)), [4, 3]),
                          ("2d_f64", rand(1, 2, 7, 5, dtype=torch.float64), [3, 2]),
                          ("2d_bf16", rand(1, 2, 7, 5, dtype=torch.bfloat16), [3, 2]),
                          ("3d", rand(1, 2, 5, 6, 7), [2, 3, 4])]:
        d = int(name[0])
        avg = [F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d][d - 1]
        mx = [F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d][d - 1]
        arg = size[0] if len(size) == 1 else tuple(size)
        s.case("aten.adaptive_avg_pool%dd" % d, [x], avg(x, arg), name=name,
               attrs={"output_size": size}, **tol(x.dtype))
        if name.endswith("zero_out"):
            continue
        s.case("aten.adaptive_max_pool%dd" % d, [x], mx(x, arg, return_indices=True), name=name,
               attrs={"output_size": size}, **tol(x.dtype))
    ties = torch.randint(0, 3, (2, 2, 6, 7)).float()
    s.case("aten.adaptive_max_pool2d", [ties], F.adaptive_max_pool2d(ties, (3, 2), True),
           name="ties", attrs={"output_size": [3, 2]})
    # Windows with several NaNs: torch's index is the last NaN's (argmax's is the first); found
    # by the CPU differential fuzzer (docs/fuzzing.md).
    nans = torch.asin(torch.tensor([-1, -2, 2, 1, 2, -1, -1, 1, -4, -2, -1, 4, 0, -1, -2.0]))
    nans = nans.reshape(1, 3, 5)
    s.case("aten.adaptive_max_pool2d", [nans], F.adaptive_max_pool2d(nans, (3, 3), True),
           name="nan_windows", attrs={"output_size": [3, 3]})
    grid = rand(1, 2, 6, 6)
    grid[0, 0, 0, 0] = grid[0, 0, 1, 2] = grid[0, 1, 2, 1] = grid[0, 1, 5, 5] = float("nan")
    grid[0, 1, 3, 3] = grid[0, 1, 4, 4] = float("nan")
    s.case("aten.adaptive_max_pool2d", [grid], F.adaptive_max_pool2d(grid, (2, 2), True),
           name="nan_windows_2d", attrs={"output_size": [2, 2]})


# ---------------------------------------------------------------------------------------------
# attention, upsampling, pixel shuffle
# ---------------------------------------------------------------------------------------------
def sdpa_expected(q, k, v, mask=None, is_causal=False, scale=0.0):
    """softmax(q @ k^T * scale + mask) @ v in float64 (torch 1.13 has no public SDPA)."""
    qd, kd, vd = q.double(), k.double(), v.double()
    scale = scale or 1.0 / math.sqrt(q.shape[-1])
    attn = qd @ kd.transpose(-2, -1) * scale
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        attn = attn.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        attn = attn.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else \
            attn + mask.double()
    return (torch.softmax(attn, dim=-1) @ vd).to(q.dtype)


def sdpa_case(name, q, k, v, mask=None, is_causal=False, scale=0.0, **kw):
    inputs = [q, k, v] + ([mask] if mask is not None else [])
    attrs = {"is_causal": is_causal, "scale": scale}
    s.case("aten.scaled_dot_product_attention", inputs,
           sdpa_expected(q, k, v, mask, is_causal, scale), attrs=attrs, name=name,
           **(kw or tol(q.dtype)))


def upsample_case(op, name, x, size=None, scale=None, align_corners=None, **kw):
    mode = "nearest" if op.endswith("nearest2d") else "bilinear"
    expect = F.interpolate(x, size=size, scale_factor=scale, mode=mode,
                           align_corners=align_corners)
    attrs = {"output_size": list(size) if size else [],
             "scale_factors": [float(f) for f in scale] if scale else []}
    if align_corners is not None:
        attrs["align_corners"] = align_corners
    s.case(op, [x], expect, attrs=attrs, name=name, **(kw or tol(x.dtype)))


def misc_cases():
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 5, 8), rand(2, 3, 5, 6)
    sdpa_case("basic", q, k, v)
    sdpa_case("scale", q, k, v, scale=0.5)
    sdpa_case("causal_square", q, rand(2, 3, 4, 8), rand(2, 3, 4, 6), is_causal=True)
    sdpa_case("causal_rect", q, k, v, is_causal=True)
    sdpa_case("bool_mask", q, k, v, rand(4, 5, dtype=torch.bool) | torch.eye(4, 5).bool())
    sdpa_case("float_mask", q, k, v, rand(2, 1, 4, 5))
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2] = False
    sdpa_case("fully_masked_row", q, k, v, mask)
    sdpa_case("broadcast_batch", rand(2, 1, 4, 8), rand(3, 5, 8), rand(1, 3, 5, 6))
    sdpa_case("noncontig", rand(2, 4, 3, 8).transpose(1, 2), k.transpose(-2, -1).contiguous()
              .transpose(-2, -1), rand(2, 3, 6, 5).transpose(-2, -1))
    sdpa_case("2d", rand(4, 8), rand(5, 8), rand(5, 3))
    sdpa_case("query_len1", rand(2, 1, 8), rand(2, 5, 8), rand(2, 5, 8))
    sdpa_case("empty_batch", rand(0, 3, 4, 8), rand(0, 3, 5, 8), rand(0, 3, 5, 6))
    sdpa_case("f64", rand(2, 4, 8, dtype=torch.float64), rand(2, 5, 8, dtype=torch.float64),
              rand(2, 5, 6, dtype=torch.float64), is_causal=True)
    sdpa_case("bf16", rand(2, 4, 8, dtype=torch.bfloat16), rand(2, 5, 8, dtype=torch.bfloat16),
              rand(2, 5, 6, dtype=torch.bfloat16), rand(4, 5, dtype=torch.bfloat16))
    sdpa_case("f16", rand(2, 4, 8, dtype=torch.float16), rand(2, 5, 8, dtype=torch.float16),
              rand(2, 5, 6, dtype=torch.float16), rtol=1e-2, atol=1e-2)

    near, bil = "aten.upsample_nearest2d", "aten.upsample_bilinear2d"
    x = rand(2, 3, 5, 4)
    upsample_case(near, "size", x, size=(7, 9))
    upsample_case(near, "size_down", x, size=(3, 3))
    upsample_case(near, "scale2", x, scale=(2.0, 2.0))
    upsample_case(near, "scale_dyadic", x, scale=(1.5, 0.75))
    upsample_case(near, "scale_odd", x, scale=(1.7, 1.3), static_only=True, **F32)
    upsample_case(near, "size_14_to_46", rand(1, 1, 14, 3), size=(46, 3))
    upsample_case(near, "f64_14_to_46", rand(1, 1, 14, 3, dtype=torch.float64), size=(46, 5))
    upsample_case(near, "uint8", rand(1, 2, 3, 4, dtype=torch.uint8), size=(7, 5))
    upsample_case(near, "bf16", rand(1, 2, 3, 4, dtype=torch.bfloat16), scale=(3.0, 2.0))
    upsample_case(near, "specials", with_specials(rand(1, 2, 3, 4)), size=(6, 8))
    upsample_case(near, "noncontig", rand(2, 4, 5, 3).permute(0, 3, 1, 2), size=(8, 7))
    upsample_case(near, "empty_batch", rand(0, 2, 3, 3), size=(5, 5))
    upsample_case(near, "size1", rand(2, 1, 1, 1), size=(3, 1))
    for ac in [False, True]:
        tag = "_ac" if ac else ""
        upsample_case(bil, "size" + tag, x, size=(7, 9), align_corners=ac)
        upsample_case(bil, "down" + tag, x, size=(3, 2), align_corners=ac)
        upsample_case(bil, "scale" + tag, x, scale=(2.0, 1.5), align_corners=ac)
        upsample_case(bil, "scale_odd" + tag, x, scale=(1.7, 0.6), align_corners=ac,
                      static_only=True, **F32)
        upsample_case(bil, "out1" + tag, x, size=(1, 4), align_corners=ac)
        upsample_case(bil, "f64" + tag, rand(1, 2, 4, 3, dtype=torch.float64), size=(9, 7),
                      align_corners=ac)
    # torch keeps bf16 interpolation weights in bf16: looser than BF16.
    upsample_case(bil, "bf16", rand(1, 2, 4, 3, dtype=torch.bfloat16), size=(6, 6),
                  align_corners=False, rtol=5e-2, atol=6e-2)
    upsample_case(bil, "noncontig", rand(1, 5, 4, 2).transpose(1, 3), size=(6, 11),
                  align_corners=False)
    upsample_case(bil, "empty_batch", rand(0, 2, 3, 3), size=(5, 5), align_corners=True)
    upsample_case(bil, "in1", rand(2, 2, 1, 3), size=(4, 3), align_corners=False)

    for name, x, r in [("basic", rand(2, 8, 3, 4), 2), ("unbatched", rand(9, 2, 2), 3),
                       ("5d", rand(2, 1, 4, 2, 3), 2), ("int64", rand(1, 4, 2, 2,
                                                                     dtype=torch.int64), 2),
                       ("bool", rand(1, 4, 2, 3, dtype=torch.bool), 2),
                       ("noncontig", rand(1, 3, 2, 8).transpose(1, 3), 2),
                       ("r1", rand(2, 3, 2), 1), ("empty", rand(0, 4, 2, 2), 2)]:
        s.case("aten.pixel_shuffle", [x], F.pixel_shuffle(x, r), name=name,
               attrs={"upscale_factor": r}, **EXACT)
        y = F.pixel_shuffle(x, r)
        if y.numel() == 0:
            continue  # torch 1.13's pixel_unshuffle returns an empty input unchanged (a bug)
        s.case("aten.pixel_unshuffle", [y], F.pixel_unshuffle(y, r), name=name,
               attrs={"downscale_factor": r}, **EXACT)


matmul_cases()
conv_cases()
pool_cases()
misc_cases()
s.main()
