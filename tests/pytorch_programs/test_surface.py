"""PyTorch's everyday surface: what ordinary scripts call besides the ops, checked against
torch. Devices and dtypes, cuda/backends/amp stand-ins, factories, tensor methods, layers,
losses, optimizers and checkpoints, each spelled as a PyTorch script spells it."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn as nn
import chainrule.nn.functional as F
from tests.helpers import torch_dtype_text

CPU_ERROR = "chainrule computes on the CPU"

# -- devices ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args", [("cpu",), ("cpu:0",), ("cpu", 0), ("cuda",), ("cuda:1",), ("cuda", 2), ("mps",)]
)
def test_device_is_torch_device(args) -> None:
    ours, theirs = cr.device(*args), torch.device(*args)
    assert (str(ours), repr(ours), ours.type, ours.index) == (
        str(theirs),
        repr(theirs),
        theirs.type,
        theirs.index,
    )
    assert cr.device(ours) == ours and hash(cr.device(*args)) == hash(ours)
    assert (ours == cr.device("cpu")) == (theirs == torch.device("cpu"))
    assert (ours == "cpu") is (theirs == "cpu") is False  # a device never equals a string


def test_device_errors() -> None:
    with pytest.raises(ValueError, match="device: expected one of cpu, cuda"):
        cr.device("foo")
    with pytest.raises(ValueError, match="invalid device string 'cpu:x'"):
        cr.device("cpu:x")
    ours = cr.device(0)  # an integer alone names a CUDA device, as torch.device(0) does
    assert (str(ours), repr(ours)) == ("cuda:0", "device(type='cuda', index=0)")
    with pytest.raises(ValueError, match="device: the index must be a non-negative int"):
        cr.device(-1)


ACCELERATORS = ["cuda", "cuda:0", cr.device("cuda"), cr.device("cuda", 1), "mps", 0]


def _shown(dev) -> str:
    return f"device 'cuda:{dev}'" if isinstance(dev, int) else f"device {str(dev)!r}"


FACTORIES = {
    "tensor": lambda **kw: cr.tensor([1.0, 2.0], **kw),
    "zeros": lambda **kw: cr.zeros(2, 3, **kw),
    "ones": lambda **kw: cr.ones((2, 3), **kw),
    "empty": lambda **kw: cr.empty(2, **kw),
    "full": lambda **kw: cr.full((2,), 1.5, **kw),
    "arange": lambda **kw: cr.arange(5, **kw),
    "linspace": lambda **kw: cr.linspace(0, 1, 5, **kw),
    "eye": lambda **kw: cr.eye(3, **kw),
    "rand": lambda **kw: cr.rand(2, **kw),
    "randn": lambda **kw: cr.randn(2, **kw),
    "randint": lambda **kw: cr.randint(0, 5, (3,), **kw),
    "randperm": lambda **kw: cr.randperm(4, **kw),
}
LIKES = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_take_the_cpu_and_refuse_accelerators(name) -> None:
    make = FACTORIES[name]
    for dev in ("cpu", "cpu:0", cr.device("cpu"), torch.device("cpu").type, None):
        assert make(device=dev).device == cr.device("cpu")
    for dev in ACCELERATORS:
        with pytest.raises(ValueError, match=f"^{name}: {CPU_ERROR}; got {_shown(dev)}"):
            make(device=dev)
    with pytest.raises(ValueError, match=f"^{name}: {CPU_ERROR}; got pin_memory=True"):
        make(pin_memory=True)


@pytest.mark.parametrize("name", LIKES + ["full_like"])
def test_like_factories_take_the_cpu(name) -> None:
    x = cr.ones(2, 3, dtype=cr.float64)
    fn = getattr(cr, name)
    args = (x, 2.0) if name == "full_like" else (x,)
    out = fn(*args, device="cpu")
    assert out.shape == (2, 3) and out.dtype == cr.float64
    with pytest.raises(ValueError, match=f"^{name}: {CPU_ERROR}; got device 'cuda'"):
        fn(*args, device="cuda")


LAYERS = {
    "Linear": lambda **kw: nn.Linear(3, 4, **kw),
    "Embedding": lambda **kw: nn.Embedding(5, 3, **kw),
    "Conv1d": lambda **kw: nn.Conv1d(2, 3, 3, **kw),
    "Conv2d": lambda **kw: nn.Conv2d(2, 3, 3, **kw),
    "BatchNorm1d": lambda **kw: nn.BatchNorm1d(3, **kw),
    "BatchNorm2d": lambda **kw: nn.BatchNorm2d(3, **kw),
    "LayerNorm": lambda **kw: nn.LayerNorm(3, **kw),
    "MultiheadAttention": lambda **kw: nn.MultiheadAttention(4, 2, **kw),
    "LSTM": lambda **kw: nn.LSTM(3, 4, **kw),
    "GRUCell": lambda **kw: nn.GRUCell(3, 4, **kw),
    "PReLU": lambda **kw: nn.PReLU(3, **kw),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layers_take_device_and_dtype(name) -> None:
    make = LAYERS[name]
    layer = make(device="cpu", dtype=cr.float64)
    assert {p.dtype for p in layer.parameters()} == {np.dtype("float64")}
    assert make(device=cr.device("cpu")).to("cpu") is not None
    with pytest.raises(ValueError, match=f"^{name}: {CPU_ERROR}; got device 'cuda:0'"):
        make(device="cuda:0")


def test_linear_takes_device_and_dtype_in_torchs_places() -> None:
    layer = nn.Linear(3, 4, True, "cpu", cr.float64)
    assert layer.weight.dtype == cr.float64
    torch.nn.Linear(3, 4, True, "cpu", torch.float64)  # the same positions in PyTorch


def test_tensor_to_as_torch() -> None:
    x = cr.ones(2, requires_grad=True)
    t = torch.ones(2, requires_grad=True)
    other = cr.zeros(1, dtype=cr.float64)
    cases = [
        ((cr.device("cpu"),), {}, (torch.device("cpu"),), {}),
        (("cpu", cr.float64), {}, ("cpu", torch.float64), {}),
        ((), {"dtype": cr.float64}, (), {"dtype": torch.float64}),
        ((), {"device": "cpu", "dtype": cr.float16}, (), {"device": "cpu", "dtype": torch.float16}),
        ((other,), {}, (torch.zeros(1, dtype=torch.float64),), {}),
        ((cr.int64,), {}, (torch.int64,), {}),
        ((cr.float64, True), {}, (torch.float64, True), {}),  # non_blocking
    ]
    for args, kwargs, targs, tkwargs in cases:
        ours, theirs = x.to(*args, **kwargs), t.to(*targs, **tkwargs)
        assert torch_dtype_text(ours.dtype) == str(theirs.dtype)
        assert (ours is x) == (theirs is t)
        assert ours.requires_grad == theirs.requires_grad
    assert x.to("cpu", copy=True) is not x and x.cpu() is x
    y = x.to("cpu", cr.float64) * 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    for call in (
        lambda: x.to("cuda"),
        lambda: x.to(cr.device("cuda"), cr.float64),
        lambda: x.to(device="mps"),
        lambda: x.to(0),
    ):
        with pytest.raises(ValueError, match=f"^to: {CPU_ERROR}"):
            call()
    with pytest.raises(ValueError, match=f"^cuda: {CPU_ERROR}; got device 'cuda'"):
        x.cuda()
    with pytest.raises(ValueError, match=f"^pin_memory: {CPU_ERROR}"):
        x.pin_memory()
    assert x.device == cr.device("cpu") and x.device.type == "cpu" and not x.is_cuda


def test_module_to_cpu_and_cuda() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    assert model.to("cpu") is model and model.cpu() is model
    assert model.to(cr.device("cpu")) is model
    model.to("cpu", cr.float64)
    assert {t.dtype for t in model.state_dict().values() if t.dtype.kind == "f"} == {
        np.dtype("float64")
    }
    model.to(cr.zeros(1))  # another tensor's dtype (and device)
    assert model[0].weight.dtype == cr.float32
    model.to(device="cpu", dtype=cr.float16)
    assert model[0].weight.dtype == cr.float16
    assert model.half() is model and model.float()[0].weight.dtype == cr.float32
    with pytest.raises(ValueError, match=f"^to: {CPU_ERROR}; got device 'cuda'"):
        model.to("cuda")
    with pytest.raises(ValueError, match=f"^cuda: {CPU_ERROR}"):
        model.cuda()
    with pytest.raises(TypeError, match="to: only floating-point dtypes are allowed"):
        model.to(cr.int64)


def test_device_idiom_of_scripts_runs() -> None:
    device = cr.device("cuda" if cr.cuda.is_available() else "cpu")
    model = nn.Linear(2, 1).to(device)
    x = cr.randn(4, 2).to(device)
    assert model(x).device == device == cr.device("cpu")


# -- cuda, backends, compile -----------------------------------------------------------------


def test_cuda_module_says_there_is_no_cuda() -> None:
    assert cr.cuda.is_available() is False and cr.cuda.device_count() == 0
    cr.manual_seed(3)
    first = cr.randn(4).numpy().copy()
    cr.manual_seed(3)
    assert cr.cuda.manual_seed(7) is None and cr.cuda.manual_seed_all(7) is None
    np.testing.assert_array_equal(cr.randn(4).numpy(), first)  # seeded nothing more
    cr.cuda.empty_cache()
    cr.cuda.synchronize()
    with pytest.raises(ValueError, match=CPU_ERROR):
        cr.cuda.current_device()


def test_backends_flags_are_accepted() -> None:
    cr.backends.cudnn.benchmark = True
    cr.backends.cudnn.deterministic = True
    cr.backends.cudnn.allow_tf32 = False
    cr.backends.cuda.matmul.allow_tf32 = True
    assert cr.backends.cudnn.benchmark and cr.backends.cuda.matmul.allow_tf32
    assert cr.backends.mps.is_available() is False and cr.backends.cudnn.is_available() is False
    cr.set_float32_matmul_precision("high")
    assert cr.get_float32_matmul_precision() == "high"
    cr.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError, match="set_float32_matmul_precision: expected one of"):
        cr.set_float32_matmul_precision("fast")


def test_compile_returns_the_model() -> None:
    model = nn.Linear(2, 2)
    assert cr.compile(model) is model
    assert cr.compile(model, mode="max-autotune", fullgraph=True) is model

    def f(x):
        return x * 2

    assert cr.compile()(f) is f and cr.compile(f, dynamic=True) is f


# -- dtypes ----------------------------------------------------------------------------------

ALIASES = [
    "float",
    "double",
    "half",
    "long",
    "int",
    "short",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "bfloat16",
]


@pytest.mark.parametrize("name", ALIASES)
def test_dtype_aliases_are_torchs(name) -> None:
    assert torch_dtype_text(getattr(cr, name)) == str(getattr(torch, name))
    made = cr.zeros(2, dtype=getattr(cr, name))
    assert made.dtype is getattr(cr, name)
    assert torch_dtype_text(made.dtype) == str(torch.zeros(2, dtype=getattr(torch, name)).dtype)


def test_float16_computes_and_differentiates() -> None:
    x = cr.tensor([0.5, 1.5, -2.0], dtype=cr.half, requires_grad=True)
    t = torch.tensor([0.5, 1.5, -2.0], dtype=torch.half, requires_grad=True)
    (x * x).sum().backward()
    (t * t).sum().backward()
    assert x.grad.dtype == cr.float16
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_bfloat16_is_a_storage_dtype_rounded_as_torch() -> None:
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32) * 100
    ours = cr.tensor(values).to(cr.bfloat16)
    theirs = torch.tensor(values).to(torch.bfloat16)
    assert ours.dtype == cr.bfloat16
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    with pytest.raises(TypeError, match="bfloat16 is a storage dtype"):
        ours.requires_grad_()


def test_default_dtype() -> None:
    assert cr.get_default_dtype() == cr.float32
    cr.set_default_dtype(cr.float64)
    try:
        assert cr.get_default_dtype() == cr.float64
        assert cr.tensor([1.0]).dtype == cr.float64 and cr.zeros(2).dtype == cr.float64
        assert cr.randn(2).dtype == cr.float64 and nn.Linear(2, 2).weight.dtype == cr.float64
        assert cr.arange(3).dtype == cr.int64 and cr.arange(0.5, 2).dtype == cr.float64
    finally:
        cr.set_default_dtype(cr.float32)
    assert cr.tensor([1.0]).dtype == cr.float32
    with pytest.raises(TypeError, match="set_default_dtype: chainrule's default dtype is"):
        cr.set_default_dtype(cr.int64)


def test_manual_seed_returns_a_generator() -> None:
    g = cr.manual_seed(11)
    assert isinstance(g, cr.Generator) and g is cr.default_generator
    assert g.initial_seed() == 11 == cr.initial_seed()
    a = cr.rand(3).numpy().copy()
    g.manual_seed(11)
    np.testing.assert_array_equal(cr.rand(3).numpy(), a)
    assert isinstance(torch.manual_seed(0), torch.Generator)  # as PyTorch's


# -- autocast and GradScaler -----------------------------------------------------------------


def test_autocast_disabled_is_a_pass_through() -> None:
    x = cr.randn(2, 3)
    for ctx in (
        cr.autocast("cuda", enabled=False),
        cr.amp.autocast("cpu", enabled=False),
        cr.autocast(device_type="cuda", dtype=cr.float16, enabled=False),
        cr.cuda.amp.autocast(enabled=False),
    ):
        with ctx:
            y = x @ x.T
        assert y.dtype == cr.float32

    @cr.autocast("cuda", enabled=False)
    def f(a):
        return a * 2

    assert f(x).dtype == cr.float32


def test_autocast_enabled_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match=f"^autocast: {CPU_ERROR}; got device_type 'cuda'"):
        with cr.autocast("cuda"):
            pass
    with pytest.raises(ValueError, match=f"^autocast: {CPU_ERROR}"):
        cr.cuda.amp.autocast()
    with pytest.raises(NotImplementedError, match="autocast: chainrule has no mixed precision"):
        cr.autocast("cpu")  # bfloat16, PyTorch's CPU default
    with pytest.raises(NotImplementedError, match="dtype float16"):
        cr.amp.autocast("cpu", dtype=cr.float16)
    with pytest.warns(UserWarning, match="CPU autocast only supports"):
        with cr.autocast("cpu", dtype=cr.float32):
            pass
    with pytest.raises(ValueError, match="device_type must be a device type"):
        cr.autocast("gpu")


class _CountingSGD(cr.optim.SGD):
    steps = 0

    def step(self, closure=None):
        self.steps += 1
        return super().step(closure)


@pytest.mark.parametrize(
    "make",
    [
        lambda: cr.amp.GradScaler(enabled=False),
        lambda: cr.amp.GradScaler("cpu", enabled=False),
        lambda: cr.cuda.amp.GradScaler(enabled=False),
    ],
)
def test_disabled_grad_scaler_passes_through(make) -> None:
    scaler = make()
    w = cr.ones(2, requires_grad=True)
    opt = _CountingSGD([w], lr=0.1)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss and not scaler.is_enabled()
    loss.backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    np.testing.assert_allclose(w.numpy(), [0.8, 0.8])


def test_cuda_grad_scaler_enabled_says_it_is_disabled() -> None:
    for make in (lambda: cr.cuda.amp.GradScaler(), lambda: cr.amp.GradScaler()):
        with pytest.warns(UserWarning, match="GradScaler: chainrule computes on the CPU"):
            scaler = make()
        assert not scaler.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not torch.amp.GradScaler().is_enabled()  # PyTorch without CUDA: the same


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflowing steps
def test_cpu_grad_scaler_matches_torch_step_for_step() -> None:
    rng = np.random.default_rng(0)
    w0, x, y = rng.standard_normal((3, 2)), rng.standard_normal((8, 3)), rng.standard_normal(8)
    # float32's largest power of 2: the gradients overflow
    options = dict(init_scale=2.0**127, growth_factor=4.0, backoff_factor=0.25, growth_interval=2)
    sides = []
    for lib in (cr, torch):
        w = lib.tensor(w0.astype(np.float32), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.01, momentum=0.9)
        sides.append((lib, w, opt, lib.amp.GradScaler("cpu", **options)))
    scales = []
    for step in range(16):
        seen = []
        for lib, w, opt, scaler in sides:
            xs, ys = lib.tensor(x.astype(np.float32)), lib.tensor(y.astype(np.float32))
            loss = (((xs @ w).sum(1) - ys) ** 2).mean() * 10
            opt.zero_grad()
            scaler.scale(loss).backward()
            if step % 2:
                scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            seen.append((w.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict()))
        (ours, s1, d1), (theirs, s2, d2) = seen
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
        assert s1 == s2 and d1 == d2
        scales.append(s1)
    assert min(scales) < max(scales[scales.index(min(scales)) :])  # backed off, then grew


def test_grad_scaler_errors_and_state_dict_round_trip() -> None:
    w = cr.ones(2, requires_grad=True)
    opt = cr.optim.SGD([w], lr=0.1)
    scaler = cr.amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale((w * w).sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [16.0, 16.0])
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="already called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="already called since the last update"):
        scaler.step(opt)
    scaler.update()
    other = cr.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict() and other.get_scale() == 8.0
    with pytest.raises(RuntimeError, match="a closure is not supported"):
        scaler.step(opt, closure=lambda: None)
    scales = scaler.scale([cr.ones(1), (cr.ones(1),)])
    assert scales[0].item() == 8.0 and scales[1][0].item() == 8.0


# -- factories and functions -----------------------------------------------------------------


def test_from_numpy_shares_memory() -> None:
    a = np.arange(4.0)
    t = cr.from_numpy(a)
    assert t.dtype == cr.float64 and t.data_ptr() == a.ctypes.data
    t[0] = 10.0  # a write through the tensor...
    a[1] = 20.0  # ...and one through the array
    with cr.no_grad():
        t.add_(1.0)
    np.testing.assert_array_equal(a, [11.0, 21.0, 3.0, 4.0])
    np.testing.assert_array_equal(t.numpy(), a)
    theirs = torch.from_numpy(np.arange(4.0))
    assert torch_dtype_text(t.dtype) == str(theirs.dtype)
    with pytest.raises(TypeError, match="from_numpy: expected a numpy.ndarray; got list"):
        cr.from_numpy([1, 2])


def test_randint_takes_high_alone_or_low_and_high() -> None:
    cases = [
        ((10, (5,)), {}, 0, 10),
        ((3, 10, (2, 4)), {}, 3, 10),
        ((10,), {"size": (3,)}, 0, 10),
        ((), {"low": 2, "high": 5, "size": (3,)}, 2, 5),
        ((-4, 0, (6,)), {}, -4, 0),
    ]
    for args, kwargs, low, high in cases:
        ours = cr.randint(*args, generator=cr.Generator().manual_seed(0), **kwargs)
        theirs = torch.randint(*args, **kwargs)
        assert ours.shape == tuple(theirs.shape) and ours.dtype == cr.int64
        assert ((ours.numpy() >= low) & (ours.numpy() < high)).all()
    assert cr.randint(0, 5, (3,), dtype=cr.int32).dtype == cr.int32
    with pytest.raises(TypeError, match="randint: expected \\(high, size\\)"):
        cr.randint(5)
    with pytest.raises(TypeError, match="randint: size must be a tuple of ints"):
        cr.randint(0, 5, 3)


@pytest.mark.parametrize(
    "name",
    [
        "FloatTensor",
        "DoubleTensor",
        "LongTensor",
        "IntTensor",
        "BoolTensor",
        "ByteTensor",
        "HalfTensor",
    ],
)
def test_legacy_constructors_are_torchs(name) -> None:
    ours, theirs = getattr(cr, name), getattr(torch, name)
    for args in [([1, 0, 2],), ((2, 3),), ([[1.5, 2.0]],), (np.array([3, 0]),)]:
        a, b = ours(*args), theirs(*args)
        assert a.shape == tuple(b.shape) and torch_dtype_text(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for args in [(3,), (2, 3), ()]:
        assert ours(*args).shape == tuple(theirs(*args).shape)
        assert torch_dtype_text(ours(*args).dtype) == str(theirs(*args).dtype)
    assert isinstance(ours([1]), ours) and not isinstance(cr.tensor([1], dtype="int8"), ours)
    assert isinstance(theirs([1]), theirs)  # as PyTorch's


def test_new_factories_take_self_dtype() -> None:
    for ours, theirs in [
        (cr.zeros(2, dtype=cr.float64), torch.zeros(2, dtype=torch.float64)),
        (cr.zeros(2, dtype=cr.int64), torch.zeros(2, dtype=torch.int64)),
    ]:
        pairs = [
            (ours.new_zeros(2, 3), theirs.new_zeros(2, 3)),
            (ours.new_zeros((2, 3)), theirs.new_zeros((2, 3))),
            (ours.new_ones(4), theirs.new_ones(4)),
            (ours.new_ones((2,), dtype=cr.float32), theirs.new_ones((2,), dtype=torch.float32)),
            (ours.new_full((2, 2), 3), theirs.new_full((2, 2), 3)),
            (ours.new_empty(3), theirs.new_empty(3)),
            (ours.new_tensor([1, 2]), theirs.new_tensor([1, 2])),
            (
                ours.new_tensor([1.5], dtype=cr.float32),
                theirs.new_tensor([1.5], dtype=torch.float32),
            ),
        ]
        for a, b in pairs:
            assert a.shape == tuple(b.shape) and torch_dtype_text(a.dtype) == str(b.dtype)
            if a is not pairs[5][0]:  # new_empty's values are whatever was there
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    w = cr.zeros(3).new_zeros(3, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    with pytest.raises(ValueError, match=f"new_zeros: {CPU_ERROR}"):
        cr.zeros(2).new_zeros(2, device="cuda")


def test_small_functions_are_torchs() -> None:
    x = cr.ones(2, 3)
    assert cr.numel(x) == 6 == torch.numel(torch.ones(2, 3))
    assert cr.is_tensor(x) and not cr.is_tensor([1.0]) and torch.is_tensor(torch.ones(1))
    assert cr.is_floating_point(x) and not cr.is_floating_point(cr.arange(3))
    assert cr.is_floating_point(x.half()) and cr.is_floating_point(x.bfloat16())
    np.testing.assert_allclose(
        cr.rsqrt(cr.tensor([4, 1])).numpy(), torch.rsqrt(torch.tensor([4, 1])).numpy()
    )
    assert cr.rsqrt(cr.tensor([4, 1])).dtype == cr.float32
    with pytest.raises(ValueError, match="outer: expected two 1-D tensors"):
        cr.outer(cr.ones(2, 2), cr.ones(2))


# -- tensor methods ---------------------------------------------------------------------------


def test_t_mm_bmm_check_shapes_as_torch() -> None:
    assert cr.ones(3).t().shape == (3,) and cr.tensor(2.0).t().shape == ()
    x, tx = cr.ones(3), torch.ones(3)
    assert x.t() is not x and tx.t() is not tx  # a new view of a vector, as PyTorch's
    with pytest.raises(ValueError, match="t: expects a tensor of at most 2 dims"):
        cr.ones(2, 3, 4).t()
    bad = [
        (
            lambda m: m.zeros(2, 3).mm(m.zeros(4, 2)),
            "mm: mat1 and mat2 shapes cannot be "
            r"multiplied \(2x3 and 4x2\)",
        ),
        (lambda m: m.zeros(2, 3).mm(m.zeros(3)), "mm: expects two 2-D tensors"),
        (lambda m: m.zeros(2, 2, 3).mm(m.zeros(3, 2)), "mm: expects two 2-D tensors"),
        (lambda m: m.zeros(2, 2, 3).bmm(m.zeros(3, 3, 2)), "bmm: expected batch2 of shape"),
        (lambda m: m.zeros(2, 2, 3).bmm(m.zeros(1, 3, 2)), "bmm: expected batch2 of shape"),
        (lambda m: m.zeros(2, 3).bmm(m.zeros(3, 2)), "bmm: expects two 3-D tensors"),
    ]
    for call, message in bad:
        with pytest.raises(RuntimeError):
            call(torch)  # PyTorch refuses each too
        with pytest.raises(ValueError, match=message):
            call(cr)


def test_narrow_as_torch() -> None:
    a = np.arange(24.0).reshape(4, 6)
    for dim, start, length in [(0, 1, 2), (1, 0, 6), (1, -3, 2), (-1, 5, 1), (0, 4, 0)]:
        ours = cr.tensor(a).narrow(dim, start, length)
        np.testing.assert_array_equal(ours.numpy(), torch.tensor(a).narrow(dim, start, length))
    assert cr.tensor(a).narrow(0, cr.tensor(1), 2).shape == (2, 6)
    for dim, start, length in [(0, 3, 2), (1, -7, 1), (0, 0, -1)]:
        with pytest.raises((RuntimeError, IndexError)):
            torch.tensor(a).narrow(dim, start, length)
        with pytest.raises(IndexError, match="narrow: start"):
            cr.tensor(a).narrow(dim, start, length)


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        "float64",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    ],
)
def test_type_names_and_sizes_are_torchs(dtype) -> None:
    ours = cr.zeros(2, 3, dtype=getattr(cr, dtype))
    theirs = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    assert ours.type() == theirs.type().replace("torch.", "chainrule.")
    assert ours.element_size() == theirs.element_size()
    assert ours.nelement() == theirs.nelement() == ours.numel()
    assert ours.is_floating_point() == theirs.is_floating_point()
    assert ours.is_contiguous() and theirs.is_contiguous()


def test_type_and_type_as_convert() -> None:
    x = cr.tensor([1.5, -2.5])
    assert x.type(cr.float64).dtype == cr.float64
    assert x.type("torch.LongTensor").dtype == cr.int64
    assert x.type("chainrule.DoubleTensor").dtype == cr.float64
    assert x.type(cr.IntTensor).dtype == cr.int32
    np.testing.assert_array_equal(
        x.type(cr.int64).numpy(), torch.tensor([1.5, -2.5]).type(torch.int64).numpy()
    )
    assert x.type_as(cr.zeros(1, dtype=cr.float16)).dtype == cr.float16
    assert x.type(cr.float32) is x and x.type_as(x) is x
    y = cr.tensor([1.0, 2.0], requires_grad=True)
    (y.type(cr.float64) * 3).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])


def test_index_and_format_as_torch() -> None:
    items = [10, 20, 30, 40]
    for lib in (cr, torch):
        i = lib.tensor(2)
        assert items[i] == 30 and items[: lib.tensor(1)] == [10] and list(range(i)) == [0, 1]
        assert items[lib.tensor([1])] == 20  # one element, of any number of dims
        for bad in (lib.tensor(1.0), lib.tensor([1, 2])):
            with pytest.raises(TypeError, match="only integer tensors of a single element"):
                items[bad]
    loss_ours, loss_theirs = cr.tensor(0.123456), torch.tensor(0.123456)
    for spec in (".4f", "", ".2e", "8.3f"):
        assert format(loss_ours, spec) == format(loss_theirs, spec)
    assert f"{cr.tensor(7):>4d}" == f"{torch.tensor(7):>4d}"
    assert f"{cr.tensor([1.0, 2.0])}" == str(cr.tensor([1.0, 2.0]))
    for lib in (cr, torch):
        with pytest.raises(TypeError):
            f"{lib.tensor([1.0, 2.0]):.2f}"


REMAINDER_CASES = [  # (dividend, divisor): signs, fractions, a number on either side
    ([5.0, -5.0, 5.5, 0.3, -7.1, -5.0], [3.0, 3.0, -2.0, 0.1, 0.7, 2.5]),
    ([7, -7, 0, 6], [2, 2, -3, -4]),
    ([7, -7, 0], 3),
    ([7, -7, 0], 2.5),
    ([7.5, -7.5], -2),
    (7, [3, -3, 4]),
    (7.5, [2.0, -2.0]),
]


@pytest.mark.parametrize(("a", "b"), REMAINDER_CASES)
def test_remainder_and_floor_divide_as_torch(a, b) -> None:
    """%, // and their names, with the divisor's sign and rounding down, as torch and Python
    (NumPy's own remainder gives +0.0 where torch gives -0.0)."""
    results = {}
    for lib in (cr, torch):
        x = lib.tensor(a) if isinstance(a, list) else a
        y = lib.tensor(b) if isinstance(b, list) else b
        results[lib] = [x % y, x // y, lib.remainder(x, y), lib.floor_divide(x, y)]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        assert torch_dtype_text(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(np.signbit(ours.numpy()), np.signbit(theirs.numpy()))


def test_remainder_gradient_and_division_by_zero_as_torch() -> None:
    grads = {}
    for lib in (cr, torch):
        x = lib.tensor([5.0, -5.0, 5.5, 0.3], requires_grad=True)
        y = lib.tensor([3.0, 3.0, -2.0, 0.1], requires_grad=True)
        (x % y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        grads[lib] = (x.grad.numpy(), y.grad.numpy())
        assert (x // y).requires_grad  # both mark it; neither can backward through it
        assert np.isnan((lib.tensor([1.0, -2.0]) % 0).numpy()).all()
    for ours, theirs in zip(grads[cr], grads[torch], strict=True):
        np.testing.assert_array_equal(ours, theirs)
    for lib in (cr, torch):
        with pytest.raises(RuntimeError, match="ZeroDivisionError|division by zero"):
            lib.tensor([4, 5]) % lib.tensor([1, 0])
        with pytest.raises(RuntimeError, match="ZeroDivisionError|division by zero"):
            lib.tensor([4, 5]) // 0


def test_isnan_isinf_isfinite_isclose_allclose_equal_as_torch() -> None:
    x = [1.0, float("nan"), float("inf"), -float("inf"), 0.0, 1e-9]
    y = [1.0 + 1e-6, float("nan"), float("inf"), float("inf"), 1e-9, 0.0]
    for name in ("isnan", "isinf", "isfinite"):
        for data in (x, [1, 2]):
            ours = getattr(cr, name)(cr.tensor(data))
            theirs = getattr(torch, name)(torch.tensor(data))
            assert ours.dtype == cr.bool and ours.tolist() == theirs.tolist()
            assert getattr(cr.tensor(data), name)().tolist() == theirs.tolist()
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-8}):
        ours = cr.isclose(cr.tensor(x), cr.tensor(y), **kwargs)
        theirs = torch.isclose(torch.tensor(x), torch.tensor(y), **kwargs)
        assert ours.tolist() == theirs.tolist()
        assert cr.allclose(cr.tensor(x), cr.tensor(y), **kwargs) is torch.allclose(
            torch.tensor(x), torch.tensor(y), **kwargs
        )
    assert cr.tensor([[1.0, 2.0]]).isclose(cr.tensor([1.0])).tolist() == [[True, False]]
    assert cr.allclose(cr.ones(3), cr.ones(3) + 1e-6) and not cr.ones(3).allclose(cr.zeros(1))
    for lib in (cr, torch):
        assert lib.equal(lib.tensor([1, 2]), lib.tensor([1.0, 2.0]))  # any dtypes
        assert not lib.equal(lib.ones(2), lib.ones(1, 2))
        assert not lib.equal(lib.ones(2), lib.ones(3))
        assert not lib.tensor([float("nan")]).equal(lib.tensor([float("nan")]))
    with pytest.raises(TypeError, match="isclose: needs two tensors of one dtype"):
        cr.isclose(cr.tensor([1]), cr.tensor([1.0]))
    with pytest.raises(ValueError, match="isclose: shapes"):
        cr.allclose(cr.ones(2), cr.ones(3))


def test_histogram_and_histc_as_torch() -> None:
    x = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    cases = [
        ({}, {}),
        ({"bins": 7}, {}),
        ({"bins": 4, "range": (-1.0, 1.0)}, {"density": True}),
        ({"bins": [-2.0, 0.0, 0.5, 3.0]}, {}),
    ]
    for args, flags in cases:
        results = []
        for lib in (cr, torch):
            kwargs = {**args, **flags}
            if isinstance(kwargs.get("bins"), list):
                kwargs["bins"] = lib.tensor(kwargs["bins"])
            results.append(lib.histogram(lib.tensor(x), **kwargs))
        ours, theirs = results
        assert ours.hist.dtype == cr.float32 and ours.bin_edges.dtype == cr.float32
        np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-6)
        # edges within float32 rounding of the range (NumPy spaces them in float64, torch in
        # the input's dtype)
        np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy(), atol=1e-6)
        hist, edges = cr.tensor(x).histogram(**{**args, **flags})  # a pair, as torch's
        assert hist.shape[0] == edges.shape[0] - 1
    for data, kwargs in [
        (x, {}),
        (x, {"bins": 4, "min": -1, "max": 1}),
        ([1.0, 1.0], {"bins": 4}),
        ([1.0, 3.0], {"bins": 4, "min": 2, "max": 2}),
    ]:
        ours = cr.histc(cr.tensor(data), **kwargs)
        np.testing.assert_array_equal(ours.numpy(), torch.histc(torch.tensor(data), **kwargs))
    for name in ("histogram", "histc"):
        with pytest.raises(TypeError, match=f"{name}: needs a floating-point tensor"):
            getattr(cr, name)(cr.tensor([1, 2]))


