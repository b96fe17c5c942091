"""CPU and CUDA tensors side by side, as PyTorch keeps them. test_strict_backend runs this
file with the strict stand-in (NumPy with CuPy's refusals) as the CUDA device; on a machine
with a GPU, it runs on CuPy the same way. It is not collected by the plain run, where there
is no CUDA device:

    CHAINRULE_ARRAY_BACKEND=strict python -m pytest -q tests/array/devices_cases.py
    CHAINRULE_ARRAY_BACKEND=cupy python -m pytest -q tests/array/devices_cases.py   # on a GPU

Values are checked against PyTorch on the CPU and against chainrule on the CPU: on the
stand-in, which computes with NumPy, a CUDA result equals the CPU one bit for bit; on a GPU,
to 1e-5 in float32 and 1e-10 in float64. Every error is checked against PyTorch's wording.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import array, nn, optim

assert array.accelerator is not None, "run with CHAINRULE_ARRAY_BACKEND=strict (or cupy)"
EXACT = array.ARRAY_BACKEND == "strict"  # the stand-in computes with NumPy: the same bits
CUDA = cr.device("cuda", 0)
CPU = cr.device("cpu")
SAME_DEVICE = "expected all tensors to be on the same device, but found at least two devices"


def on_cuda(t: cr.Tensor) -> bool:
    return t.is_cuda and t.device == CUDA and type(t._array) is array.accelerator.ndarray


# Rows of LAPACK's decompositions and solvers: for one matrix the host calls SciPy's LAPACK
# in the matrix's own dtype, a device its array module's linalg, so the two agree to rounding
# (as two BLAS libraries do), not bit for bit, on the stand-in too.
LAPACK = re.compile(r"linalg|det|cholesky|qr|svd|solve|norm_nuc|eig|lu|inv|lstsq|matrix_exp")
# Rows of erf and exact GELU: a few host values take Python's math.erf one by one (a fast-path
# trick, ops/special.py), a device array erf's polynomials; they agree to rounding.
FEW_ON_HOST = re.compile(r"^(erf|gelu)(\b|_)")
# Rows of a vector norm of another order than 2: |x|^p summed, where the stand-in's array and
# NumPy's may differ in the last bit of the power or the order of the sum.
POWER_SUMS = re.compile(r"^norm_p")
# Rows of xlogy: a host float array takes SciPy's xlogy ufunc, a device array x * log(y)
# with the zeros masked; rows of trigamma (polygamma(1), and digamma's gradient): a few host
# float32 values take SciPy's zeta, a device array PyTorch's series (ops/special.py). They
# agree to rounding.
SCIPY_ON_HOST = re.compile(r"^((special_)?xlogy|digamma|polygamma1)")
# Rows of the 3-D average pools: a small host plane is pooled by one product with a matrix of
# each box's weights (a fast-path trick, ops/pool.py), which a weight on a device leaves to the
# adds of each offset; BLAS's sums and the adds agree to rounding.
PRODUCT_ON_HOST = re.compile(r"^avg_pool3d")


def close(a: np.ndarray, b: np.ndarray, exact: bool = EXACT) -> None:
    """Equal on the stand-in (where ``exact``); within the dtype's tolerance on a GPU."""
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        tol = 1e-10 if a.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_cuda_is_available_and_counted() -> None:
    assert cr.cuda.is_available() and cr.cuda.device_count() == 1
    assert cr.cuda.current_device() == 0 and cr.cuda.get_device_name(0)
    cr.cuda.synchronize()
    cr.cuda.empty_cache()
    assert cr.get_default_device() == CPU  # CUDA is used where asked for, as in PyTorch


@pytest.mark.parametrize("dev", ["cuda", "cuda:0", 0, cr.device("cuda"), cr.device("cuda", 0)])
def test_factories_make_tensors_on_the_device_asked_for(dev) -> None:
    made = [
        cr.tensor([1.0, 2.0], device=dev),
        cr.zeros(2, 3, device=dev),
        cr.ones(2, device=dev),
        cr.empty(2, device=dev),
        cr.full((2,), 1.5, device=dev),
        cr.arange(5, device=dev),
        cr.linspace(0, 1, 5, device=dev),
        cr.eye(3, device=dev),
        cr.rand(2, device=dev),
        cr.randn(2, device=dev),
        cr.randint(0, 5, (3,), device=dev),
        cr.randperm(4, device=dev),
        cr.zeros_like(cr.ones(2), device=dev),
        cr.ones(2).new_zeros(3, device=dev),
        cr.as_tensor([1, 2], device=dev),
    ]
    assert all(on_cuda(t) for t in made), [t.device for t in made]
    assert all(not t.is_cpu and t.get_device() == 0 for t in made)


