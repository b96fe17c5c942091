"""The language-model recipes (names, gpt, adder), `chainrule sample`, the names list and the
character vocabulary. Short runs check the machinery; the goals at full length are marked
slow (pytest -m slow)."""

from __future__ import annotations

import json
import os
import shutil
import string

import numpy as np
import pytest

import chainrule as cr
from chainrule.datasets import CharVocab, names
from chainrule.tools import cli

# -- the names list and the vocabulary -------------------------------------------------------


def test_names_is_the_shipped_list():
    words = names()
    assert len(words) == 32033 and len(set(words)) == 29494
    assert words[:3] == ["emma", "olivia", "ava"] and words[-1] == "zzyzx"
    assert set("".join(words)) == set(string.ascii_lowercase)
    assert max(map(len, words)) == 15 and min(map(len, words)) == 2
    words.append("x")  # each call reads the file afresh: a caller's edit stays its own
    assert len(names()) == 32033


def test_char_vocab_has_makemores_layout():
    vocab = CharVocab(names())
    assert len(vocab) == 27 and vocab.end == "."
    assert vocab.stoi["."] == 0 and vocab.stoi["a"] == 1 and vocab.stoi["z"] == 26
    assert vocab.itos == {i: s for s, i in vocab.stoi.items()}
    assert vocab.encode("emma") == [5, 13, 13, 1]
    assert vocab.decode([0, 5, 13, 13, 1, 0]) == ".emma."
    assert vocab.decode(cr.tensor([1, 2, 3])) == "abc"
    assert repr(vocab) == "CharVocab(27 characters: '.abcdefghijklmnopqrstuvwxyz')"


def test_char_vocab_without_an_end_token():
    vocab = CharVocab("b.a\n", end=None)
    assert vocab.itos == {0: "\n", 1: ".", 2: "a", 3: "b"}
    text = "a.b\nab"
    assert vocab.decode(vocab.encode(text)) == text


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda v: v.encode("ana#é"), ValueError,
         r"^CharVocab.encode: characters not in the vocabulary: '#é'; got 'ana#é' \(the "
         r"vocabulary: '.abno'\)$"),
        (lambda v: v.encode(3), TypeError, r"^CharVocab.encode: expected a str; got int$"),
        (lambda v: v.decode([1, 5, -1]), ValueError,
         r"^CharVocab.decode: indices outside the vocabulary of 5 characters; got \[5, -1\]$"),
        (lambda v: v.decode([1.0]), TypeError,
         r"^CharVocab.decode: expected integer indices; got \[1.0\]$"),
        (lambda v: CharVocab(["a.b"]), ValueError,
         r"^CharVocab: the end token '.' occurs in the texts; got texts holding '.'"),
        (lambda v: CharVocab(["ab"], end="<>"), ValueError,
         r"^CharVocab: end must be one character or None; got '<>'$"),
        (lambda v: CharVocab(["ab", 3]), TypeError,
         r"^CharVocab: texts must be strings; got int$"),
    ],
)  # fmt: skip
def test_char_vocab_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(CharVocab(["anna", "bob"]))


# -- short runs through the command line -----------------------------------------------------

TEXT = "def add(a, b):\n    return a + b\n\n" * 40  # 1320 characters of a small language


def train(out, *args: str) -> dict:
    assert cli.main(["train", *args, "--out", str(out), "--quiet"]) == 0
    with open(out / "metrics.json", encoding="utf-8") as f:
        return json.load(f)