def test_floor_ceil_trunc_round_as_torch() -> None:
    """Values as torch's (halves to even, -0.0 kept, decimals either way) and gradient 0."""
    x = [[1.5, 2.5, -0.5, -1.5], [1.234, 5.678, -151.0, 0.05]]
    cases = [("floor", {}), ("ceil", {}), ("trunc", {}), ("round", {})]
    cases += [("round", {"decimals": 1}), ("round", {"decimals": 2}), ("round", {"decimals": -1})]
    for name, kwargs in cases:
        ours = cr.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        out_ours = getattr(ours, name)(**kwargs)
        out_theirs = getattr(torch, name)(theirs, **kwargs)
        values = out_theirs.detach().numpy()
        np.testing.assert_array_equal(out_ours.numpy(), values)
        np.testing.assert_array_equal(np.signbit(out_ours.numpy()), np.signbit(values))
        np.testing.assert_array_equal(getattr(cr, name)(ours, **kwargs).numpy(), out_ours.numpy())
        assert out_ours.requires_grad
        (out_ours * cr.tensor(x)).sum().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), np.zeros((2, 4), dtype=np.float32))
        ints = getattr(cr.tensor([3, -4]), name)(**kwargs)
        assert ints.dtype == cr.int64 and ints.tolist() == [3, -4]


