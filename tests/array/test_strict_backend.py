"""The array layer (chainrule.array): only it imports NumPy, and the CUDA stand-in
(CHAINRULE_ARRAY_BACKEND=strict: NumPy with CuPy's refusals, as the CUDA device) runs the op
catalog, the layers, the optimizers and a recipe with NumPy's answers, so nothing in the
engine reaches host memory unawares, and CPU and CUDA tensors live side by side as PyTorch's
do (devices_cases.py).

The runs under the strict module are subprocesses (the array module is chosen at import):
the test files of STRICT_FILES (the op catalog, the layers, the optimizers and more) with
every tensor made on the stand-in's CUDA device (the on_cuda plugin), the device
cases, and the moons recipe through the recipes' code on CUDA (strict_recipe.py). Any test
file runs on the strict module by hand the same way:

    CHAINRULE_ARRAY_BACKEND=strict python -m pytest -q -p tests.on_cuda \
        tests/ops/test_ops.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chainrule import array
from chainrule.array import cuda_standin

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "chainrule"
xp = cuda_standin.module


def _path(test: str) -> str:
    """A test file named by its file name (with ``::test`` after it, or not), as its path
    from the root."""
    name, sep, rest = test.partition("::")
    (path,) = (ROOT / "tests").rglob(name)
    return f"{path.relative_to(ROOT)}{sep}{rest}"


def _run(args: list[str], module: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CHAINRULE_ARRAY_BACKEND"}
    if module is not None:
        env["CHAINRULE_ARRAY_BACKEND"] = module
    env["PYTHONPATH"] = str(ROOT)  # the tests package: tests.on_cuda, tests.helpers
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_only_the_array_layer_imports_numpy() -> None:
    """The engine, ops, Tensor, nn and optim compute with array.xp; host-side modules
    (data preparation, datasets, IO, plotting, recipes, monitor) may import NumPy."""
    files = [PACKAGE / name for name in ("factories.py", "functions.py")]
    for part in ("autograd", "fastpath", "forms", "ops", "tensor", "nn", "optim"):
        files += sorted((PACKAGE / part).glob("*.py"))
    assert len(files) > 30
    pattern = re.compile(r"^\s*(import numpy|from numpy)", re.MULTILINE)
    importers = [str(f.relative_to(ROOT)) for f in files if pattern.search(f.read_text())]
    assert importers == []


# -- the strict array module itself -------------------------------------------------------


def test_no_implicit_conversion_to_numpy() -> None:
    a = xp.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match=r"implicit conversion.*\.get\(\) or asnumpy"):
        np.asarray(a)
    with pytest.raises(TypeError, match="implicit conversion"):
        np.array([a[0], a[1]])
    host = a.get()
    assert type(host) is np.ndarray and type(xp.asnumpy(a)) is np.ndarray
    np.testing.assert_array_equal(host, np.arange(6.0).reshape(2, 3))
    host[0, 0] = 9  # a copy: the device array is unchanged
    assert float(a[0, 0]) == 0.0


def test_numpy_arrays_are_refused_as_operands() -> None:
    a, h = xp.ones(3), np.ones(3)
    refused = r"numpy.ndarray of shape \(\d*,?\) given where a device array is expected"
    for f in (
        lambda: a + h,
        lambda: h + a,
        lambda: a * h,
        lambda: xp.add(a, h),
        lambda: np.add(a, h),
        lambda: xp.exp(h),
        lambda: xp.concatenate([a, h]),
        lambda: np.concatenate([a, h]),
        lambda: xp.where(h > 0, a, 0.0),
        lambda: a[np.array([0, 1])],
        lambda: a.__setitem__(slice(None), h),
    ):
        with pytest.raises(TypeError, match=refused):
            f()
    moved = xp.asarray(h)  # the explicit way in: a copy
    assert type(moved) is xp.ndarray and (moved + a).tolist() == [2.0, 2.0, 2.0]


def test_results_are_device_arrays_with_a_device_of_their_own() -> None:
    a = xp.arange(4.0)
    for r in (a.sum(), xp.sum(a), a[1], np.exp(a), np.concatenate([a, a]), xp.zeros((2,))):
        assert type(r) is xp.ndarray and r.device is cuda_standin.DEVICE
    assert a.sum().shape == ()  # CuPy's 0-d array where NumPy gives a scalar
    assert float(a.sum()) == 6.0 and int(a[2]) == 2 and bool(a[1])
    assert xp.ndarray is not np.ndarray and not isinstance(a, np.ndarray)


def test_identity_is_kept_for_views_and_outputs() -> None:
    """The engine compares arrays by identity (views' base, out= arguments)."""
    a = xp.zeros((3, 4))
    v = a[1:]
    assert v.base is a and a.T.base is a
    out = xp.empty((3, 4))
    assert xp.multiply(a, 2.0, out=out) is out
    b = a
    b += 1
    assert b is a and float(a.sum()) == 12.0
    assert xp.may_share_memory(v, a) and not xp.may_share_memory(a, out)


def test_ufunc_methods_errstate_and_stride_tricks() -> None:
    a = xp.zeros(5)
    xp.add.at(a, xp.asarray([0, 0, 3]), 1.0)
    assert a.tolist() == [2.0, 0.0, 0.0, 1.0, 0.0]
    r = xp.add.reduceat(xp.arange(6.0), xp.asarray([0, 2, 4]))
    assert type(r) is xp.ndarray and r.tolist() == [1.0, 5.0, 9.0]
    assert xp.maximum.reduce(xp.arange(4.0)).tolist() == 3.0
    assert xp.add.accumulate(xp.arange(4.0)).tolist() == [0.0, 1.0, 3.0, 6.0]
    with array.errstate(divide="ignore"):
        assert xp.log(xp.zeros(1)).tolist() == [-np.inf]
    with pytest.raises(AttributeError, match="no errstate .CuPy has none.; use chainrule.array"):
        xp.errstate  # noqa: B018
    w = xp.lib.stride_tricks.sliding_window_view(xp.arange(5.0), 3)
    assert type(w) is xp.ndarray and w.shape == (3, 3) and w.base is not None
    s = xp.lib.stride_tricks.as_strided(xp.arange(4.0), shape=(2, 2), strides=(8, 8))
    assert s.tolist() == [[0.0, 1.0], [1.0, 2.0]]
    grid = xp.ogrid[:2, :3]
    assert all(type(g) is xp.ndarray for g in grid)


def test_flags_are_cupys_and_writeable_is_the_backends_question() -> None:
    a = xp.zeros((2, 3))
    assert a.flags.c_contiguous and not a.T.flags.c_contiguous and a.flags["OWNDATA"]
    with pytest.raises(AttributeError, match="flags has no writeable .*array.writeable"):
        a.flags.writeable  # noqa: B018
    broadcast = xp.broadcast_to(xp.zeros(3), (2, 3))
    assert cuda_standin.writeable(a) and not cuda_standin.writeable(broadcast)
    cuda_standin.make_read_only(a)
    assert not cuda_standin.writeable(a)
    h = np.zeros(3)
    assert array.writeable(h) and not array.writeable(np.broadcast_to(h, (2, 3)))


def test_pickling_and_copies_stay_on_the_device() -> None:
    import copy
    import pickle

    a = xp.arange(3.0)
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a), copy.copy(a)):
        assert type(b) is xp.ndarray and b is not a and b.tolist() == [0.0, 1.0, 2.0]