def sample(capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["sample", *map(str, args)]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A names (transformer), a gpt (on TEXT) and an adder run of two steps each."""
    tmp = tmp_path_factory.mktemp("runs")
    (tmp / "text.txt").write_text(TEXT, encoding="utf-8")
    train(tmp / "names", "names", "--steps", "2")
    train(tmp / "gpt", "gpt", "--steps", "2", "--batch-size", "4",
          "--data-file", str(tmp / "text.txt"))  # fmt: skip
    train(tmp / "adder", "adder", "--steps", "2")
    return tmp


def check_run(out, metrics: dict, recipe: str, keys: set[str]) -> None:
    assert {"metrics.json", "curves.png", "model.safetensors"} <= set(os.listdir(out))
    assert not [f for f in os.listdir(out) if f.startswith(".")]  # no temporary file left
    assert metrics["recipe"] == recipe and metrics["seed"] == 0
    assert keys <= set(metrics["final"])
    assert metrics["history"][-1]["step"] == metrics["steps"]
    assert all(0 < row["lr"] for row in metrics["history"])


@pytest.mark.parametrize("model", ["bigram", "mlp", "rnn", "gru", "lstm", "transformer"])
def test_names_trains_each_model(tmp_path, model):
    metrics = train(tmp_path, "names", "--model", model, "--steps", "1")
    check_run(tmp_path, metrics, "names", {"train_loss", "test_loss", "samples"})
    assert metrics["model"]["kind"] == model and metrics["model"]["vocab_size"] == 27
    assert metrics["vocab"] == {"chars": ".abcdefghijklmnopqrstuvwxyz", "end": "."}
    assert metrics["settings"]["model"] == model and metrics["settings"]["steps"] == 1
    assert 2.0 < metrics["final"]["test_loss"] < 4.0  # ln 27 = 3.30 at chance
    assert len(metrics["final"]["samples"]) == 10


def test_names_run_prints_its_test_loss(tmp_path, capsys):
    assert cli.main(["train", "names", "--model", "bigram", "--steps", "3", "--out",
                     str(tmp_path), "--quiet"]) == 0  # fmt: skip
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("test loss: ") and "train loss" in last


def test_names_same_seed_same_run(tmp_path):
    a = train(tmp_path / "a", "names", "--model", "mlp", "--steps", "3", "--seed", "5")
    b = train(tmp_path / "b", "names", "--model", "mlp", "--steps", "3", "--seed", "5")
    c = train(tmp_path / "c", "names", "--model", "mlp", "--steps", "3", "--seed", "6")
    assert a["history"] == b["history"] and a["final"]["samples"] == b["final"]["samples"]
    assert a["history"] != c["history"]


def test_gpt_run(runs):
    metrics = json.loads((runs / "gpt" / "metrics.json").read_text(encoding="utf-8"))
    check_run(runs / "gpt", metrics, "gpt", {"train_loss", "val_loss", "sample"})
    assert metrics["vocab"] == {"chars": "\n ()+,:abdefnrtu", "end": None}
    assert metrics["model"]["block_size"] == 64 and metrics["model"]["vocab_size"] == 16
    sample_text = metrics["final"]["sample"]
    assert sample_text.startswith("\n") and len(sample_text) == 201
    assert set(sample_text) <= set(TEXT)


def test_gpt_trains_on_the_standard_library_by_default(tmp_path):
    metrics = train(tmp_path, "gpt", "--steps", "1", "--batch-size", "2")
    assert metrics["corpus"].startswith("stdlib: abc, bisect,")
    assert metrics["settings"]["data_file"] is None
    assert metrics["model"]["vocab_size"] > 90  # all of ASCII's printable, and more


def test_gpt_weights_are_tied_and_the_run_rebuilds(runs):
    from chainrule.tools.recipes import gpt

    metrics = json.loads((runs / "gpt" / "metrics.json").read_text(encoding="utf-8"))
    model = gpt.rebuild(str(runs / "gpt"), metrics)
    assert model.lm_head.weight is model.wte.weight and not model.training
    assert len(metrics["vocab"]["chars"]) == model.config.vocab_size


def test_adamw_decays_the_matrices_only():
    from chainrule.tools.recipes import gpt, language

    model = gpt.GPT(gpt.GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=2, n_embd=8))
    decay, no_decay = language.adamw(model, 1e-3, 0.1).param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.ndim == 2 for p in decay["params"])
    assert all(p.ndim == 1 for p in no_decay["params"])
    # wte (also the head), wpe, c_attn, attn.c_proj, c_fc, mlp.c_proj; every parameter once
    assert len(decay["params"]) == 6
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


def test_warmup_then_cosine():
    from chainrule.tools.recipes.language import warmup_cosine

    factor = warmup_cosine(10, 110, final=0.1)
    assert factor(0) == pytest.approx(0.1) and factor(4) == pytest.approx(0.5)
    assert factor(10) == pytest.approx(1.0) and factor(60) == pytest.approx(0.55)
    assert factor(110) == pytest.approx(0.1) and factor(500) == pytest.approx(0.1)


def test_adder_run(runs):
    metrics = json.loads((runs / "adder" / "metrics.json").read_text(encoding="utf-8"))
    check_run(runs / "adder", metrics, "adder", {"train_loss", "test_loss", "test_accuracy"})
    assert 0.0 <= metrics["final"]["test_accuracy"] <= 0.1  # two steps: not yet adding


def test_adder_writes_the_sum_reversed():
    from chainrule.tools.recipes import adder

    assert adder.digits(cr.tensor([8547, 9999, 5])).tolist() == [
        [8, 5, 4, 7, 2, 3, 1], [9, 9, 9, 9, 8, 9, 1], [0, 0, 0, 5, 5, 0, 0]]  # fmt: skip
    x, y = adder.examples(cr.tensor([8547]))
    assert x.tolist() == [[8, 5, 4, 7, 2, 3]] and y.tolist() == [[-1, -1, -1, 2, 3, 1]]


def test_the_splits_are_fixed_whatever_the_seed():
    from chainrule.tools.recipes import names as names_recipe

    train_words, test_words = names_recipe.split()
    assert len(test_words) == 1000 and len(train_words) == 31033
    assert sorted(train_words + test_words) == sorted(names())
    assert names_recipe.split() == (train_words, test_words)


@pytest.mark.parametrize("recipe", ["names", "adder"])
def test_graph_draws_one_step(tmp_path, recipe):
    out = tmp_path / "step.dot"
    assert cli.main(["graph", recipe, "--out", str(out)]) == 0
    assert "wte.weight" in out.read_text()


def test_export_writes_a_language_model_and_its_vocabulary(runs, capsys):
    """tests/onnx/test_export_cli.py checks the graphs against ONNX Runtime."""
    assert cli.main(["export", str(runs / "names")]) == 0
    assert (runs / "names" / "model.onnx").is_file()
    assert (runs / "names" / "model.vocab.json").is_file()


# -- chainrule sample ------------------------------------------------------------------------


def test_sample_names_is_reproducible(runs, capsys):
    a = sample(capsys, runs / "names", "--num", "5", "--seed", "3")
    assert a == sample(capsys, runs / "names", "--num", "5", "--seed", "3")
    assert a != sample(capsys, runs / "names", "--num", "5", "--seed", "4")
    lines = a.splitlines()
    assert len(lines) == 5 and all(set(w) <= set(string.ascii_lowercase) for w in lines)
    assert len(sample(capsys, runs / "names").splitlines()) == 10  # the default


def test_sample_names_with_a_prompt(runs, capsys):
    out = sample(capsys, runs / "names", "--prompt", "ka", "--num", "4", "--top-k", "3",
                 "--temperature", "0.5", "--max-new-tokens", "4")  # fmt: skip
    lines = out.splitlines()
    assert len(lines) == 4 and all(w.startswith("ka") and len(w) <= 6 for w in lines)


def test_sample_gpt_continues_the_prompt(runs, capsys):
    out = sample(capsys, runs / "gpt", "--prompt", "def ", "--max-new-tokens", "12",
                 "--num", "2", "--seed", "1")  # fmt: skip
    first, second = out[:-1].split("\n-----\n")
    assert first.startswith("def ") and len(first) == 16 and len(second) == 16
    assert out == sample(capsys, runs / "gpt", "--prompt", "def ", "--max-new-tokens", "12",
                         "--num", "2", "--seed", "1")  # fmt: skip


def test_top_k_1_is_the_likeliest_token(runs, capsys):
    a = sample(capsys, runs / "gpt", "--top-k", "1", "--max-new-tokens", "8", "--seed", "1")
    b = sample(capsys, runs / "gpt", "--top-k", "1", "--max-new-tokens", "8", "--seed", "2")
    assert a == b


def test_sample_draws_with_cr_multinomial(runs, capsys, monkeypatch):
    calls = []
    real = cr.multinomial

    def spy(*args, **kwargs):
        calls.append(kwargs.get("generator"))
        return real(*args, **kwargs)

    monkeypatch.setattr(cr, "multinomial", spy)
    sample(capsys, runs / "names", "--num", "2", "--max-new-tokens", "3")
    assert len(calls) == 3 and all(isinstance(g, cr.Generator) for g in calls)


# -- bad input: clear errors, nothing written ------------------------------------------------


def nothing_in(folder) -> bool:
    """No file written (the command line may have made the --out folder to check it)."""
    return not folder.exists() or not any(folder.iterdir())


def fails(capsys, argv: list[str], *parts: str) -> str:
    """Run argv, which must fail with exit status 2 and print nothing to stdout; its stderr,
    which must hold each of ``parts``."""
    capsys.readouterr()
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    for part in parts:
        assert part in captured.err
    return captured.err


@pytest.mark.parametrize(
    "content, what",
    [
        (b"", "--data-file is empty"),
        (b"text\x00\x01\x02binary", "--data-file is binary (it holds NUL bytes at offset 4)"),
        (b"caf\xe9 latin-1" * 200, "--data-file is not UTF-8 text (byte 0xe9 at offset 3)"),
        (b"short text", "--data-file is too short to train on: it needs at least 660 characters"),
    ],
)
def test_bad_data_file(tmp_path, capsys, content, what):
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    out = tmp_path / "run"
    err = fails(capsys, ["train", "gpt", "--data-file", str(path), "--out", str(out), "--quiet"],
                f"chainrule: gpt: {what}", repr(str(path)))  # fmt: skip
    assert err.count("\n") == 1
    assert nothing_in(out)


def test_missing_data_file(tmp_path, capsys):
    path = tmp_path / "nope.txt"
    fails(capsys, ["train", "gpt", "--data-file", str(path), "--out", str(tmp_path / "run")],
          "gpt: --data-file cannot be read (No such file or directory)")  # fmt: skip
    assert nothing_in(tmp_path / "run")


def test_unknown_model(tmp_path, capsys):
    fails(
        capsys,
        ["train", "names", "--model", "cnn", "--out", str(tmp_path / "run")],
        "names: --model must be one of bigram, mlp, rnn, gru, lstm, transformer; got 'cnn'",
    )
    assert nothing_in(tmp_path / "run")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "breast-cancer", "--model", "gru"],
         "train: the breast-cancer recipe has no option --model (its options: --epochs, --lr, "
         "--batch-size, --optimizer); got --model gru"),
        (["train", "names", "--epochs", "3"],
         "train: the names recipe has no option --epochs (its options: --model, --steps, --lr, "
         "--batch-size); got --epochs 3"),
        (["train", "adder", "--data-file", "x.txt"],
         "train: the adder recipe has no option --data-file"),
    ],
)  # fmt: skip
def test_an_option_the_recipe_does_not_take(tmp_path, capsys, argv, message):
    fails(capsys, [*argv, "--out", str(tmp_path / "run")], message)
    assert nothing_in(tmp_path / "run")


def test_sample_a_folder_that_is_no_run(tmp_path, capsys):
    fails(capsys, ["sample", str(tmp_path)],
          "sample: RUN_DIR is not a run `chainrule train` wrote", "metrics.json")  # fmt: skip


def test_sample_a_run_without_its_model(runs, tmp_path, capsys):
    shutil.copytree(runs / "names", tmp_path / "run")
    os.remove(tmp_path / "run" / "model.safetensors")
    fails(capsys, ["sample", str(tmp_path / "run")], "sample: RUN_DIR holds no model.safetensors")


def test_sample_a_run_with_a_damaged_model(runs, tmp_path, capsys):
    shutil.copytree(runs / "names", tmp_path / "run")
    (tmp_path / "run" / "model.safetensors").write_bytes(b"not safetensors")
    fails(capsys, ["sample", str(tmp_path / "run")], "sample: RUN_DIR's model cannot be loaded")


def test_sample_a_recipe_that_cannot(runs, capsys):
    fails(capsys, ["sample", str(runs / "adder")],
          "sample: RUN_DIR is a run of the adder recipe, which cannot sample (only names and "
          "gpt runs do)")  # fmt: skip


@pytest.mark.parametrize(
    "run, prompt, message",
    [
        ("names", "Ka", "sample: --prompt holds characters the run's vocabulary lacks ('K'); "
                        "got 'Ka'"),
        ("names", "a.b", "sample: --prompt holds the end token '.', which ends a name"),
        ("gpt", "class Z", "sample: --prompt holds characters the run's vocabulary lacks "
                           "('Zcls'); got 'class Z'"),
        ("gpt", "", "sample: --prompt is empty"),
    ],
)  # fmt: skip
def test_sample_a_prompt_outside_the_vocabulary(runs, capsys, run, prompt, message):
    fails(capsys, ["sample", str(runs / run), "--prompt", prompt], message)


@pytest.mark.parametrize(
    "option, value", [("--num", "0"), ("--num", "-2"), ("--max-new-tokens", "0"),
                      ("--max-new-tokens", "-1"), ("--num", "two")]
)  # fmt: skip
def test_sample_counts_must_be_positive(runs, capsys, option, value):
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        cli.main(["sample", str(runs / "names"), option, value])
    assert e.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"argument {option}: " in captured.err


# -- the goals, at full length (minutes each): pytest -m slow ---------------------------------


@pytest.fixture(scope="module")
def bigram_loss(tmp_path_factory):
    out = tmp_path_factory.mktemp("bigram")
    return train(out, "names", "--model", "bigram")["final"]["test_loss"]


@pytest.mark.slow
def test_names_transformer_reaches_its_goal(tmp_path, bigram_loss):
    final = train(tmp_path, "names")["final"]
    assert final["test_loss"] <= 2.05 < bigram_loss


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mlp", "rnn", "gru", "lstm"])
def test_names_model_beats_the_bigram(tmp_path, bigram_loss, model):
    assert train(tmp_path, "names", "--model", model)["final"]["test_loss"] < bigram_loss - 0.2


@pytest.mark.slow
def test_gpt_learns_the_standard_library(tmp_path):
    final = train(tmp_path, "gpt")["final"]
    assert final["val_loss"] < 2.0
    assert final["sample"].startswith("\n")


@pytest.mark.slow
def test_adder_reaches_its_goal(tmp_path):
    assert train(tmp_path, "adder")["final"]["test_accuracy"] >= 0.99


# -- the GPT against PyTorch -----------------------------------------------------------------


def torch_gpt(state: dict, config, idx):
    """The GPT's forward pass written in PyTorch's functional ops, on ``state``'s weights."""
    import torch
    import torch.nn.functional as tF

    w = {k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()}
    x = tF.embedding(idx, w["wte.weight"]) + w["wpe.weight"][: idx.shape[1]]
    b, t, c = x.shape
    for i in range(config.n_layer):
        p = f"h.{i}."

        def ln(z, name, p=p):
            return tF.layer_norm(z, (c,), w[p + name + ".weight"], w[p + name + ".bias"])

        q, k, v = tF.linear(ln(x, "ln_1"), w[p + "attn.c_attn.weight"],
                            w[p + "attn.c_attn.bias"]).split(c, dim=2)  # fmt: skip
        q, k, v = (z.view(b, t, config.n_head, -1).transpose(1, 2) for z in (q, k, v))
        y = tF.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
        x = x + tF.linear(
            y.reshape(b, t, c), w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"]
        )
        h = tF.gelu(tF.linear(ln(x, "ln_2"), w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]),
                    approximate="tanh")  # fmt: skip
        x = x + tF.linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
    x = tF.layer_norm(x, (c,), w["ln_f.weight"], w["ln_f.bias"])
    return tF.linear(x, w["wte.weight"])  # the tied head