def test_clamp_min_max_unbind_tile_as_torch() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    results = {}
    for lib in (cr, torch):
        t = lib.tensor(x, requires_grad=True)
        pieces = t.unbind(1)
        outs = [t.clamp_min(-2.0), lib.clamp_max(t, 3.0), *pieces, *lib.unbind(t, dim=-1)]
        outs += [t.tile((2,)), t.tile((2, 1, 1, 1)), lib.tile(t, (1, 2, 1))]
        sum((o * o).sum() for o in outs).backward()
        results[lib] = [o.detach().numpy() for o in outs] + [t.grad.numpy(), len(pieces)]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert cr.zeros(2, 0).unbind(1) == ()
    with pytest.raises(ValueError, match=r"unbind: needs a tensor of at least 1 dims; got"):
        cr.tensor(1.0).unbind()


def test_nonzero_unique_bincount_as_torch() -> None:
    m = [[0, 1, 0], [2, 0, 3]]
    for lib_args in ([m], [[1.5, 0.0]], [0], [3]):
        ours, theirs = cr.tensor(*lib_args), torch.tensor(*lib_args)
        assert ours.nonzero().tolist() == theirs.nonzero().tolist()
        assert ours.nonzero().shape == tuple(theirs.nonzero().shape)
        assert ours.nonzero().dtype == cr.int64
        pairs = zip(cr.nonzero(ours, as_tuple=True), theirs.nonzero(as_tuple=True), strict=True)
        assert all(a.tolist() == b.tolist() for a, b in pairs)
    data = [[3, 1], [2, 3], [3, 1]]
    for kwargs in (
        {},
        {"return_inverse": True},
        {"return_counts": True},
        {"return_inverse": True, "return_counts": True, "dim": 0},
    ):
        ours = cr.unique(cr.tensor(data), **kwargs)
        theirs = torch.unique(torch.tensor(data), **kwargs)
        ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
        assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]
    assert cr.tensor([2.5, 1.0, 2.5]).unique().tolist() == [1.0, 2.5]
    for kwargs in ({}, {"minlength": 6}, {"weights": [0.5, 1.0, 2.0, 1.0]}):
        outs = []
        for lib in (cr, torch):
            kw = {k: lib.tensor(v) if k == "weights" else v for k, v in kwargs.items()}
            outs.append(lib.bincount(lib.tensor([1, 3, 3, 0]), **kw))
        assert outs[0].tolist() == outs[1].tolist()
        assert torch_dtype_text(outs[0].dtype) == str(outs[1].dtype)
    w64 = cr.tensor([1.0, 2.0], dtype=cr.float64)
    assert cr.tensor([0, 0]).bincount(w64).dtype == cr.float64
    for bad in (cr.tensor([1, -1]), cr.tensor([[1]]), cr.tensor([1.0])):
        with pytest.raises(ValueError, match="bincount: needs a 1-D tensor of non-negative"):
            cr.bincount(bad)