def test_likes_and_new_tensors_keep_the_device() -> None:
    x = cr.ones(2, 3, device="cuda")
    for t in (
        cr.zeros_like(x),
        cr.rand_like(x),
        cr.full_like(x, 2.0),
        x.new_ones(4),
        x.new_tensor([1.0]),
        x.new_full((2,), 3.0),
        x.new_empty(1),
    ):
        assert on_cuda(t)
    assert cr.zeros_like(x, device="cpu").device == CPU


def test_a_gpu_that_is_not_there_is_named() -> None:
    with pytest.raises(
        ValueError,
        match=r"zeros: .*got device 'cuda:1' \(CUDA devices here: "
        r"cuda:0 to cuda:0\)",
    ):
        cr.zeros(2, device="cuda:1")
    with pytest.raises(
        ValueError, match="chainrule computes on the CPU and on CUDA GPUs; got device 'mps'"
    ):
        cr.zeros(2, device="mps")


def test_to_cuda_and_back_keeps_values_and_carries_gradients_back() -> None:
    x = cr.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.to("cuda")
    assert on_cuda(y) and y.tolist() == x.tolist() and y.grad_fn is not None
    assert x.cuda().device == CUDA and x.to(CUDA).device == CUDA and x.to(0).device == CUDA
    assert y.to("cuda") is y and y.cuda() is y and x.cpu() is x
    back = (y * y).to("cpu")
    assert back.device == CPU
    back.sum().backward()
    assert x.grad.device == CPU and x.grad.tolist() == [2.0, -4.0, 6.0]
    z = x.to("cuda", cr.float64)
    assert on_cuda(z) and z.dtype == cr.float64
    w = cr.tensor([1.0], device="cuda").to(cr.zeros(1, dtype=cr.float64))  # other's dtype, device
    assert w.device == CPU and w.dtype == cr.float64


def test_ops_on_two_devices_are_pytorchs_error() -> None:
    a, b = cr.ones(2, 3), cr.ones(2, 3, device="cuda")
    for op in (
        lambda: a + b,
        lambda: b * a,
        lambda: cr.cat([a, b]),
        lambda: b @ a.T,
        lambda: cr.where(a > 0, b, a),
    ):
        with pytest.raises(RuntimeError, match=f"{SAME_DEVICE}, cuda:0 and cpu"):
            op()
    with pytest.raises(RuntimeError, match=r"got \(2, 3\) on cpu, \(2, 3\) on cuda:0"):
        a + b
    # a 0-d CPU tensor meets CUDA ones as a number, as PyTorch allows
    c = b * cr.tensor(2.0)
    assert on_cuda(c) and c.sum().item() == 12.0
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        F.linear(b, cr.ones(4, 3))


def test_losses_want_the_target_on_the_inputs_device() -> None:
    logits = cr.randn(4, 3, device="cuda")
    with pytest.raises(
        RuntimeError,
        match="cross_entropy: expected all tensors to be on the same device; got input of shape",
    ):
        F.cross_entropy(logits, cr.tensor([0, 1, 2, 0]))
    loss = F.cross_entropy(logits, cr.tensor([0, 1, 2, 0], device="cuda"))
    expected = torch.nn.functional.cross_entropy(
        torch.tensor(logits.cpu().numpy()), torch.tensor([0, 1, 2, 0])
    )
    assert on_cuda(loss) and abs(loss.item() - expected.item()) < 1e-6
    assert on_cuda(F.cross_entropy(logits, [0, 1, 2, 0]))  # data is made on the device


