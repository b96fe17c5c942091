"""`python -m chainrule.tools.demo`: micrograd's moons demo on the scalar engine, printed step
by step."""

from __future__ import annotations

import sys

from chainrule.scalar.demo import DATASETS_HINT, train_moons


def main() -> int:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print(f"the demo needs scikit-learn: {DATASETS_HINT}", file=sys.stderr)
        return 1
    loss = accuracy = float("nan")
    for k, (loss, accuracy) in enumerate(train_moons()):
        print(f"step {k} loss {loss}, accuracy {accuracy * 100}%")
    print(f"final loss {loss}, accuracy {accuracy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