def test_gpt_computes_what_pytorch_computes():
    import torch

    from chainrule.tools.recipes.gpt import GPT, GPTConfig

    cr.manual_seed(0)
    config = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16)
    model = GPT(config).eval()
    idx = cr.randint(0, 11, (3, 7))
    with cr.no_grad():
        ours = model(idx).numpy()
    theirs = torch_gpt(model.state_dict(), config, torch.from_numpy(idx.numpy().copy()))
    assert ours.shape == (3, 7, 11)
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=1e-4, atol=1e-5)
    later = idx.numpy().copy()
    later[:, 4:] = (later[:, 4:] + 1) % 11  # change the tokens after position 3
    with cr.no_grad():
        changed = model(cr.tensor(later)).numpy()
    np.testing.assert_allclose(changed[:, :4], ours[:, :4], rtol=1e-6, atol=1e-6)  # causal
    assert not np.allclose(changed[:, 4:], ours[:, 4:])


def test_gpt_rejects_a_sequence_longer_than_its_block():
    from chainrule.tools.recipes.gpt import GPT, GPTConfig

    model = GPT(GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=1, n_embd=4))
    with pytest.raises(ValueError, match=r"^GPT: a sequence is longer than the block size; got "
                       r"length 5 and block_size 4$"):  # fmt: skip
        model(cr.zeros(1, 5, dtype=cr.int64))
