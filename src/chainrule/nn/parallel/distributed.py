"""DistributedDataParallel, at PyTorch's path torch.nn.parallel.distributed: one replica of a
model per process, each on its shard of the batch, whose gradients are averaged over the
processes during backward, in buckets whose all-reduce starts as soon as their gradients are
in, so that it overlaps the rest of backward. The collectives are chainrule.distributed's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ... import distributed as dist
from ...array import xp
from ...autograd.engine import grad_parents, toposort
from ...autograd.mode import is_grad_enabled
from ...autograd.versions import bump
from ...factories import zeros
from ...tensor import Tensor
from ..module import Module, Parameter

__all__ = ["DistributedDataParallel"]

MIB = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25  # PyTorch's
# the first bucket under the default cap, as PyTorch (dist._DEFAULT_FIRST_BUCKET_BYTES)
FIRST_BUCKET_BYTES = 1 * MIB

UNFINISHED = (
    "DistributedDataParallel: expected to have finished reduction in the prior iteration before "
    "starting a new one; this error indicates that your module has parameters that were not "
    "used in producing loss: pass find_unused_parameters=True to DistributedDataParallel, and "
    "make sure all forward outputs take part in computing the loss; got {ready} of {total} "
    "parameters' gradients in the prior iteration, missing: {missing}"
)


def bucket_assignment(tensors: Sequence[Tensor], limits: Sequence[int]) -> list[list[int]]:
    """The indices of ``tensors`` grouped in buckets, as PyTorch's
    ``_compute_bucket_assignment_by_size``: tensors of one dtype fill a bucket in order
    until it holds at least its limit in bytes (the first bucket of each dtype ``limits[0]``,
    the next ``limits[1]``, and so on, the last limit repeating); buckets are ordered by
    their first index."""
    open_: dict[Any, list[int]] = {}
    size: dict[Any, int] = {}
    nth: dict[Any, int] = {}
    done: list[list[int]] = []
    for i, t in enumerate(tensors):
        key = t.dtype
        open_.setdefault(key, []).append(i)
        size[key] = size.get(key, 0) + t.numel() * t.dtype.itemsize
        limit = limits[min(nth.get(key, 0), len(limits) - 1)]
        if size[key] >= limit:
            done.append(open_.pop(key))
            size[key] = 0
            nth[key] = nth.get(key, 0) + 1
    done += [b for b in open_.values() if b]
    return sorted(done, key=lambda b: b[0])


def _tensors_in(value: Any) -> Iterator[Tensor]:
    """The Tensors in a forward's output: itself, or inside lists, tuples and dicts."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


class _Bucket:
    """Parameters whose gradients are averaged by one all-reduce: ``flat`` holds them end
    to end (each parameter's slice at its offset). On one machine, ``flat`` is this rank's
    array of a SharedBuffer, summed through shared memory; elsewhere MPI's all-reduce
    sums it, started without blocking."""

    def __init__(self, params: list[Parameter]) -> None:
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        dtype, device = params[0].dtype, params[0].device
        self.shared = dist.SharedBuffer.make(n, dtype) if device.type == "cpu" else None
        if self.shared is not None:
            self.flat = Tensor._make(self.shared.array, False)
        else:
            self.flat = zeros(n, dtype=dtype, device=device)  # all_reduce takes it
        self.pending = len(params)
        self.work: dist.Work | None = None

    def start(self) -> None:
        """Start summing ``flat`` over the ranks, unless it is summed through shared memory:
        that waits for the end of backward (_Reducer.finish), where every such bucket is
        summed at once (each rank sums its share of the positions on its own core, so
        there is nothing to overlap with; and every point where the ranks meet costs the
        time the slower one takes to come: at 2 ranks, the MLP's step waits 0.24-0.48 ms
        in all, against 0.36-0.72 meeting once per bucket)."""
        if self.shared is None:
            with dist._agreed():  # the ranks' buckets were checked alike at construction
                self.work = dist.all_reduce(self.flat, async_op=True)

    def wait(self) -> None:
        if self.work is not None:
            self.work.wait()