# -- chainrule on the strict module --------------------------------------------------------


# Test files run with every tensor on the stand-in's CUDA device: the op catalog, the layers
# and the optimizers, and with them the engine, Tensor, modules, convolution, attention,
# recurrent layers, transformers, losses, schedulers, in-place writes, random draws, hooks,
# dtype rules, errors, misuse, gradcheck, random programs, saving and MPI. Left out: files
# whose tests rely on numpy() sharing the tensor's memory (a CPU tensor's promise, as
# PyTorch's: test_nn_init, test_nn_utils, test_data) or hand NumPy arrays to the engine's
# own array functions (test_fast_paths), and the tests below, for the reason given with
# each (a name deselects every parametrisation of that test).
# They run in three groups of about equal time, one process each, so that pytest-xdist's
# workers share them.
STRICT_FILES = {
    "ops": "test_ops.py test_dtype_rules.py test_hypothesis_shapes.py test_errors.py "
    "test_attention.py",
    "layers": "test_rnn.py test_transformer.py test_conv.py",
    "engine": "test_autograd.py test_tensor.py test_nn_layers.py test_nn_module.py "
    "test_optim.py test_nn_losses.py test_lr_scheduler.py test_inplace.py test_random.py "
    "test_tensor_hooks.py test_misuse.py test_testing.py test_constructor_errors.py "
    "test_serialization.py test_checkpoint_safety.py test_distributed.py",
}
SHARES_MEMORY = "numpy() is the tensor's own array (or writes through it)"
NUMPY_OPERANDS = "a NumPy array meets a tensor (an error, naming cr.tensor(x), here)"
REFUSES_CUDA = "CUDA is asked for and refused, as without a GPU; the stand-in is one"
NAMES_DEVICE = "a CUDA tensor's repr names its device, as PyTorch's"
STRICT_DESELECTED = {
    "test_ops.py::test_class_rows_take_the_column_major_path": "NumPy arrays given to an "
    "internal array function (a test of NumPy's layout)",
    "test_serialization.py::test_save_and_load_stream_the_tensors_holding_at_most_one_copy": (
        "a device array is copied to the host to be written: one copy more than NumPy's"
    ),
    "test_autograd.py::test_detach_shares_data_and_cuts_the_graph": SHARES_MEMORY,
    "test_tensor.py::test_conversion": SHARES_MEMORY,
    "test_nn_module.py::test_state_dict_values_are_detached_and_share_arrays": SHARES_MEMORY,
    "test_nn_module.py::test_load_state_dict_copies_in_place_and_casts": SHARES_MEMORY,
    "test_tensor.py::test_integer_meets_float_takes_the_floats_dtype": NUMPY_OPERANDS,
    "test_tensor.py::test_numpy_array_operands": NUMPY_OPERANDS,
    "test_errors.py::test_broadcast_mismatch_with_the_tensor_on_the_right_and_an_array": (
        NUMPY_OPERANDS
    ),
    "test_testing.py::test_gradcheck_names_the_input_and_the_worst_entry": NUMPY_OPERANDS,
    "test_testing.py::test_gradcheck_reports_the_values_it_compared": NUMPY_OPERANDS,
    "test_nn_layers.py::test_layer_norm_without_bias_has_torch_state_and_takes_device": (
        REFUSES_CUDA
    ),
    "test_tensor.py::test_to_dtype_and_device": REFUSES_CUDA,
    "test_rnn.py::test_constructor_values_are_checked": REFUSES_CUDA,
    "test_transformer.py::test_errors": REFUSES_CUDA,
    "test_random.py::test_a_generator_on_another_device_or_of_another_kind_is_refused": (
        REFUSES_CUDA
    ),
    "test_tensor.py::test_repr_like_torch": NAMES_DEVICE,
    "test_tensor.py::test_repr_of_a_large_tensor_is_summarised_like_torch": NAMES_DEVICE,
    "test_nn_module.py::test_parameter_is_a_trainable_tensor": SHARES_MEMORY + "; " + NAMES_DEVICE,
}


