"""Text from a trained chainrule language model (a names, gpt or adder run) with ONNX Runtime
alone: NumPy and onnxruntime are all it imports. It reads the ONNX file `chainrule export
RUN_DIR` writes and the vocabulary written beside it:

    chainrule train gpt --steps 300 --out runs/gpt
    chainrule export runs/gpt      # runs/gpt/model.onnx and runs/gpt/model.vocab.json
    python examples/onnx_generate.py runs/gpt/model.onnx --greedy
    python examples/onnx_generate.py runs/gpt/model.onnx --temperature 0.8 --seed 1

The model maps token ids (batch, time), int64, to next-token logits (batch, time, vocab);
each new token reads at most the last block_size tokens. With --greedy (the likeliest token
each time) it prints what `chainrule sample RUN_DIR --greedy` prints given the same --prompt,
--num and --max-new-tokens; sampled, the tokens are drawn by NumPy's generator under --seed,
so from the same distribution as chainrule's but not the same text.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import onnxruntime as ort


def load(model_path: str) -> tuple[ort.InferenceSession, dict]:
    """The ONNX Runtime session and the vocabulary (MODEL_STEM.vocab.json beside the model):
    chars (token id i is chars[i]), end (names: the token that starts and ends a name, id 0;
    else null), block_size, the graph's input and output names, and `chainrule sample`'s
    defaults (prompt, num, max_new_tokens)."""
    with open(os.path.splitext(model_path)[0] + ".vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    return ort.InferenceSession(model_path, providers=["CPUExecutionProvider"]), vocab


def next_tokens(
    logits: np.ndarray,
    greedy: bool,
    temperature: float,
    top_k: int | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """One token per row of logits (B, V): the largest, or drawn from softmax(logits /
    temperature) over the top_k largest."""
    if greedy:
        return logits.argmax(axis=-1)  # (B,)
    logits = logits.astype(np.float64) / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = np.sort(logits, axis=-1)[:, -top_k, None]  # (B, 1): the k-th largest
        logits = np.where(logits < kth, -np.inf, logits)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))  # (B, V)
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.array([rng.choice(len(row), p=row) for row in probs])  # (B,)


def generate(
    session: ort.InferenceSession,
    vocab: dict,
    idx: np.ndarray,
    max_new_tokens: int,
    greedy: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """``idx`` (B, T) with ``max_new_tokens`` tokens appended to each row, one model run per
    token on the last block_size tokens."""
    rng = np.random.default_rng(seed)
    for _ in range(max_new_tokens):
        window = idx[:, -vocab["block_size"] :]  # (B, <= block_size)
        logits = session.run([vocab["output"]], {vocab["input"]: window})[0][:, -1, :]  # (B, V)
        nxt = next_tokens(logits, greedy, temperature, top_k, rng)
        idx = np.concatenate([idx, nxt[:, None].astype(np.int64)], axis=1)  # (B, T + 1)
    return idx


def complete(session: ort.InferenceSession, vocab: dict, args: argparse.Namespace) -> str:
    """What `chainrule sample` prints: names one a line, cut at the end token; a text's
    continuations of the prompt separated by a line of dashes."""
    chars, end = vocab["chars"], vocab["end"]
    stoi = {c: i for i, c in enumerate(chars)}
    prompt = args.prompt if args.prompt is not None else vocab["prompt"]
    if prompt is None or (not prompt and end is None):
        raise SystemExit(f"onnx_generate: give --prompt (this {vocab['recipe']} model continues "
                         f"a prompt of at least one character)")  # fmt: skip
    unknown = sorted(set(prompt) - stoi.keys() | ({end} & set(prompt)))
    if unknown:
        raise SystemExit(f"onnx_generate: --prompt holds characters the vocabulary lacks or the "
                         f"end token ({''.join(unknown)!r}); got {prompt!r}")  # fmt: skip
    start = ([stoi[end]] if end is not None else []) + [stoi[c] for c in prompt]
    num = args.num or vocab["num"]
    idx = np.array([start] * num, dtype=np.int64)  # (num, len(start))
    out = generate(session, vocab, idx, args.max_new_tokens or vocab["max_new_tokens"],
                   args.greedy, args.temperature, args.top_k, args.seed)  # fmt: skip
    if end is None:
        texts = [prompt + "".join(chars[i] for i in row[len(start) :]) for row in out]
        return "\n-----\n".join(texts)
    lines = []
    for row in out[:, 1:].tolist():  # the start token dropped
        stop = row.index(stoi[end], len(prompt)) if stoi[end] in row[len(prompt) :] else len(row)
        lines.append("".join(chars[i] for i in row[:stop]))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description="Generate text from an exported chainrule model.")
    ap.add_argument("model", help="the .onnx file `chainrule export` wrote (.vocab.json beside)")
    ap.add_argument("--greedy", action="store_true", help="the likeliest token each time")
    ap.add_argument("--temperature", type=float, default=1.0, help="divides the logits")
    ap.add_argument("--top-k", type=int, help="draw among the k likeliest only")
    ap.add_argument("--seed", type=int, default=0, help="NumPy's generator's seed (default 0)")
    ap.add_argument("--prompt", help="text to continue (names: how the names begin)")
    ap.add_argument("--num", type=int, help="how many (default: 10 names, 1 text)")
    ap.add_argument("--max-new-tokens", type=int, help="tokens to draw at most")
    args = ap.parse_args()
    if args.temperature <= 0 or (args.top_k is not None and args.top_k <= 0):
        ap.error(f"--temperature and --top-k must be positive; got {args.temperature} and "
                 f"{args.top_k}")  # fmt: skip
    session, vocab = load(args.model)
    print(complete(session, vocab, args))


if __name__ == "__main__":
    main()