class _Reducer:
    """The state of one backward's reduction: which parameters are ready, which buckets
    are in flight, and the end, when the averages are written into the gradients."""

    def __init__(self, params: list[Parameter], limits: Sequence[int], views: bool) -> None:
        self.views = views  # gradient_as_bucket_view: each .grad is its slice of a bucket
        order = list(reversed(params))  # backward gives the last layers' gradients first
        self.buckets = [_Bucket([order[i] for i in b]) for b in bucket_assignment(order, limits)]
        self.slot: dict[int, tuple[_Bucket, int]] = {}
        for b in self.buckets:
            for p, offset in zip(b.params, b.offsets, strict=True):
                self.slot[id(p)] = (b, offset)
        self.params = params
        self.world = dist.get_world_size()
        self.armed = False  # a forward asked for this backward's gradients to be averaged
        self.started = False  # the first gradient of that backward has arrived
        self.unused: list[Parameter] = []
        self.used: Tensor | None = None  # 1 where a parameter was used on this rank
        self.used_work: dist.Work | None = None
        self.next = 0  # the next bucket to start: they start in order, on every rank alike
        self.ready: set[int] = set()  # ids of the parameters whose gradient is in its bucket

    def prepare(self, outputs: Any, find_unused: bool) -> None:
        """Called by forward: the next backward averages the gradients. With
        ``find_unused``, the parameters the outputs do not depend on are found now, by
        walking their graph, and count as ready with gradient zero."""
        if self.used_work is not None:  # a forward whose backward never came
            self.used_work.wait()
        for b in self.buckets:
            b.pending = len(b.params)
            b.work = None
        self.next = 0
        self.ready = set()
        self.unused = []
        if find_unused:
            roots = [t for t in _tensors_in(outputs) if t.requires_grad]
            reached = {id(t) for t in toposort(roots, grad_parents)}
            self.unused = [p for p in self.params if id(p) not in reached]
            used = zeros(len(self.params), dtype="int32")
            used._array[:] = [id(p) in reached for p in self.params]
            self.used = used
            # started here, on every rank at the same point, it is over long before backward's end
            with dist._agreed():
                self.used_work = dist.all_reduce(used, async_op=True)
        self.armed = True

    def check_finished(self) -> None:
        """Refuse a forward while the last backward's reduction is unfinished (a parameter
        whose gradient never came), naming the parameters it waits for, as PyTorch."""
        if self.started:
            missing = [i for i, p in enumerate(self.params) if id(p) not in self.ready]
            raise RuntimeError(
                UNFINISHED.format(
                    ready=len(self.params) - len(missing), total=len(self.params), missing=missing
                )
            )

    def hook(self, p: Parameter) -> None:
        """A parameter's gradient has been accumulated: copy it into its bucket, and start
        every bucket now complete whose turn has come."""
        if not self.armed or id(p) in self.ready:
            return
        if not self.started:
            self.started = True
            for q in self.unused:  # PyTorch marks them at the first gradient, as here
                self.mark(q)
        self.mark(p)
        while self.next < len(self.buckets) and self.buckets[self.next].pending == 0:
            self.buckets[self.next].start()
            self.next += 1
        for b in self.buckets[: self.next]:
            if b.work is not None:
                b.work.is_completed()  # lets MPI move the started ones on
        if self.next == len(self.buckets):
            self.finish()

    def mark(self, p: Parameter) -> None:
        b, offset = self.slot[id(p)]
        n = p.numel()
        dst = b.flat._array[offset : offset + n]
        if p.grad is None:
            dst[...] = 0
        elif self.views and p.grad._array.base is b.flat._array:  # accumulated in its slice
            xp.divide(dst, self.world, out=dst)
        else:  # divided here, as PyTorch does, so the sum over the ranks is their mean
            xp.divide(p.grad._array.reshape(-1), self.world, out=dst)
            if self.views:
                p.grad = Tensor._make(dst.reshape(p.shape), False)
        b.pending -= 1
        self.ready.add(id(p))

    def finish(self) -> None:
        """Wait for every bucket and write the averages into the gradients; a parameter
        used on no rank keeps its gradient as it was, as in PyTorch."""
        dist.SharedBuffer.all_reduce_together([b.shared for b in self.buckets if b.shared])
        for b in self.buckets:
            b.wait()
        unused_everywhere: set[int] = set()
        if self.used_work is not None and self.used is not None:
            self.used_work.wait()
            counts = self.used._array
            unused_everywhere = {id(p) for p, c in zip(self.params, counts, strict=True) if c == 0}
        for b in self.buckets:
            for p, offset in zip(b.params, b.offsets, strict=True):
                if id(p) in unused_everywhere:
                    continue
                avg = b.flat._array[offset : offset + p.numel()].reshape(p.shape)
                if self.views:  # .grad is the slice (a parameter without one now gets it)
                    if p.grad is None:
                        p.grad = Tensor._make(avg, False)
                    bump(p.grad)
                elif p.grad is None:
                    p.grad = Tensor(avg)  # a copy: the bucket is reused next step
                else:
                    p.grad._array[...] = avg
                    bump(p.grad)
        self.armed = self.started = False
        self.used_work = None