def test_normalize_and_cosine_similarity_as_torch() -> None:
    """Values and gradients, a zero vector included (its norm clamped at eps)."""
    x = np.random.default_rng(0).standard_normal((4, 5))
    y = np.random.default_rng(1).standard_normal((1, 5))
    x[1] = 0
    results = {}
    for lib in (cr, torch):
        F_ = lib.nn.functional
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        outs = [F_.normalize(a), F_.normalize(a, p=1.0, dim=0), F_.cosine_similarity(a, b)]
        outs += [lib.nn.CosineSimilarity(dim=0)(a, a + 1)]
        weights = [lib.tensor(np.linspace(-1, 2, o.numel()).reshape(o.shape)) for o in outs]
        sum((o * w).sum() for o, w in zip(outs, weights, strict=True)).backward()
        results[lib] = [o.detach().numpy() for o in outs] + [a.grad.numpy(), b.grad.numpy()]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert repr(nn.CosineSimilarity()) == repr(torch.nn.CosineSimilarity()) == "CosineSimilarity()"


def test_prod_dot_mv_and_sum_mean_dtype_as_torch() -> None:
    """Values, dtypes and gradients; prod's gradient where an element is 0 included."""
    x = np.array([[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]], dtype=np.float32)
    results = {}
    for lib in (cr, torch):
        t = lib.tensor(x, requires_grad=True)
        outs = [t.prod(), t.prod(1), t.prod(0, keepdim=True), lib.prod(t, dim=-1)]
        outs += [t.prod(dtype=lib.float64), t.sum(dtype=lib.float64), t.mean(1, dtype=lib.float64)]
        outs += [t.mv(lib.tensor([1.0, 2.0, 3.0])), lib.mv(t, t[0]), lib.dot(t[0], t[1])]
        outs += [t[1].dot(lib.tensor([2.0, 0.0, 1.0]))]
        weights = [lib.tensor(np.linspace(-1, 2, o.numel()).reshape(o.shape)) for o in outs]
        sum((o.double() * w).sum() for o, w in zip(outs, weights, strict=True)).backward()
        outs += [lib.tensor([1, 2, 3], dtype=lib.int32).prod(), lib.tensor([True, True]).prod()]
        outs += [lib.ones(0).prod(), lib.ones(2, 0).prod(1), lib.tensor(3.0).prod(0)]
        outs += [lib.tensor([1, 2], dtype=lib.int32).sum(dtype=lib.int64)]
        results[lib] = [(o.detach().numpy(), o.dtype) for o in [*outs, t.grad]]
    for (ours, dtype_ours), (theirs, dtype_theirs) in zip(results[cr], results[torch], strict=True):
        assert torch_dtype_text(dtype_ours) == str(dtype_theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    with pytest.raises(ValueError, match=r"dot: expects two 1-D tensors of one size; got shapes"):
        cr.dot(cr.ones(2), cr.ones(3))
    with pytest.raises(ValueError, match=r"mv: expects a matrix \(n, m\) and a vector \(m,\)"):
        cr.ones(2, 3).mv(cr.ones(2))


def test_multistep_lr_as_torch() -> None:
    lrs = {}
    for lib in (cr, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        sched = lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[4, 2, 4], gamma=0.5)
        seen = []
        for _ in range(6):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(3)  # the closed form: one milestone (2) reached by epoch 3
        seen.append(opt.param_groups[0]["lr"])
        lrs[lib] = (seen, dict(sched.state_dict()["milestones"]))
    assert lrs[cr] == lrs[torch]


def test_torch_utils_data_submodules_are_there() -> None:
    """Code that imports from torch.utils.data's submodules finds chainrule.data's objects."""
    from chainrule.utils.data.dataloader import DataLoader, default_collate
    from chainrule.utils.data.dataset import Dataset, TensorDataset
    from chainrule.utils.data.sampler import RandomSampler

    assert DataLoader is cr.data.DataLoader and default_collate is cr.data.default_collate
    assert Dataset is cr.utils.data.Dataset and TensorDataset is cr.data.TensorDataset
    assert RandomSampler is cr.data.RandomSampler


def test_addcmul_addcdiv_lerp_as_torch() -> None:
    """Values (addcmul within an ulp: torch fuses its last multiply-add), gradients, the in-place
    forms a hand-written Adam uses, and lerp exact at weight 1."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    c = np.abs(c) + 0.5
    w = np.array([0.0, 0.3, 0.5, 0.9, 1.0, -0.2], dtype=np.float32)
    results = {}
    for lib in (cr, torch):
        x, y, z = (lib.tensor(v, requires_grad=True) for v in (a, b, c))
        outs = [x.addcmul(y, z, value=0.3), lib.addcmul(x, y, z), lib.addcdiv(x, y, z, value=-0.1)]
        outs += [x.lerp(y, 0.7), lib.lerp(x, y, 0.2), x.lerp(y, lib.tensor(w)), x.lerp(y, 1.0)]
        upstream = lib.tensor(np.linspace(-1, 2, 6).astype(np.float32))
        sum((o * upstream).sum() for o in outs).backward()
        with lib.no_grad():
            m = x.detach().clone()
            m.mul_(0.9).addcmul_(y, y, value=0.1).addcdiv_(y, z.sqrt().add_(1e-8), value=-1e-3)
        results[lib] = [o.detach().numpy() for o in outs] + [m.numpy()]
        results[lib] += [x.grad.numpy(), y.grad.numpy(), z.grad.numpy()]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=2e-7, atol=1e-7)
    np.testing.assert_array_equal(results[cr][6], b)  # lerp to weight 1 is end itself
    for lib in (cr, torch):  # an exponential moving average of weights, and lerp_ in a graph
        ema, p = lib.zeros(3), lib.tensor([1.0, 2.0, 4.0])
        for _ in range(3):
            ema.lerp_(p, 0.1)
        x = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
        y = x * 2
        y.lerp_(lib.tensor([5.0, 5.0, 5.0]), 0.75)
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        results[lib] = [ema.numpy(), y.detach().numpy(), x.grad.numpy()]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7)
    with pytest.raises(RuntimeError, match="addcmul_: a leaf tensor that requires grad"):
        cr.ones(2, requires_grad=True).addcmul_(cr.ones(2), cr.ones(2))


def _parameter_containers(lib) -> tuple:
    """What a module holding a ParameterList and a ParameterDict shows, on torch or chainrule."""
    nn_ = lib.nn

    class Model(nn_.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ws = nn_.ParameterList([nn_.Parameter(lib.ones(2, 3)), lib.zeros(3)])
            self.ws.append(lib.ones(1))
            self.d = nn_.ParameterDict({"a": nn_.Parameter(lib.ones(2)), "b": lib.zeros(1)})
            self.d["c"] = lib.full((4,), 2.0)

    m = Model()
    names = [n for n, _ in m.named_parameters()]
    assert names == list(m.state_dict()) and all(p.requires_grad for p in m.parameters())
    assert all(type(p).__name__ == "Parameter" for p in [*m.ws, *m.d.values()])
    m.ws[1] = nn_.Parameter(lib.ones(5))
    del m.d["b"]
    return (
        names,
        [tuple(p.shape) for p in m.ws],
        [tuple(p.shape) for p in m.ws[1:]],
        tuple(m.ws[-1].shape),
        list(m.d.keys()),
        [k for k, _ in m.d.items()],
        ("a" in m.d, "b" in m.d, len(m.d), len(m.ws)),
    )


def test_parameter_list_and_dict_as_torch() -> None:
    results = {lib: _parameter_containers(lib) for lib in (cr, torch)}
    assert results[cr] == results[torch]
    with pytest.raises(IndexError, match="ParameterList: index 3 is out of range for length 3"):
        cr.nn.ParameterList([cr.ones(1)] * 3)[3]
    with pytest.raises(KeyError, match="ParameterDict: no parameter named 'x'"):
        cr.nn.ParameterDict()["x"]
    shown = repr(cr.nn.ParameterList([cr.ones(2, 3)]))
    assert "(0): Parameter containing: [chainrule.float32 of size 2x3]" in shown


def test_diag_meshgrid_var_mean_as_torch() -> None:
    results = {}
    for lib in (cr, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        m = lib.arange(12.0).view(3, 4).requires_grad_()
        outs = [lib.diag(x), x.diag(1), x.diag(-2)]
        outs += [m.diag(k) for k in (0, 1, -1, 3, -3, 5)]
        outs += [*lib.meshgrid(x, m[0], indexing="ij"), *lib.meshgrid([x, m[0], x], indexing="xy")]
        outs += [*lib.var_mean(m, dim=1), *lib.std_mean(m, 0, correction=0, keepdim=True)]
        outs += [*lib.var_mean(m)]
        weights = [lib.tensor(np.linspace(-1, 2, o.numel()).reshape(o.shape)).float() for o in outs]
        sum((o * w).sum() for o, w in zip(outs, weights, strict=True)).backward()
        results[lib] = [o.detach().numpy() for o in outs] + [x.grad.numpy(), m.grad.numpy()]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    with pytest.raises(ValueError, match=r"diag: expected a 1-D or 2-D tensor; got shape"):
        cr.ones(2, 2, 2).diag()
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'ij' or 'xy'"):
        cr.meshgrid(cr.ones(2), indexing="ji")


def test_scatter_index_fill_tril_in_place_as_torch() -> None:
    results = {}
    for lib in (cr, torch):
        z = lib.zeros(3, 4)
        assert z.scatter_(1, lib.tensor([[0], [1], [2]]), 1.0) is z  # one-hot rows
        outs = [z, lib.zeros(3, 4).scatter_(0, lib.tensor([[2, 0, 1, 0]]), lib.ones(1, 4) * 7)]
        outs += [lib.zeros(3, 4).index_fill_(1, lib.tensor([0, 2]), -1.0)]
        outs += [lib.index_fill(lib.ones(2, 3), 0, lib.tensor([1]), 5.0)]
        outs += [lib.ones(3, 3).tril_(), lib.ones(3, 4).triu_(1), lib.ones(3, 3).tril_(-1)]
        w = lib.ones(2, 3, requires_grad=True)
        v = lib.tensor(4.0, requires_grad=True)
        (w.index_fill(1, lib.tensor([1]), v) * lib.arange(6.0).view(2, 3)).sum().backward()
        results[lib] = [o.numpy() for o in outs] + [w.grad.numpy(), v.grad.numpy()]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_normal_as_torch() -> None:
    """Shapes and dtypes as torch's (the draws are chainrule's own generator's)."""
    cases = [((2.0, 3.0), {"size": (2, 5)}), ((0.0, 1.0, (3,)), {}), ((2.0, 3.0), {"size": (4,)})]
    for args, kwargs in cases:
        ours, theirs = cr.normal(*args, **kwargs), torch.normal(*args, **kwargs)
        assert ours.shape == tuple(theirs.shape) and ours.dtype == cr.float32
    for lib in (cr, torch):
        assert tuple(lib.normal(lib.zeros(3), 1.0).shape) == (3,)
        assert tuple(lib.normal(0.0, lib.ones(2, 2)).shape) == (2, 2)
        assert tuple(lib.normal(lib.zeros(3, 1), lib.ones(3)).shape) == (3, 3)
        assert str(lib.normal(lib.zeros(3, dtype=lib.float64), 1.0).dtype).endswith("float64")
    draws = cr.normal(5.0, 2.0, (20000,), generator=cr.Generator().manual_seed(0)).numpy()
    assert abs(draws.mean() - 5.0) < 0.05 and abs(draws.std() - 2.0) < 0.05
    with pytest.raises(TypeError, match="normal: two numbers need a size"):
        cr.normal(0.0, 1.0)


def test_cosine_annealing_warm_restarts_as_torch() -> None:
    """Restarts every T_0 (or ever longer periods), and fractional epochs given to step."""
    for t_mult in (1, 2):
        lrs = {}
        for lib in (cr, torch):
            opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
                opt, T_0=3, T_mult=t_mult, eta_min=0.1
            )
            seen = []
            for _ in range(10):
                opt.step()
                sched.step()
                seen.append(sched.get_last_lr()[0])
            for epoch in (2.5, 7.25, 26, 0.5, None):
                sched.step(epoch)
                seen.append(opt.param_groups[0]["lr"])
            lrs[lib] = (seen, sched.last_epoch, sched.T_cur, sched.T_i)
        np.testing.assert_allclose(lrs[cr][0], lrs[torch][0], rtol=1e-12)
        assert lrs[cr][1:] == lrs[torch][1:]
    opt = cr.optim.SGD([cr.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="CosineAnnealingWarmRestarts: T_mult must be an int"):
        cr.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=0)