def test_indexing_moves_cpu_indices_and_refuses_cuda_ones_on_the_cpu() -> None:
    x = cr.arange(10.0, device="cuda")
    assert x[cr.tensor([1, 3])].tolist() == [1.0, 3.0]
    assert x[np.array([2, 4])].tolist() == [2.0, 4.0] and x[[5, 6]].tolist() == [5.0, 6.0]
    assert on_cuda(x[x > 7]) and x[x > 7].tolist() == [8.0, 9.0]
    with pytest.raises(
        IndexError, match="indices should be on the CPU or on the indexed tensor's device"
    ):
        cr.arange(4.0)[cr.tensor([1], device="cuda")]
    x[cr.tensor([0])] = 5.0
    assert x[0].item() == 5.0
    assert x.index_select(0, cr.tensor([9, 0])).tolist() == [9.0, 5.0]


def test_numpy_of_a_cuda_tensor_is_refused_as_pytorch_does() -> None:
    x = cr.ones(2, device="cuda")
    with pytest.raises(
        TypeError,
        match=r"numpy: can't convert a cuda:0 device tensor \(shape "
        r"\(2,\)\) to a NumPy array; use Tensor.cpu\(\)",
    ):
        x.numpy()
    with pytest.raises(TypeError, match="can't convert a cuda:0 device tensor"):
        np.asarray(x)
    assert x.numpy(force=True).tolist() == [1.0, 1.0] and x.cpu().numpy().tolist() == [1.0, 1.0]
    assert x.tolist() == [1.0, 1.0] and float(x.sum()) == 2.0 and x[0].item() == 1.0
    assert repr(x) == "tensor([1., 1.], device='cuda:0')"
    assert repr(cr.zeros(2, device="cuda", requires_grad=True)) == (
        "tensor([0., 0.], device='cuda:0', requires_grad=True)"
    )


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.BatchNorm1d(8), nn.Linear(8, 3))


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
        lambda p: optim.Adam(p, lr=0.01),
        lambda p: optim.AdamW(p, lr=0.01),
    ],
)
def test_a_model_moved_to_cuda_trains_as_on_the_cpu(make_opt) -> None:
    cr.manual_seed(0)
    cpu_model = _mlp()
    cr.manual_seed(0)
    cuda_model = _mlp()
    params = list(cuda_model.parameters())
    assert cuda_model.to("cuda") is cuda_model
    assert list(cuda_model.parameters()) == params  # moved in place: the same Parameters
    assert all(on_cuda(t) for t in cuda_model.state_dict().values())
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 3, 16)
    runs = []
    for model, dev in ((cpu_model, "cpu"), (cuda_model, "cuda")):
        opt = make_opt(model.parameters())
        xb, yb = cr.tensor(x).to(dev), cr.tensor(y).to(dev)
        for _ in range(5):
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        state = opt.state_dict()["state"]
        assert all(
            t.device == cr.device(dev) if dev == "cpu" else on_cuda(t)
            for s in state.values()
            for t in s.values()
            if isinstance(t, cr.Tensor)
        )
        runs.append({k: v.cpu().numpy() for k, v in model.state_dict().items()})
    for k in runs[0]:
        close(runs[0][k], runs[1][k])
    assert cuda_model.cpu() is cuda_model and all(
        t.device == CPU for t in cuda_model.state_dict().values()
    )


def test_layers_take_device_as_pytorchs() -> None:
    layers = [
        nn.Linear(3, 4, device="cuda"),
        nn.Conv2d(1, 2, 3, device="cuda"),
        nn.Embedding(5, 2, device="cuda"),
        nn.LayerNorm(4, device="cuda"),
        nn.BatchNorm1d(4, device="cuda"),
        nn.LSTM(3, 4, device="cuda"),
        nn.MultiheadAttention(4, 2, device="cuda"),
        nn.TransformerEncoderLayer(8, 2, 16, device="cuda"),
        nn.PReLU(device="cuda"),
    ]
    for layer in layers:
        assert all(on_cuda(t) for t in layer.state_dict().values()), type(layer).__name__
    x = cr.randn(2, 5, 8, device="cuda")
    assert on_cuda(layers[7](x))
    mask = nn.Transformer.generate_square_subsequent_mask(3, device="cuda")
    assert on_cuda(mask)
    out, (h, c) = layers[5](cr.randn(6, 2, 3, device="cuda"))
    assert on_cuda(out) and on_cuda(h) and on_cuda(c)


