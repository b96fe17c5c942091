"""`chainrule export RUN_DIR` of the language recipes (names, gpt, adder), each trained one
step: the ONNX file passes onnx.checker, maps token ids (batch, time) to the logits
chainrule computes on fresh batches of two sizes and two lengths, and
examples/onnx_generate.py (ONNX Runtime alone) prints, greedily, what `chainrule sample
--greedy` prints."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import chainrule as cr  # noqa: E402
from chainrule.tools import cli  # noqa: E402
from chainrule.tools.recipes import gpt, language, names  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "onnx_generate.py"
TEXT = "def add(a, b):\n    return a + b\n\n" * 40  # 1320 characters of a small language
RUNS = ["names", "names-gru", "gpt", "adder"]
TOL = dict(rtol=1e-5, atol=1e-5)  # float32, a whole model against ONNX Runtime's kernels


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One run of each language recipe (names twice: a transformer and a GRU), one step
    each, exported: gpt to --out FILE, the others to RUN_DIR/model.onnx."""
    tmp = tmp_path_factory.mktemp("runs")
    (tmp / "text.txt").write_text(TEXT, encoding="utf-8")
    argv = {
        "names": ["names"],
        "names-gru": ["names", "--model", "gru"],
        "gpt": ["gpt", "--batch-size", "2", "--data-file", str(tmp / "text.txt")],
        "adder": ["adder", "--batch-size", "8"],
    }
    for run, args in argv.items():
        out = ["--out", str(tmp / run), "--quiet"]
        assert cli.main(["train", *args, "--steps", "1", *out]) == 0
        where = ["--out", str(tmp / "gpt.onnx")] if run == "gpt" else []
        assert cli.main(["export", str(tmp / run), *where]) == 0
    return tmp


def model_path(runs: Path, run: str) -> Path:
    return runs / "gpt.onnx" if run == "gpt" else runs / run / "model.onnx"


def rebuilt(runs: Path, run: str) -> tuple[cr.nn.Module, dict]:
    """chainrule's model of the run, as `chainrule sample` rebuilds it, and its metrics."""
    metrics = json.loads((runs / run / "metrics.json").read_text(encoding="utf-8"))
    if metrics["model"]["kind"] == "gpt":
        config = {k: v for k, v in metrics["model"].items() if k != "kind"}
        model = gpt.GPT(gpt.GPTConfig(**config))
    else:
        model = names.build(**metrics["model"])
    return language.load_weights(model, str(runs / run)), metrics


@pytest.mark.parametrize("run", RUNS)
def test_the_file_is_valid_onnx_of_token_ids(runs, run):
    proto = onnx.load(str(model_path(runs, run)))
    onnx.checker.check_model(proto, full_check=True)
    (tokens,), (logits,) = proto.graph.input, proto.graph.output
    assert tokens.name == "tokens" and logits.name == "logits"
    assert tokens.type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert logits.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    dims = [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in (tokens, logits)]  # fmt: skip
    vocab_size = rebuilt(runs, run)[1]["model"]["vocab_size"]
    assert dims == [["batch", "time"], ["batch", "time", vocab_size]]


@pytest.mark.parametrize("run", RUNS)
def test_onnx_runtime_gives_chainrules_logits(runs, run):
    model, metrics = rebuilt(runs, run)
    vocab_size = metrics["model"]["vocab_size"]
    session = ort.InferenceSession(str(model_path(runs, run)), providers=["CPUExecutionProvider"])
    block = 6 if run == "adder" else 16
    rng = np.random.default_rng(7)
    for batch, length in [(1, block), (5, 3)]:  # neither is the export's (2, 2) or (2, 5)
        tokens = rng.integers(0, vocab_size, (batch, length)).astype(np.int64)
        (got,) = session.run(["logits"], {"tokens": tokens})
        with cr.no_grad():
            want = model(cr.tensor(tokens)).numpy()
        assert got.dtype == want.dtype == np.float32
        assert got.shape == want.shape == (batch, length, vocab_size)
        np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("run", RUNS)