@pytest.mark.parametrize(
    "group",
    [pytest.param(g, marks=pytest.mark.slow) if g == "ops" else g for g in STRICT_FILES],
)  # the op catalog on the stand-in is the heaviest: `make test-all` runs it
def test_op_catalog_layers_and_optimizers_run_on_the_strict_module(group: str) -> None:
    """STRICT_FILES with every tensor on the stand-in's CUDA device, against PyTorch as
    always (so with NumPy's answers); about 40 s on one core, all groups together."""
    in_group = STRICT_FILES[group].split()
    files = [_path(name) for name in in_group]
    names = [test for test in STRICT_DESELECTED if test.partition("::")[0] in in_group]
    deselect = [arg for test in names for arg in ("--deselect", _path(test))]
    args = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist"]
    result = _run([*args, "-p", "tests.on_cuda", *files, *deselect], "strict")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.search(r"\b\d{3,} passed", result.stdout), result.stdout[-500:]
    found = re.search(r"(\d+) deselected", result.stdout)
    assert not names or (found and int(found.group(1)) >= len(names))  # each name still a test


def test_each_strict_file_is_in_one_group_and_each_deselected_test_in_a_strict_file() -> None:
    files = [name for group in STRICT_FILES.values() for name in group.split()]
    assert len(files) == len(set(files)) == 24
    assert {test.partition("::")[0] for test in STRICT_DESELECTED} <= set(files)