def test_saving_moves_to_the_host_and_loading_honours_map_location(tmp_path) -> None:
    model = _mlp().cuda()
    path = tmp_path / "m.safetensors"
    cr.save(model.state_dict(), path)
    loaded = cr.load(path)  # back on the device it was saved from, as PyTorch's
    assert all(on_cuda(t) for t in loaded.values())
    on_cpu = cr.load(path, map_location="cpu")
    assert all(t.device == CPU for t in on_cpu.values())
    assert all(t.device == CPU for t in cr.load(path, map_location={"cuda:0": "cpu"}).values())
    seen = []
    cr.load(path, map_location=lambda t, loc: seen.append(loc) or t)
    assert set(seen) == {"cuda:0"}
    cpu_model = _mlp()
    cpu_model.load_state_dict(loaded)  # copied across devices into the CPU model
    for k, v in cpu_model.state_dict().items():
        assert v.device == CPU
        close(v.numpy(), on_cpu[k].numpy())
    host = tmp_path / "h.safetensors"
    cr.save({"w": cr.ones(2)}, host)
    assert on_cuda(cr.load(host, map_location="cuda")["w"])


def test_an_optimizer_state_follows_its_parameters_device() -> None:
    model = _mlp()
    opt = optim.Adam(model.parameters(), lr=0.01)
    F.cross_entropy(model(cr.randn(4, 4)), cr.tensor([0, 1, 2, 0])).backward()
    opt.step()
    saved = opt.state_dict()
    model.cuda()
    opt2 = optim.Adam(model.parameters(), lr=0.01)
    opt2.load_state_dict(saved)  # CPU state into CUDA parameters: moved, as PyTorch casts it
    assert all(
        on_cuda(t) for s in opt2.state.values() for t in s.values() if isinstance(t, cr.Tensor)
    )
    F.cross_entropy(
        model(cr.randn(4, 4, device="cuda")), cr.tensor([0, 1, 2, 0], device="cuda")
    ).backward()
    opt2.step()


def test_default_device_and_dataloader() -> None:
    cr.set_default_device("cuda")
    try:
        assert on_cuda(cr.zeros(2)) and on_cuda(cr.tensor([1.0]))
        assert on_cuda(nn.Linear(2, 2).weight)
        assert cr.from_numpy(np.ones(2)).device == CPU  # shares a NumPy array's memory
    finally:
        cr.set_default_device(None)
    assert cr.zeros(2).device == CPU
    data = cr.data.TensorDataset(cr.randn(10, 3), cr.arange(10))
    for xb, _ in cr.data.DataLoader(data, batch_size=4):
        assert xb.device == CPU and on_cuda(xb.to("cuda"))
    cuda_data = cr.data.TensorDataset(cr.randn(10, 3, device="cuda"), cr.arange(10, device="cuda"))
    xb, yb = next(iter(cr.data.DataLoader(cuda_data, batch_size=4, shuffle=True)))
    assert on_cuda(xb) and on_cuda(yb)