def test_unflatten_and_exponential_as_torch() -> None:
    for lib in (cr, torch):
        x = lib.arange(24.0).view(2, 12).requires_grad_()
        assert tuple(x.unflatten(1, (3, 4)).shape) == (2, 3, 4)
        assert tuple(x.unflatten(-1, (2, -1, 3)).shape) == (2, 2, 2, 3)
        layer = lib.nn.Unflatten(1, [3, 4])
        assert repr(layer) == "Unflatten(dim=1, unflattened_size=[3, 4])"  # as given
        (layer(x) * 2).sum().backward()
        assert x.grad.tolist() == [[2.0] * 12] * 2
    with pytest.raises(ValueError, match=r"unflatten: sizes \(5, 2\) do not multiply to dim 1's"):
        cr.ones(2, 12).unflatten(1, (5, 2))
    t = cr.empty(20000)
    assert t.exponential_(2.0, generator=cr.Generator().manual_seed(0)) is t
    assert t.numpy().min() >= 0 and abs(t.numpy().mean() - 0.5) < 0.02


ACTIVATIONS = [  # (name, keyword arguments) of F's function and nn's module
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("celu", {"alpha": 2.0}),
    ("hardtanh", {}),
    ("hardtanh", {"min_val": -2.0, "max_val": 3.0}),
    ("relu6", {}),
    ("softsign", {}),
    ("softmin", {"dim": 0}),
    ("threshold", {"threshold": 0.1, "value": 20.0}),
    ("glu", {"dim": 0}),
]
MODULES = {"elu": "ELU", "selu": "SELU", "celu": "CELU", "hardtanh": "Hardtanh", "relu6": "ReLU6"}
MODULES |= {"softsign": "Softsign", "softmin": "Softmin", "threshold": "Threshold", "glu": "GLU"}