def test_devices_work_side_by_side_as_pytorchs() -> None:
    """devices_cases.py: CPU and CUDA tensors (the stand-in's) in one process, moved,
    mixed (refused), trained, saved and loaded as PyTorch's."""
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    result = _run([*args, "tests/array/devices_cases.py"], "strict")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.search(r"\b\d{2,} passed", result.stdout), result.stdout[-500:]


FACTORIES = """
import numpy as np
import chainrule as cr
cr.set_default_device("cuda")
h = np.arange(6.0).reshape(2, 3)
made = [f(h) for f in (cr.as_tensor, cr.tensor, cr.Tensor, cr.FloatTensor)]
made += [cr.zeros(2, 3), cr.ones(2), cr.arange(5), cr.linspace(0, 1, 5), cr.eye(3),
         cr.full((2,), 3.0), cr.empty(2), cr.zeros_like(cr.ones(2)), cr.rand(2), cr.randn(2),
         cr.randint(0, 5, (3,)), cr.randperm(4), cr.normal(0.0, 1.0, (2,)),
         cr.ones(2, 3).multinomial(2, replacement=True), cr.ones(3).multinomial(2),
         cr.rand(3).bernoulli(), cr.ones(3).normal_(), cr.ones(3).uniform_()]
assert {type(t._array).__module__ for t in made} == {"chainrule.array.cuda_standin"}, made
assert {str(t.device) for t in made} == {"cuda:0"}
# from_numpy shares the array's memory, and the rng state is the host's: CPU tensors
assert cr.from_numpy(h).device == cr.get_rng_state().device == cr.device("cpu")
t = cr.tensor([1.5, 2.5])
assert type(t.cpu().numpy()) is np.ndarray and t.tolist() == [1.5, 2.5] and t[1].item() == 2.5
assert float(t.sum()) == 4.0 and repr(t) == "tensor([1.5000, 2.5000], device='cuda:0')"
for host in (lambda: t.numpy(), lambda: np.asarray(t)):  # PyTorch's refusal, and its way out
    try:
        host()
    except TypeError as e:
        assert "can't convert a cuda:0 device tensor" in str(e) and "Tensor.cpu()" in str(e), e
    else:
        raise AssertionError("a CUDA tensor went to NumPy implicitly")
assert t.numpy(force=True).tolist() == [1.5, 2.5]
t[np.array([0])] = np.array([4.0])  # a NumPy index and value are moved, as by PyTorch
assert t[np.array([1, 0])].tolist() == [2.5, 4.0]
try:
    t + np.ones(2)
except TypeError as e:
    assert str(e) == ("add: a NumPy array meets a tensor on cuda:0; got shape (2,); make it a "
                      "tensor on cuda:0 first (cr.tensor(x, device=...) moves it)"), e
else:
    raise AssertionError("a NumPy operand was taken")
"""


def test_factories_make_strict_arrays_and_the_host_is_reached_explicitly() -> None:
    result = _run(["-c", FACTORIES], "strict")
    assert result.returncode == 0, result.stderr[-3000:]


def test_a_recipe_trains_on_the_strict_module_as_on_numpy(tmp_path) -> None:
    """The moons recipe, three epochs through the command line's training loop with
    --device cuda on the stand-in and --device cpu: the same losses, accuracies and
    weights, bit for bit; the model file is written from the host either way."""
    runs = {}
    for module, device in (("numpy", "cpu"), ("strict", "cuda")):
        out = tmp_path / module
        result = _run(["tests/array/strict_recipe.py", "moons", "3", device, str(out)], module)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[module] = json.loads(result.stdout)
    # trained on the device, and moved back to the host for the model file
    assert runs["strict"]["moved_to"] == ["chainrule.array.cuda_standin", "numpy"]
    assert runs["numpy"]["moved_to"] == []  # nothing to move on the CPU
    assert runs["strict"]["devices"] == runs["numpy"]["devices"] == ["cpu"]
    assert runs["strict"]["history"] == runs["numpy"]["history"]
    assert runs["strict"]["weights"] == runs["numpy"]["weights"]
    assert runs["numpy"]["history"][-1]["test_accuracy"] > 0.85  # it learned


