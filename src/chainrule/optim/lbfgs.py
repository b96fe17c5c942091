"""L-BFGS, PyTorch's ``torch.optim.LBFGS`` step for step: the same two-loop recursion, the
same first step, the same stopping tests and the same strong-Wolfe line search (cubic
interpolation, bracketing and zoom), so the iterates agree with PyTorch's."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import array
from ..autograd import enable_grad, no_grad
from ..autograd.versions import bump
from ..tensor import Tensor
from .optimizer import Optimizer, check_number, require

xp = array.xp


def _cubic_interpolate(
    x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: Any = None
) -> Any:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds (by
    default the interval between x1 and x2); their middle if the cubic has none."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = xp.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(
    obj_func: Callable,
    x: list[Any],
    t: Any,
    d: Any,
    f: float,
    g: Any,
    gtd: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, Any, int]:
    """A step t along d meeting the strong Wolfe conditions (sufficient decrease c1,
    curvature c2): bracket it, then zoom in by cubic interpolation. Returns (f, g, t,
    function evaluations)."""
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:  # bracketing
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)  # interpolate, extrapolating by up to 10x
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the most evaluations
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: the bracket narrows until the conditions hold or it is too small to matter
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # too close to a bound, or out of the bracket: step a tenth of it in from the bound
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    r"""L-BFGS with PyTorch's arguments and iterates: ``step(closure)`` runs up to
    ``max_iter`` iterations (``max_eval`` closure calls, 1.25 max_iter by default), each a
    direction from the last ``history_size`` curvature pairs (the two-loop recursion) and a
    step of ``lr`` (the first one scaled by min(1, 1/|g|_1)), or the step that
    ``line_search_fn="strong_wolfe"`` finds. It stops early when the largest gradient
    entry is at most ``tolerance_grad``, or a step or the change of the loss is below
    ``tolerance_change``.

    One parameter group only, as PyTorch's. The closure re-evaluates the model and returns
    the loss (zeroing the gradients and calling backward itself); ``step`` returns the
    loss of its first call.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError(
                "LBFGS: per-parameter options (parameter groups) are not supported; got "
                f"{len(self.param_groups)} groups"
            )
        self._params = self.param_groups[0]["params"]

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        for key in ("max_iter", "max_eval", "history_size"):
            value = group[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LBFGS: {key} must be a positive int; got {value!r}")
        for key in ("tolerance_grad", "tolerance_change"):
            group[key] = check_number("LBFGS", key, group[key])
        require(
            group["line_search_fn"] in (None, "strong_wolfe"),
            "LBFGS",
            "line_search_fn must be None or 'strong_wolfe'",
            repr(group["line_search_fn"]),
        )

    # -- the parameters as one flat vector ---------------------------------------------------

    def _gather_flat_grad(self) -> Any:
        return xp.concatenate([
            xp.zeros(p._array.size, dtype=p.dtype, like=p._array) if p.grad is None
            else p.grad._array.reshape(-1) for p in self._params
        ])  # fmt: skip

    def _add_grad(self, step_size: Any, update: Any) -> None:
        offset = 0
        for p in self._params:
            n = p._array.size
            p._array += (step_size * update[offset : offset + n]).reshape(p.shape)
            bump(p)
            offset += n

    def _clone_param(self) -> list[Any]:
        return [p._array.copy() for p in self._params]

    def _set_param(self, params_data: list[Any]) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p._array[...] = data
            bump(p)

    def _directional_evaluate(self, closure: Callable, x: list[Any], t: Any, d: Any) -> Any:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the step ------------------------------------------------------------------------------

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Run the iterations of one optimisation step; returns the closure's first loss."""
        if closure is None:
            raise TypeError("LBFGS.step: a closure is required (it re-evaluates the loss)")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        def evaluate() -> Any:
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # one state for all parameters, kept under the first
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if xp.abs(flat_grad).max() <= tolerance_grad:  # optimal already
            return orig_loss

        d: Any = state.get("d")
        t: Any = state.get("t")
        old_dirs: Any = state.get("old_dirs")
        old_stps: Any = state.get("old_stps")
        ro: Any = state.get("ro")
        H_diag: Any = state.get("H_diag")  # noqa: N806 (the inverse Hessian's diagonal)
        prev_flat_grad: Any = state.get("prev_flat_grad")
        prev_loss: Any = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1  # noqa: N806
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only if the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # noqa: N806
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                # the two-loop recursion: d = -H g
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x: list[Any], t: Any, d: Any) -> Any:
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # re-evaluate, but not after the last iteration
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            # the stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=H_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout; the flat vectors (d, the history, ...) are Tensors, copied."""
        out = super().state_dict()
        out["state"] = {i: {k: _snapshot(v) for k, v in s.items()} for i, s in out["state"].items()}
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict({"state": {}, "param_groups": state_dict["param_groups"]})
        self._params = self.param_groups[0]["params"]
        for s in state_dict["state"].values():  # one entry, under the first parameter
            self.state[self._params[0]] = {k: _unpack(v) for k, v in s.items()}


def _snapshot(value: Any) -> Any:
    """A state value for state_dict: arrays and NumPy numbers as Tensors (copies), in lists
    as they are held."""
    if isinstance(value, array.ndarray):
        return Tensor._make(value.copy())
    if isinstance(value, xp.generic):
        return Tensor._make(xp.array(value, copy=True))
    if isinstance(value, Tensor):
        return Tensor._make(value._array.copy())
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    return value


def _unpack(value: Any) -> Any:
    """A state value from a state dict, back as the arrays (or 0-d numbers) step works on."""
    if isinstance(value, Tensor):
        arr = value._array.copy()
        return arr[()] if arr.ndim == 0 else arr
    if isinstance(value, array.ndarray):
        return value.copy()[()] if value.ndim == 0 else value.copy()
    if isinstance(value, list):
        return [_unpack(v) for v in value]
    return value