@pytest.mark.parametrize(("name", "kwargs"), ACTIVATIONS)
def test_more_activations_as_torch(name: str, kwargs: dict) -> None:
    """Values and gradients on both sides of 0, at the kinks and bounds (hardtanh's gradient
    is 0 at its bounds, clamp's 1), and tiny negatives (elu's exp(x) - 1 without
    cancellation); the modules' reprs."""
    x = [-10.0, -3.0, -1.0, -1e-3, -1e-6, 0.0, 1e-6, 0.1, 1.0, 2.0, 3.0, 6.0, 7.0, -2.0]
    results = {}
    for lib in (cr, torch):
        t = lib.tensor(x, requires_grad=True)
        out = getattr(lib.nn.functional, name)(t, **kwargs)
        (out * lib.linspace(-1.0, 2.0, out.numel()).reshape(out.shape)).sum().backward()
        module = getattr(lib.nn, MODULES[name])(*kwargs.values())
        results[lib] = (out.detach().numpy(), t.grad.numpy(), module(t).detach().numpy())
        results[lib] += (repr(module),)
    for ours, theirs in zip(results[cr][:3], results[torch][:3], strict=True):
        # 2 float32 ulp; softmin's gradient, softmax's, carries absolute errors of its sum
        np.testing.assert_allclose(ours, theirs, rtol=2.5e-7, atol=2e-7)
    assert results[cr][3] == results[torch][3]