def test_an_unknown_array_backend_is_refused() -> None:
    result = _run(["-c", "import chainrule"], "cupyy")
    assert result.returncode != 0
    assert (
        "CHAINRULE_ARRAY_BACKEND must be one of auto, cupy, numpy, strict; got 'cupyy'"
        in result.stderr
    )


def test_cupy_asked_for_where_it_cannot_be_had_says_why() -> None:
    """Without CuPy (or a GPU), the cupy backend is an ImportError naming the extra; auto
    (the default) falls back to the CPU, where CUDA is unavailable."""
    result = _run(["-c", "import chainrule"], "cupy")
    assert result.returncode != 0
    assert "CHAINRULE_ARRAY_BACKEND=cupy, but CuPy" in result.stderr, result.stderr[-1000:]
    probe = "import chainrule as cr; print(cr.cuda.is_available(), cr.cuda.device_count())"
    result = _run(["-c", probe], "auto")
    assert result.returncode == 0 and result.stdout.split() == ["False", "0"], result.stderr


@pytest.mark.parametrize("recipe", ["names", "gpt"])
def test_a_language_recipe_trains_on_cuda_as_on_the_cpu(tmp_path, recipe) -> None:
    """A language recipe's own loop with --device cuda (its tensors made on the stand-in's
    device): the same history and the same model file, byte for byte, as on the CPU; then
    `chainrule sample` reads the model on the host."""
    runs = {}
    for module, device in (("numpy", "cpu"), ("strict", "cuda")):
        out = tmp_path / module
        args = ["-m", "chainrule", "train", recipe, "--steps", "3", "--device", device,
                "--out", str(out), "--quiet"]  # fmt: skip
        result = _run(args, module)
        assert result.returncode == 0, result.stderr[-3000:]
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["settings"]["device"] == ("cpu" if device == "cpu" else "cuda:0")
        runs[module] = (metrics["history"], (out / "model.safetensors").read_bytes())
    assert runs["strict"] == runs["numpy"]
    sample = ["-m", "chainrule", "sample", str(tmp_path / "strict"), "--num", "2"]
    result = _run([*sample, "--max-new-tokens", "8"], "strict")  # a few: each is a forward pass
    assert result.returncode == 0 and result.stdout.strip(), result.stderr[-2000:]


GPU_STEPS = """
import sys
sys.path.insert(0, "benchmarks")
import torch
import chainrule as cr
import cuda_steps
for name, make in cuda_steps.WORKLOADS.items():
    ours, theirs = make(cr, "cuda", 4), make(torch, "cpu", 4)
    for _ in range(2):  # the same step: the same losses, step after step
        a, b = ours(), theirs()
        assert abs(a - b) <= 1e-5 * max(1.0, abs(b)), (name, a, b)
"""


def test_the_gpu_step_benchmark_runs_on_the_stand_in() -> None:
    """benchmarks/cuda_steps.py (the GPU figures' script) on the stand-in's CUDA device: its
    quick mode runs, and each workload computes what PyTorch's does; gpu_check.sh parses."""
    result = _run(["benchmarks/cuda_steps.py", "--quick", "--device", "cuda"], "strict")
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("mlp", "cnn", "gpt"):
        assert f"{name} training step, chainrule on cuda" in result.stdout
    result = _run(["-c", GPU_STEPS], "strict")
    assert result.returncode == 0, result.stderr[-3000:]
    check = subprocess.run(["bash", "-n", str(ROOT / "benchmarks" / "gpu_check.sh")])
    assert check.returncode == 0


@pytest.mark.slow  # heavy; `make test-all` runs it
def test_a_pytorch_program_takes_its_cuda_branch_on_the_stand_in() -> None:
    """tests/pytorch_programs/programs/gpt.py picks ``"cuda" if torch.cuda.is_available()
    else "cpu"``: on the stand-in, chainrule's run takes CUDA (model.to(device), batches,
    torch.load with map_location=device, sampling) while torch's takes the CPU, and their
    losses agree."""
    test = _path("test_pytorch_programs.py::test_gpt_trains_checkpoints_and_samples")
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", test]
    result = _run(args, "strict")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