def test_the_vocabulary_beside_the_model(runs, run):
    vocab = json.loads(model_path(runs, run).with_suffix(".vocab.json").read_text("utf-8"))
    metrics = rebuilt(runs, run)[1]
    chars = metrics["vocab"]["chars"] if "vocab" in metrics else "0123456789"
    assert vocab["chars"] == chars and len(chars) == metrics["model"]["vocab_size"]
    assert vocab["recipe"] == metrics["recipe"] and (vocab["input"], vocab["output"]) == (
        "tokens", "logits")  # fmt: skip
    expected = {"names": (".", 16, ""), "gpt": (None, 64, "\n"), "adder": (None, 6, None)}
    assert (vocab["end"], vocab["block_size"], vocab["prompt"]) == expected[metrics["recipe"]]


def example(runs: Path, run: str, *args: str) -> str:
    job = [sys.executable, str(EXAMPLE), str(model_path(runs, run)), *args]
    done = subprocess.run(job, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def sample(capsys, runs: Path, run: str, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["sample", str(runs / run), *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "run, args",
    [
        ("names", []),  # `chainrule sample`'s defaults: 10 names of at most 16 characters
        ("names", ["--prompt", "ka", "--num", "3", "--max-new-tokens", "20"]),
        ("names-gru", ["--num", "2"]),
        ("gpt", ["--max-new-tokens", "24"]),
        ("gpt", ["--prompt", "def ", "--num", "2", "--max-new-tokens", "62"]),  # past the block
    ],
)
def test_the_example_greedy_is_chainrule_sample_greedy(runs, capsys, run, args):
    ours = sample(capsys, runs, run, "--greedy", *args)
    assert example(runs, run, "--greedy", *args) == ours
    num = int(args[args.index("--num") + 1]) if "--num" in args else 10 if "names" in run else 1
    texts = ours[:-1].split("\n" if "names" in run else "\n-----\n")
    assert len(texts) == num


def test_chainrule_sample_greedy_takes_the_largest_logit(runs, capsys):
    model, metrics = rebuilt(runs, "gpt")
    idx = cr.tensor([[metrics["vocab"]["chars"].index("d")]], dtype=cr.int64)  # (1, 1)
    out = language.generate(model, idx, 12, 64, greedy=True)[0].tolist()  # argmax each step
    text = "".join(metrics["vocab"]["chars"][i] for i in out)
    assert sample(capsys, runs, "gpt", "--greedy", "--prompt", "d", "--max-new-tokens", "12",
                  "--temperature", "3", "--seed", "5") == text + "\n"  # fmt: skip


def test_the_example_greedy_adds_as_the_adder_does(runs):
    model, _ = rebuilt(runs, "adder")
    digits = cr.tensor([[8, 5, 4, 7]], dtype=cr.int64)
    out = language.generate(model, digits, 3, 6, greedy=True)[0].tolist()  # as adder.accuracy
    assert example(runs, "adder", "--greedy", "--prompt", "8547") == "".join(map(str, out)) + "\n"


def test_the_example_samples_with_numpys_seed(runs):
    a = example(runs, "names", "--seed", "1", "--temperature", "0.9", "--top-k", "20")
    assert a == example(runs, "names", "--seed", "1", "--temperature", "0.9", "--top-k", "20")
    assert a != example(runs, "names", "--seed", "2", "--temperature", "0.9", "--top-k", "20")
    lines = a.splitlines()
    assert len(lines) == 10 and all(set(w) <= set("abcdefghijklmnopqrstuvwxyz") for w in lines)
    assert example(runs, "gpt", "--top-k", "1", "--max-new-tokens", "9", "--seed", "3") == (
        example(runs, "gpt", "--greedy", "--max-new-tokens", "9"))  # fmt: skip


def test_the_example_imports_numpy_and_onnxruntime_only():
    tree = ast.parse(EXAMPLE.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}  # fmt: skip
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
    assert imported == {"__future__", "argparse", "json", "os", "numpy", "onnxruntime"}