class DistributedDataParallel(Module):
    """PyTorch's DistributedDataParallel on CPUs over MPI: wraps ``module`` (reached as
    ``.module``; state_dict keys gain the prefix ``module.``), makes every rank start from
    rank 0's parameters and buffers, and, in each backward after a forward through it,
    averages the gradients over the ranks. At construction it checks that every rank's
    model has the same parameters and buffers, the same ones requiring a gradient, and the
    same ``bucket_cap_mb``, naming the difference and the ranks (RuntimeError on each).

    Gradients are averaged in buckets of about ``bucket_cap_mb`` MiB (default 25, the first
    bucket 1 MiB, as PyTorch), filled with the parameters in reverse order, the order
    backward gives their gradients; each bucket's all-reduce starts, without blocking, as
    soon as its last gradient is in (``Tensor.register_post_accumulate_grad_hook``), and the
    hook of the last gradient of the step waits for them all, so ``backward()`` returns with
    the averages in ``.grad``. When every rank runs on one machine, the buckets live in
    memory the ranks share and are summed there instead, all at once by that last hook
    (distributed.SharedBuffer). (PyTorch forms its buckets again after the first step, in
    the order the gradients came; these are formed once, which gives the same buckets when
    gradients come in reverse order of the parameters.)

    ``find_unused_parameters``: the parameters a forward's outputs do not depend on are
    found by walking their graph and count as having gradient zero on that rank (one used
    on no rank keeps its gradient). Without it, such a parameter leaves the reduction
    unfinished, and the next forward says so. ``broadcast_buffers`` (default True) copies
    rank 0's buffers into every rank at the start of each forward. ``no_sync()`` skips the
    averaging, for gradient accumulation. ``device_ids`` and ``output_device`` must be None,
    as PyTorch's for a CPU module; ``dim`` is kept, unused, as PyTorch's on the CPU.

    ``gradient_as_bucket_view``: as PyTorch's, each parameter's ``.grad`` becomes its slice
    of a bucket, so the averages need no copy back into the gradients, and a gradient
    accumulated into its slice (zeroed in place by ``zero_grad(set_to_none=False)``) none
    into the bucket; a ``.grad`` kept from an earlier step then changes with the bucket.
    ``static_graph`` and ``check_reduction`` are accepted, as PyTorch's, and change nothing
    here (the buckets are formed once; an unfinished reduction is always reported).
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool | None = None,
        init_sync: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        op = "DistributedDataParallel"
        if not isinstance(module, Module):
            raise TypeError(f"{op}: module must be a Module; got {type(module).__name__}")
        if device_ids or output_device is not None:
            raise ValueError(
                f"{op}: device_ids and output_device only work with GPU modules; chainrule's "
                f"run on the CPU, so they must be None; got device_ids={device_ids!r}, "
                f"output_device={output_device!r}"
            )
        if bucket_cap_mb is not None and not bucket_cap_mb > 0:
            raise ValueError(f"{op}: bucket_cap_mb must be positive; got {bucket_cap_mb}")
        dist.get_world_size(process_group)  # initialized, and the default group
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError(
                f"{op}: the module has no parameter that requires a gradient; got "
                f"{type(module).__name__}"
            )
        self.module = module
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        cap = DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * MIB)
        first = FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        limits = [first, self.bucket_bytes_cap]
        self._check_ranks_agree(op, bucket_cap_mb, limits)
        if init_sync:
            self._sync_module_states()
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self._reducer = _Reducer(params, limits, self.gradient_as_bucket_view)
        self._handles = [p.register_post_accumulate_grad_hook(self._reducer.hook) for p in params]

    def _check_ranks_agree(self, op: str, cap: float | None, limits: Sequence[int]) -> None:
        """Check, once, that every rank's model has the same parameters and buffers (names,
        shapes, dtypes), the same parameters requiring a gradient, and the same bucket
        limits, so that the ranks' buckets match, as PyTorch verifies its parameters' shapes
        across processes; a difference raises on every rank, naming it and the ranks. The
        collectives of training go without distributed's per-call check from here on."""
        named = list(self.module.named_parameters())
        mine = {
            "shapes": [
                (name, tuple(t.shape), str(t.dtype))
                for name, t in named + list(self.module.named_buffers())
            ],
            "trainable": [name for name, p in named if p.requires_grad],
            "limits": list(limits),
            "cap": cap,
        }
        everyone: list[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, mine)
        first = everyone[0]
        for r, theirs in enumerate(everyone):
            if theirs["shapes"] != first["shapes"]:
                diff = next(
                    (a, b)
                    for a, b in zip(
                        first["shapes"] + [None], theirs["shapes"] + [None], strict=False
                    )
                    if a != b
                )
                raise RuntimeError(
                    f"{op}: the ranks' models differ; got {diff[0]} on rank 0 and {diff[1]} on "
                    f"rank {r}"
                )
        for r, theirs in enumerate(everyone):
            if theirs["trainable"] != first["trainable"]:
                only0 = [n for n in first["trainable"] if n not in theirs["trainable"]]
                only_r = [n for n in theirs["trainable"] if n not in first["trainable"]]
                sides = [
                    f"{names} requires a gradient on rank {a} and not on rank {b}"
                    for names, a, b in ((only0, 0, r), (only_r, r, 0))
                    if names
                ]
                raise RuntimeError(
                    f"{op}: the ranks' models train different parameters (requires_grad), so "
                    f"their gradient buckets would not match; got {'; '.join(sides)}"
                )
        for r, theirs in enumerate(everyone):
            if theirs["limits"] != first["limits"]:
                raise RuntimeError(
                    f"{op}: the ranks' bucket_cap_mb differ, so their gradient buckets would "
                    f"not match; got bucket_cap_mb={first['cap']!r} on rank 0 and "
                    f"bucket_cap_mb={theirs['cap']!r} on rank {r}"
                )

    def _sync_module_states(self) -> None:
        """Copy rank 0's parameters (and buffers, unless broadcast_buffers=False) into
        every rank (their shapes checked by _check_ranks_agree)."""
        tensors: list[Tensor] = list(self.module.parameters())
        if self.broadcast_buffers:
            tensors += list(self.module.buffers())
        with dist._agreed():
            works = [dist.broadcast(t, src=0, async_op=True) for t in tensors]
        for w in works:
            assert w is not None
            w.wait()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        self._reducer.check_finished()
        if self.broadcast_buffers and dist.get_world_size() > 1:
            with dist._agreed():  # their shapes were checked alike at construction
                for b in self.module.buffers():
                    dist.broadcast(b, src=0)
        out = self.module(*inputs, **kwargs)
        # A forward without grad (an evaluation) or under no_sync leaves alone what an
        # earlier forward asked of the next backward, as PyTorch's
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._reducer.prepare(out, self.find_unused_parameters)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within, forward and backward leave the gradients as each rank computes them
        (added up over the steps, unaveraged); the first backward after a forward outside
        averages what they add up to."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
