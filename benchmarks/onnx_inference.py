"""Inference of the digits CNN (the digits-cnn recipe's model) in chainrule and in ONNX
Runtime on the model chainrule exports, float32, batch 1 and 256, each in a process of its
own taking turns; ONNX Runtime's threads follow OMP_NUM_THREADS.

    python benchmarks/onnx_inference.py [--steps 200] [--quick] [--steady-allocator]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
from typing import Any

import numpy as np
from common import interleaved, onnx_session, parse_args, table

import chainrule as cr
from chainrule.tools.recipes import digits_cnn


def exported(model: Any) -> bytes:
    """The model as ONNX, with its batch axis free."""
    from chainrule.onnx import export

    buf = io.BytesIO()
    example = cr.zeros(2, 1, 8, 8)
    free = {"input": {0: "batch"}, "output": {0: "batch"}}
    export(model, (example,), buf, input_names=["input"], output_names=["output"],
           dynamic_axes=free)  # fmt: skip
    return buf.getvalue()


def model() -> Any:
    cr.manual_seed(0)
    m = digits_cnn.model()
    m.eval()
    return m


def chainrule_fn(x: np.ndarray) -> Any:
    m, xt = model(), cr.tensor(x)

    def run() -> Any:
        with cr.no_grad():
            return m(xt)

    return run


def onnxruntime_fn(x: np.ndarray) -> Any:
    session = onnx_session(exported(model()))
    return lambda: session.run(None, {"input": x})


def main(argv: list[str] | None = None) -> dict[int, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="a tiny run that only checks it works")
    args = parse_args(ap, argv, __file__)
    steps, warmup = (2, 1) if args.quick else (args.steps, 20)
    results = {}
    for batch in (1, 256):
        x = np.random.default_rng(batch).standard_normal((batch, 1, 8, 8)).astype(np.float32)
        makers = {"chainrule": lambda x=x: chainrule_fn(x)}
        if importlib.util.find_spec("onnxruntime") is not None:
            makers["onnx runtime"] = lambda x=x: onnxruntime_fn(x)
        medians = interleaved(makers, steps, warmup)
        title = f"digits CNN inference, batch {batch}, float32"
        print(table(title, medians, unit="us", scale=1e6), flush=True)
        results[batch] = medians
    return results


if __name__ == "__main__":
    main()