def test_gradients_and_second_order_on_cuda_equal_the_cpus() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4))
    for dev in ("cpu", "cuda"):
        x = cr.tensor(a, dtype=cr.float64, device=dev, requires_grad=True)
        (g,) = cr.autograd.grad((x.tanh() ** 2).sum(), x, create_graph=True)
        (gg,) = cr.autograd.grad(g.sum(), x)
        t = torch.tensor(a, requires_grad=True)
        (tg,) = torch.autograd.grad((t.tanh() ** 2).sum(), t, create_graph=True)
        (tgg,) = torch.autograd.grad(tg.sum(), t)
        np.testing.assert_allclose(g.cpu().detach().numpy(), tg.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(gg.cpu().numpy(), tgg.numpy(), rtol=1e-12)
        assert g.device == gg.device == cr.device(dev) if dev == "cpu" else on_cuda(gg)


def test_a_cuda_model_exports_to_onnx_from_a_host_copy(tmp_path) -> None:
    pytest.importorskip("onnxruntime")
    import onnxruntime as ort

    import chainrule.onnx

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).cuda()
    x = cr.randn(3, 4, device="cuda")
    chainrule.onnx.export(model, (x,), tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"))
    out = session.run(None, {session.get_inputs()[0].name: x.cpu().numpy()})[0]
    np.testing.assert_allclose(out, model(x).cpu().numpy(), rtol=1e-6, atol=1e-6)
    assert all(on_cuda(p) for p in model.parameters())  # the model itself stays where it was


# -- the op catalog on CUDA against the CPU --------------------------------------------------

from tests.ops.test_ops import NUM, ROWS, Row, _arrays  # noqa: E402 (the catalog, from its test file)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_op_catalog_on_cuda_equals_the_cpu(row: Row, dtype) -> None:
    """Each row of the op catalog (test_ops.py) on CUDA tensors and on CPU ones: the outputs
    and, for a random upstream gradient, every input's gradient."""
    if row.host_only:
        pytest.skip(f"{row.name}: {row.host_only}")
    results = []
    for dev in ("cpu", "cuda"):
        cr.set_default_device(dev)  # for the constants some rows make (m.tensor(...))
        try:
            results.append(_catalog_row(row, dtype, dev))
        finally:
            cr.set_default_device(None)
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results, strict=True):
        inexact = LAPACK.search(row.name) or FEW_ON_HOST.search(row.name)
        inexact = inexact or SCIPY_ON_HOST.search(row.name) or PRODUCT_ON_HOST.search(row.name)
        close(a, b, EXACT and not inexact and not POWER_SUMS.search(row.name))


def _catalog_row(row: Row, dtype, dev: str) -> list[np.ndarray]:
    """A row's outputs and gradients on dev, on the host."""
    xs = [
        a if a is NUM else cr.tensor(np.asarray(a, dtype=dtype), device=dev, requires_grad=row.grad)
        for a in _arrays(row)
    ]
    outs = row.fn(cr, *xs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    assert all(o.device == cr.device(dev) if dev == "cpu" else on_cuda(o) for o in outs)
    got = [o.cpu().detach().numpy() for o in outs]
    floats = [o for o in outs if o.requires_grad]
    if row.grad and floats:
        rng = np.random.default_rng(1)
        ups = [cr.tensor(rng.standard_normal(o.shape).astype(o.dtype), device=dev) for o in floats]
        tensors = [x for x in xs if isinstance(x, cr.Tensor)]
        grads = cr.autograd.grad(floats, tensors, ups, allow_unused=True)
        got += [g.cpu().numpy() for g in grads if g is not None]
    return got


def test_a_monitor_watches_a_cuda_model_as_a_cpu_one() -> None:
    """The Monitor's statistics are taken on the host: the same series for the same model
    trained on either device."""
    series = []
    for dev in ("cpu", "cuda"):
        cr.manual_seed(0)
        model = _mlp().to(dev)
        opt = optim.SGD(model.parameters(), lr=0.1)
        monitor = cr.viz.Monitor(model, opt)
        x, y = cr.randn(8, 4).to(dev), cr.tensor([0, 1, 2, 0, 1, 2, 0, 1]).to(dev)
        for _ in range(3):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        series.append(monitor.to_dict())
        monitor.remove()
    assert series[0].keys() == series[1].keys() and series[0]["layers"]
    if EXACT:
        assert series[0] == series[1]


def test_data_assignment_moves_and_data_ptr_follows_views() -> None:
    p = nn.Parameter(cr.ones(3))
    p.data = p.data.cuda()  # the old idiom for moving a parameter, as PyTorch allows it
    assert on_cuda(p) and p.requires_grad
    x = cr.arange(6.0, device="cuda")
    assert x[2:].data_ptr() == x.data_ptr() + 2 * x.element_size()


def test_tensor_of_a_tensor_copies_it_on_its_device() -> None:
    x = cr.ones(2, device="cuda")
    for t in (cr.tensor(x), cr.as_tensor(x), x.clone(), x.detach(), x.new_tensor([1.0])):
        assert on_cuda(t)
    assert cr.tensor(x, device="cpu").device == CPU
    assert cr.tensor(x) is not x and cr.as_tensor(x) is x