def test_prelu_as_torch() -> None:
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 3, 4)
    results = {}
    for lib in (cr, torch):
        layer, shared = lib.nn.PReLU(3, init=0.1), lib.nn.PReLU()
        t = lib.tensor(x, requires_grad=True)
        out = layer(t) + shared(t) + lib.nn.functional.prelu(t, lib.tensor([0.5, 1.0, 2.0]))
        (out * lib.tensor(x)).sum().backward()
        results[lib] = [out.detach().numpy(), t.grad.numpy(), layer.weight.grad.numpy()]
        results[lib] += [shared.weight.grad.numpy(), np.array(repr(layer))]
    for ours, theirs in zip(results[cr], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6) if ours.dtype.kind == "f" else None
    assert str(results[cr][-1]) == str(results[torch][-1]) == "PReLU(num_parameters=3)"
    with pytest.raises(ValueError, match="glu: dim -1 must have an even size"):
        cr.nn.functional.glu(cr.ones(2, 3))


def test_log2_and_log10_as_torch() -> None:
    x = np.array([1e-3, 0.5, 1.0, 2.0, 10.0, 1234.5], dtype=np.float32)
    for name in ("log2", "log10"):
        ours = cr.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        out_ours, out_theirs = getattr(ours, name)(), getattr(torch, name)(theirs)
        np.testing.assert_allclose(out_ours.numpy(), out_theirs.detach().numpy(), rtol=2e-7)
        np.testing.assert_allclose(getattr(cr, name)(cr.tensor(x)).numpy(), out_ours.numpy())
        upstream = np.linspace(-1, 2, x.size, dtype=np.float32)
        out_ours.backward(cr.tensor(upstream))
        out_theirs.backward(torch.tensor(upstream))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=2e-7)
        assert getattr(cr.tensor([1, 100]), name)().dtype == cr.float32  # integers: float32


def test_view_and_data_ptr() -> None:
    x = cr.arange(6.0)
    assert x.view(2, 3).shape == (2, 3) and x.view((3, 2)).shape == (3, 2)
    assert x.view(-1, 2).shape == (3, 2)
    with pytest.raises(TypeError, match=r"view: reading a tensor's bytes as another dtype"):
        x.view(cr.int32)
    a = np.zeros(3)
    assert cr.from_numpy(a).data_ptr() == a.__array_interface__["data"][0]
    assert x.half().dtype == cr.float16 and x.bfloat16().dtype == cr.bfloat16


# -- layers, losses, initialisation and optimizers -----------------------------------------------


def test_activation_and_loss_modules_are_torchs() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 5)) * 3, rng.standard_normal((4, 5))
    pairs = [
        (nn.SiLU(), torch.nn.SiLU()),
        (nn.Mish(), torch.nn.Mish()),
        (nn.Softplus(beta=2.0, threshold=5.0), torch.nn.Softplus(beta=2.0, threshold=5.0)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(
            ours(cr.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12, atol=1e-12
        )
        assert repr(ours) == repr(theirs)
    losses = [
        (nn.SmoothL1Loss(), torch.nn.SmoothL1Loss()),
        (
            nn.SmoothL1Loss(reduction="sum", beta=0.5),
            torch.nn.SmoothL1Loss(reduction="sum", beta=0.5),
        ),
        (nn.HuberLoss(), torch.nn.HuberLoss()),
        (nn.HuberLoss("none", delta=2.0), torch.nn.HuberLoss("none", delta=2.0)),
    ]
    for ours, theirs in losses:
        np.testing.assert_allclose(
            ours(cr.tensor(x), cr.tensor(y)).numpy(),
            theirs(torch.tensor(x), torch.tensor(y)).numpy(),
            rtol=1e-12,
        )
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be non-negative"):
        F.smooth_l1_loss(cr.tensor(x), cr.tensor(y), beta=-1.0)
    with pytest.raises(ValueError, match="HuberLoss: delta must be positive"):
        nn.HuberLoss(delta=0.0)


def test_trunc_normal_is_torchs_formula() -> None:
    t = cr.zeros(2000, dtype=cr.float64)
    out = nn.init.trunc_normal_(
        t, mean=0.5, std=2.0, a=-1.0, b=3.0, generator=cr.Generator().manual_seed(4)
    )
    assert out is t

    # PyTorch's own draws from the same seed (its rejection sampler), bit for bit
    expected = torch.nn.init.trunc_normal_(
        torch.zeros(2000, dtype=torch.float64),
        0.5,
        2.0,
        -1.0,
        3.0,
        torch.Generator().manual_seed(4),
    )
    assert t.numpy().tobytes() == expected.numpy().tobytes()
    assert t.numpy().min() >= -1.0 and t.numpy().max() <= 3.0
    w = cr.zeros(400, 500)
    nn.init.trunc_normal_(w, std=0.02)
    theirs = torch.nn.init.trunc_normal_(torch.zeros(400, 500), std=0.02)
    assert abs(w.numpy().std() - theirs.std().item()) < 2e-4 and w.dtype == cr.float32
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        nn.init.trunc_normal_(cr.zeros(3), mean=10.0)


@pytest.mark.parametrize("name", list(LAYERS))
def test_every_layer_with_parameters_resets_them(name) -> None:
    layer = LAYERS[name]()
    before = {k: v.numpy().copy() for k, v in layer.state_dict().items()}
    with cr.no_grad():
        for p in layer.parameters():
            p.fill_(7.0)
    for m in layer.modules():  # MultiheadAttention: PyTorch's _reset_parameters, and its Linear
        reset = getattr(m, "reset_parameters", None) or m._reset_parameters
        reset()
    for key, value in layer.state_dict().items():
        if name in ("BatchNorm1d", "BatchNorm2d", "LayerNorm") or "num_batches" in key:
            np.testing.assert_array_equal(value.numpy(), before[key])  # back as made
        else:
            assert not (value.numpy() == 7.0).any()  # drawn anew


def test_batch_norm_reset_parameters_resets_running_stats() -> None:
    bn = nn.BatchNorm1d(3)
    bn(cr.randn(8, 3) * 5 + 2)
    bn.reset_parameters()
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(3))
    assert int(bn.num_batches_tracked.item()) == 0


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_kernel_options_as_torch(name) -> None:
    accepted = {"foreach": True} if name == "RMSprop" else {"foreach": True, "fused": False}
    w = cr.ones(2, requires_grad=True)
    opt = getattr(cr.optim, name)([w], lr=0.1, **accepted)
    theirs = getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], lr=0.1)
    assert set(opt.state_dict()["param_groups"][0]) == set(theirs.state_dict()["param_groups"][0])
    (w * w).sum().backward()
    opt.step()
    for flag in ("differentiable", "capturable"):
        if name == "SGD" and flag == "capturable":
            continue
        with pytest.raises(ValueError, match=f"^{name}: {flag}=True"):
            getattr(cr.optim, name)([w], lr=0.1, **{flag: True})


def _lbfgs_run(lib, problem, steps, **options):
    rng = np.random.default_rng(0)
    if problem == "least_squares":
        a, b = lib.tensor(rng.standard_normal((20, 5))), lib.tensor(rng.standard_normal(20))
        w = lib.tensor(np.zeros(5), requires_grad=True)

        def f():
            return ((a @ w - b) ** 2).sum()
    else:  # Rosenbrock's valley, from its usual start
        w = lib.tensor(np.array([-1.5, 2.0]), requires_grad=True)

        def f():
            return (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2

    opt = lib.optim.LBFGS([w], **options)

    def closure():
        opt.zero_grad()
        loss = f()
        loss.backward()
        return loss

    seen = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[w]
        seen.append((loss.item(), w.detach().numpy().copy(), state["func_evals"], state["n_iter"]))
    return seen, opt


LBFGS_CASES = [
    ("least_squares", {}),
    ("least_squares", {"lr": 0.1, "max_iter": 5, "history_size": 3}),
    ("least_squares", {"line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"lr": 0.1, "max_iter": 5, "history_size": 3}),
    ("rosenbrock", {"line_search_fn": "strong_wolfe"}),
    (
        "rosenbrock",
        {
            "line_search_fn": "strong_wolfe",
            "max_iter": 7,
            "max_eval": 9,
            "history_size": 2,
            "tolerance_change": 1e-6,
        },
    ),
]


@pytest.mark.parametrize(("problem", "options"), LBFGS_CASES)
def test_lbfgs_matches_torch_step_for_step(problem, options) -> None:
    ours, _ = _lbfgs_run(cr, problem, 4, **options)
    theirs, _ = _lbfgs_run(torch, problem, 4, **options)
    for (l1, w1, e1, n1), (l2, w2, e2, n2) in zip(ours, theirs, strict=True):
        # the same evaluations and iterations; values to float64's rounding, which the
        # line search's interpolations amplify a little, step after step
        np.testing.assert_allclose(w1, w2, rtol=1e-7, atol=1e-10)
        assert l1 == pytest.approx(l2, rel=1e-7, abs=1e-14) and (e1, n1) == (e2, n2)
    if "strong_wolfe" in str(options) and problem == "rosenbrock" and len(options) == 1:
        np.testing.assert_allclose(ours[-1][1], [1.0, 1.0], atol=1e-4)  # the minimum


def test_lbfgs_state_dict_resumes_and_errors() -> None:
    options = {"line_search_fn": "strong_wolfe", "max_iter": 3}
    straight, _ = _lbfgs_run(cr, "rosenbrock", 4, **options)
    first, opt = _lbfgs_run(cr, "rosenbrock", 2, **options)
    w = opt.param_groups[0]["params"][0]
    saved = opt.state_dict()
    again = cr.optim.LBFGS([w], **options)
    again.load_state_dict(saved)

    def closure():
        again.zero_grad()
        loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
        loss.backward()
        return loss

    again.step(closure)
    again.step(closure)
    np.testing.assert_array_equal(w.detach().numpy(), straight[-1][1])
    with pytest.raises(ValueError, match="LBFGS: per-parameter options"):
        cr.optim.LBFGS(
            [
                {"params": [cr.ones(1, requires_grad=True)]},
                {"params": [cr.ones(1, requires_grad=True)]},
            ]
        )
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        cr.optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(TypeError, match="LBFGS.step: a closure is required"):
        again.step()


# -- saving and loading ------------------------------------------------------------------------


def _checkpoint():
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = cr.optim.AdamW(model.parameters(), lr=1e-3, foreach=None)
    model(cr.randn(5, 3)).sum().backward()
    opt.step()
    return (
        model,
        opt,
        {
            "epoch": 3,
            "step": 120,
            "best": 0.8125,
            "loss_history": [1.5, 0.75, float("inf")],
            "name": "digits",
            "notes": None,
            "flags": [True, None, "x"],
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
        },
    )


def _same(a, b) -> None:
    if isinstance(a, cr.Tensor):
        assert isinstance(b, cr.Tensor) and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert type(a) is type(b) and a == b


def test_save_and_load_with_file_objects(tmp_path) -> None:
    import io

    model, opt, ckpt = _checkpoint()
    path = tmp_path / "ckpt.pt"
    with open(path, "wb") as f:  # the file opened by the user, as PyTorch scripts do
        cr.save(ckpt, f)
    with open(path, "rb") as f:
        back = cr.load(f)
    _same(ckpt, back)
    buffer = io.BytesIO()
    cr.save(ckpt, buffer)
    buffer.seek(0)
    _same(ckpt, cr.load(buffer, map_location="cpu", weights_only=True))
    _same(ckpt, cr.load(path, weights_only=False))  # a path, as before
    model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt2 = cr.optim.AdamW(model2.parameters(), lr=1e-3)
    model2.load_state_dict(back["model"])
    opt2.load_state_dict(back["optimizer"])
    _same(opt.state_dict(), opt2.state_dict())


def test_load_map_location_names_the_cpu(tmp_path) -> None:
    path = tmp_path / "w.safetensors"
    cr.save({"w": cr.ones(2), "n": 1}, path)
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    for where in (
        None,
        "cpu",
        "cpu:0",
        cr.device("cpu"),
        torch.device("cpu"),
        {"cuda:0": "cpu"},
        {"cuda:1": cr.device("cpu")},
        keep,
        lambda storage, loc: storage,
    ):
        back = cr.load(path, map_location=where)
        assert back["n"] == 1 and back["w"].tolist() == [1.0, 1.0]
    assert seen == ["cpu"]
    for where in ("cuda", "cuda:0", cr.device("cuda"), {"cpu": "cuda:0"}, torch.device("cuda")):
        with pytest.raises(ValueError, match=f"^load: {CPU_ERROR}"):
            cr.load(path, map_location=where)
    with pytest.raises(TypeError, match="map_location's callable must return"):
        cr.load(path, map_location=lambda storage, loc: None)


def test_saving_a_module_pickles_it_and_loading_it_needs_weights_only_false(tmp_path) -> None:
    model, opt, _ = _checkpoint()
    for obj, kind in ((model, "Sequential"), (opt, "AdamW"), ({"model": model}, "dict")):
        cr.save(obj, tmp_path / "m.pt")
        with pytest.raises(pickle.UnpicklingError, match=f"a {kind}, saved whole.*state_dict"):
            cr.load(tmp_path / "m.pt")
        assert type(cr.load(tmp_path / "m.pt", weights_only=False)) is type(obj)
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]


SCRIPT = """
import {lib} as torch
import {lib}.nn as nn
import {lib}.nn.functional as F

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.cudnn.benchmark = True
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
use_amp = device.type == "cuda"

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16, device=device)
        self.fc2 = nn.Linear(16, 3, device=device, dtype=torch.float32)

    def forward(self, x):
        return self.fc2(F.silu(self.fc1(x)))

model = Net().to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=None)
scaler = torch.amp.GradScaler(enabled=use_amp)
x = torch.randn(32, 4, device=device)
y = torch.randint(3, (32,), device=device)
for step in range(5):
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_amp):
        loss = F.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    line = f"step {{step}}: loss {{loss.item():.4f}} / {{loss:.4f}}"
torch.save({{"model": model.state_dict(), "optimizer": opt.state_dict()}}, PATH)
state = torch.load(PATH, map_location=device, weights_only=True)
model.load_state_dict(state["model"])
result = (line, model(x).detach().cpu().numpy().shape, x.device.type, str(y.dtype))
"""


def test_an_ordinary_pytorch_script_runs_with_its_import_changed(tmp_path) -> None:
    results = {}
    for lib in ("torch", "chainrule"):
        scope = {"PATH": str(tmp_path / f"{lib}.pt")}
        exec(SCRIPT.format(lib=lib), scope)  # noqa: S102 (the script under test)
        results[lib] = scope["result"]
    line, shape, where, dtype = results["chainrule"]
    assert (shape, where) == results["torch"][1:3] == ((32, 3), "cpu")
    assert dtype == "chainrule.int64" and results["torch"][3] == "torch.int64"
    assert line.startswith("step 4: loss ") and line.split(" / ")[0][-6:] == line[-6:]


def test_torch_random_names_as_torch():
    for lib in (cr, torch):
        lib.random.manual_seed(3)
        lib.rand(3)
        state = lib.random.get_rng_state()
        with lib.random.fork_rng():
            lib.rand(5)  # draws of its own: the global state is put back after
        after = lib.rand(2)
        lib.random.set_rng_state(state)
        assert lib.rand(2).tolist() == after.tolist()
        assert lib.random.initial_seed() == 3
    with cr.random.fork_rng(enabled=False):
        cr.rand(1)
    with pytest.raises(ValueError, match="fork_rng: chainrule computes on the CPU"):
        with cr.random.fork_rng(devices=[0]):
            pass
    assert {"manual_seed", "seed", "fork_rng", "default_generator"} <= set(dir(cr.random))


def test_log1p_expm1_logsigmoid_and_softplus_far_out_as_torch():
    x = np.array([-1000.0, -40.0, -30.0, -1e-9, 0.0, 1e-12, 1e-9, 5.0, 40.0, 800.0])
    for dtype in (np.float64, np.float32):
        xs = x.astype(dtype)
        for name, fn in (
            ("logsigmoid", lambda m, t: m.nn.functional.logsigmoid(t)),
            ("softplus", lambda m, t: m.nn.functional.softplus(t)),
            ("LogSigmoid", lambda m, t: m.nn.LogSigmoid()(t)),
            ("expm1", lambda m, t: m.expm1(t.clamp(max=80.0))),
            ("log1p", lambda m, t: t.abs().log1p()),
            ("elu", lambda m, t: m.nn.functional.elu(t)),
        ):
            ours = cr.tensor(xs, requires_grad=True)
            theirs = torch.tensor(xs, requires_grad=True)
            a, b = fn(cr, ours), fn(torch, theirs)
            a.sum().backward()
            b.sum().backward()
            tol = 1e-15 if dtype == np.float64 else 1e-6
            expected = b.detach().numpy()
            np.testing.assert_allclose(a.numpy(), expected, rtol=tol, atol=0, err_msg=name)
            np.testing.assert_allclose(
                ours.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=1e-30, err_msg=name
            )
    y = cr.tensor([0.5, 1e-8])
    y.log1p_()
    z = cr.tensor([1e-8])
    z.expm1_()
    assert y.tolist()[1] == pytest.approx(1e-8, rel=1e-7) and z.item() == pytest.approx(1e-8)
