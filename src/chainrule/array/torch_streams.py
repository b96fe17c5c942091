"""PyTorch's bits: how torch 2.13's CPU generator turns its mt19937 words into samples.

This module is not on the learner's reading path. It is a reference for one thing only:
drawing, for the same seed, exactly the numbers (the same bits) PyTorch 2.13 draws on an
x86 CPU, so that a script run under chainrule and under PyTorch sees the same weights, the
same dropout masks, the same shuffles. Each recipe below was copied from PyTorch's CPU
kernels and confirmed element by element against torch 2.13; PyTorch promises no stream
across releases or platforms, and the tests in ``tests/random`` fail loudly if it changes.

The engine is NumPy's MT19937 (PyTorch's mt19937, the same 32-bit words); a sampler takes
``words(n)`` (n 32-bit words, in uint64) from a ``Generator`` and works on them with NumPy.
Where PyTorch calls the C library's ``log1p``/``log`` once per element, so does this module
(``math.log1p`` is the same glibc function; NumPy's vectorised ones differ in the last bit).

Kernel families. x86 PyTorch compiles its samplers twice: AVX2 (run by AVX2 and AVX-512
CPUs) with multiply-adds fused into one rounding (``-ffp-contract=fast``), and DEFAULT with
them left apart. ``KERNELS`` picks which one to reproduce ("avx2", or "default" as under
``ATEN_CPU_CAPABILITY=default``, which sets it here too); float32 ``randn`` of 16 or more
elements follows the AVX2 kernel's Cephes polynomials, emulated operation by operation in
float32. Under "default" every sampler matches that kernel family, float32 normals of 16 or
more elements included: its scalar Box-Muller calls the C library's logf, cosf and sinf, on
an angle computed in double (``2.0f * pi<double> * u2``) and rounded to float32.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .torch_topk import topk_indices

if TYPE_CHECKING:
    from .generator import Generator

KERNELS = "default" if os.environ.get("ATEN_CPU_CAPABILITY", "").lower() == "default" else "avx2"

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
_MASK53 = np.uint64((1 << 53) - 1)


def fused() -> bool:
    """Whether multiply-adds are one rounding (the AVX2 kernels)."""
    return KERNELS != "default"


# -- the words -------------------------------------------------------------------------------

# Elements worked on at a time: their temporaries stay in the cache, and their words (64 KB:
# 8192 32-bit words or 8192 of random64()) stay below malloc's mmap threshold (128 KB), which
# would hand every draw fresh pages to fault in (a dropout mask of 16384 elements cost ten
# times one of 8192).
CHUNK = 8192


def words64(g: Generator, n: int) -> np.ndarray:
    """n of mt19937's ``random64()``: two words, the first the high half. From ``WIDE`` on,
    NumPy's own 64-bit draw of the engine makes them in one call (it costs a few
    microseconds more a call than the 32-bit words, and less a word, with no pairing pass)."""
    engine = _engine(g) if n >= WIDE else None
    if engine is None:
        w = g.words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]
    g._fresh = False  # drawn from: what ``g.words`` notes
    return np.random.Generator(engine).integers(0, _TOP64, n, np.uint64, endpoint=True)


def low53(g: Generator, n: int) -> np.ndarray:
    """The 53 low bits of n ``random64()`` (a 53-bit uniform's integer): the high word's 21
    low bits, then the low word."""
    if n >= WIDE:
        m = words64(g, n)
        m &= _MASK53
        return m
    w = g.words(2 * n)
    m = w[0::2] & np.uint64(0x1FFFFF)
    m <<= np.uint64(32)
    m |= w[1::2]
    return m


WIDE = CHUNK  # a whole chunk's draw (below it, the call's cost outweighs the words')
_TOP64 = np.uint64(2**64 - 1)


def _engine(g: Generator) -> np.random.MT19937 | None:
    """g's mt19937 where g's words are that engine's own (a NumPy Generator passed as
    ``generator=`` has other words) and NumPy's 64-bit draw is ``random64()``."""
    plain: Any = type(g).__mro__[-2]  # chainrule's Generator, the class below object
    return g._mt if _HIGH_FIRST and type(g).words is plain.words else None


def _high_first() -> bool:
    """Whether NumPy's 64-bit draw of MT19937 puts the first word high, as ``random64()``
    (its C source leaves the order of the two calls to the compiler)."""
    a, b = np.random.MT19937(), np.random.MT19937()
    a._legacy_seeding(5489)
    b._legacy_seeding(5489)
    w = [int(v) for v in a.random_raw(2)]
    pair = np.random.Generator(b).integers(0, _TOP64, 1, np.uint64, endpoint=True)
    return int(pair[0]) == w[0] << 32 | w[1]


_HIGH_FIRST = _high_first()


def uniform01(g: Generator, n: int, dtype: Any) -> np.ndarray:
    """``uniform_real_distribution<T>(0, 1)``: float32 from the low 24 bits of one word,
    float64 from the low 53 bits of ``random64()``."""
    double = np.dtype(dtype) == F64
    if double and n <= CHUNK:  # one chunk: its 53-bit integers scaled, no buffer to fill
        return low53(g, n) * 2.0**-53
    out = np.empty(n, F64 if double else F32)
    for i in range(0, n, CHUNK):
        part = out[i : i + CHUNK]
        if double:
            w = low53(g, len(part))
            part[...] = w
            part *= 2.0**-53
        else:
            w = g.words(len(part))
            w &= np.uint64(0xFFFFFF)
            part[...] = w
            part *= np.float32(2.0**-24)
    return out


def uniform53(g: Generator, n: int) -> np.ndarray:
    """n doubles of ``uniform_real_distribution<double>(0, 1)``."""
    return uniform01(g, n, F64)


# -- exact multiply-add ------------------------------------------------------------------------


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """s rounded to odd: where the sum was inexact and s's last bit is 0, step s one unit
    toward the error, so that a second rounding is the correct one."""
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0)
    if fix.any():
        step = np.where((err > 0) == (s > 0), 1, -1)
        bits = bits + np.where(fix, step, 0)
    return bits.view(F64)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """float32 ``fmaf(a, b, c)``: one rounding of a*b + c (the product is exact in float64;
    the sum, rounded to float64, is wrong in float32 only on a float32 tie, fixed there)."""
    p = np.multiply(a, b, dtype=F64)
    s = p + np.asarray(c, F64)
    bits = s.view(np.int64)
    tie = (bits & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        s = s.copy()
        t, e = _two_sum(np.broadcast_to(p, s.shape)[tie], np.broadcast_to(c, s.shape)[tie])
        s[tie] = _odd(t, e)
    return s.astype(F32)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """float64 ``fma(a, b, c)`` (Boldo and Melquiond's emulation: the exact product, an exact
    sum, the low parts added rounding to odd, then one rounding)."""
    a, b, c = (np.asarray(v, F64) for v in (a, b, c))
    ph = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, ph)
    v, ve = _two_sum(tl, pl)
    return th + _odd(v, ve)


def muladd(x: np.ndarray, scale: float, shift: float, dtype: Any) -> np.ndarray:
    """``x * scale + shift`` in ``dtype``, fused or not as the kernels are."""
    dtype = np.dtype(dtype)
    if fused():
        return (
            fma32(x, dtype.type(scale), dtype.type(shift))
            if dtype == F32
            else fma64(x, scale, shift)
        )
    return (x * dtype.type(scale) + dtype.type(shift)).astype(dtype)


# -- uniform, integers -------------------------------------------------------------------------


def uniform(g: Generator, n: int, dtype: Any, low: float, high: float) -> np.ndarray:
    """``uniform_(low, high)``: ``u * (high - low) + low`` in the dtype (bounds cast to it
    first); a value that rounds up to ``high`` becomes ``low``."""
    dtype = np.dtype(dtype)
    a, b = dtype.type(low), dtype.type(high)
    if a == 0 and b == 1:
        return uniform01(g, n, dtype)
    if dtype == F32 and fused() and _exact_in_double(a, b - a):
        # u * span + a is exact in float64 here: one rounding to float32 is fmaf's
        out = np.empty(n, F32)
        scale, shift = float(b - a) * 2.0**-24, float(a)
        for i in range(0, n, CHUNK):
            w = (g.words(min(CHUNK, n - i)) & np.uint64(0xFFFFFF)).astype(F64)
            w *= scale
            w += shift
            out[i : i + len(w)] = w
    else:
        out = muladd(uniform01(g, n, dtype), b - a, a, dtype)
    if out.size and out.max() >= b:
        out[out >= b] = a
    return out


def _exact_in_double(a: np.float32, span: np.float32) -> bool:
    """Whether every ``k * 2**-24 * span + a`` (k < 2**24) is exact in float64: its bits
    run from the larger bound's top down to the lowest bit of span * 2**-24 or of a."""
    top = math.frexp(max(abs(float(a)), abs(float(a + span)), abs(float(span))))[1]
    low = math.frexp(float(span))[1] - 48 if span else top
    if a:
        low = min(low, math.frexp(float(a))[1] - 24)
    return top + 1 - low <= 53


def integers(g: Generator, n: int, low: int, high: int) -> np.ndarray:
    """``random_(low, high)`` / ``randint``: a 32-bit word modulo the range below 2**28, a
    ``random64()`` modulo it from there, plus low (int64)."""
    span = high - low
    if span >= 1 << 28:
        w = words64(g, n) % np.uint64(span)
    else:
        w = g.words(n) % np.uint64(span)
    return (w.astype(np.int64) + np.int64(low)) if low >= 0 or span < 1 << 63 else _wide(w, low)


def _wide(w: np.ndarray, low: int) -> np.ndarray:
    return np.array([int(v) + low for v in w.tolist()], dtype=np.int64)


def full_range(g: Generator, n: int, dtype: Any) -> np.ndarray:
    """``random_()`` with no bounds: [0, the largest integer the dtype holds with all those
    below it]."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (g.words(n) & np.uint64(1)).astype(np.bool_)
    if dtype == F64:
        return (words64(g, n) % np.uint64(2**53 + 1)).astype(F64)
    if dtype == np.int64:
        return (words64(g, n) % np.uint64(2**63)).astype(np.int64)
    if dtype.kind in "fV":  # float32, float16 (2**11), bfloat16 (2**8): their digits
        top = {4: 2**24, 2: 2**8 if "bfloat" in str(dtype) else 2**11}[dtype.itemsize]
        return (g.words(n) % np.uint64(top + 1)).astype(F32)
    top = int(np.iinfo(dtype).max)
    return (g.words(n) % np.uint64(top + 1)).astype(dtype)


def randperm(g: Generator, n: int) -> np.ndarray:
    """``randperm(n)``: Fisher and Yates from the front, element i swapped with
    ``i + word % (n - i)``; from n = 214748364 on, inside out with ``random64() % (i + 1)``."""
    if n < 214748364:
        spans = np.arange(n, 1, -1, dtype=np.uint64)
        picks = (g.words(max(n - 1, 0)) % spans + np.arange(len(spans), dtype=np.uint64)).tolist()
        order = list(range(n))
        for i, j in enumerate(picks):
            order[i], order[j] = order[j], order[i]
        return np.array(order, dtype=np.int64)
    order = list(range(n))
    picks = (words64(g, n - 1) % np.arange(2, n + 1, dtype=np.uint64)).tolist()
    for i, z in enumerate(picks, start=1):
        order[i], order[z] = order[z], order[i]
    return np.array(order, dtype=np.int64)


# -- Bernoulli, exponential and friends (one or two uniforms each) --------------------------


def bernoulli(g: Generator, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with p a number: a 53-bit uniform below p (a chunk at a time). The
    uniform is m * 2**-53 for the 53 low bits m of ``random64()``, and m * 2**-53 < p holds
    exactly when the integer m < ceil(p * 2**53): compared so, without making the floats."""
    below = np.uint64(math.ceil(min(max(p, 0.0), 1.0) * 2.0**53))
    if n <= CHUNK:  # a dropout mask's size: no output filled in parts (in a training step,
        return low53(g, n) < below  # each NumPy call costs a few microseconds)
    out = np.empty(n, bool)
    for i in range(0, n, CHUNK):
        part = out[i : i + CHUNK]
        np.less(low53(g, len(part)), below, out=part)
    return out


def bernoulli_probs(g: Generator, p: np.ndarray) -> np.ndarray:
    """``bernoulli(p)`` with p a tensor (flat, memory order): a uniform of p's dtype below p."""
    return uniform01(g, p.size, p.dtype if p.dtype == F64 else F32) < p


def _libm(f: Any, values: np.ndarray) -> np.ndarray:
    return np.fromiter(map(f, values.tolist()), F64, values.size)


def exponential(g: Generator, n: int, lambd: float, dtype: Any = F64) -> np.ndarray:
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)`` in double (glibc's log1p); float32
    when the dtype is, else float64 for the caller to cast. For float32, NumPy's log1p
    (within one unit in the last place of glibc's) gives the same float32 except next to a
    float32 rounding midpoint, where glibc's is called for the element."""
    u = -uniform53(g, n)
    if np.dtype(dtype) != F32:
        return (-1.0 / lambd) * _libm(math.log1p, u)  # cast by the caller
    v = (-1.0 / lambd) * np.log1p(u)
    # within 16 of the midpoint 2^28 in the 29 bits float32 drops: the low bits less
    # 2^28 - 16, taken modulo 2^29, at most 32
    near = ((v.view(np.int64) - (0x10000000 - 16)) & 0x1FFFFFFF) <= 32
    near |= v < 2.0**-100  # float32's subnormals round elsewhere
    if near.any():
        v[near] = (-1.0 / lambd) * _libm(math.log1p, u[near])
    return v.astype(F32)


def cauchy(g: Generator, n: int, median: float, sigma: float) -> np.ndarray:
    """``cauchy_``: ``median + sigma * tan(pi * (u - 0.5))`` in double."""
    return median + sigma * _libm(math.tan, math.pi * (uniform53(g, n) - 0.5))


def geometric(g: Generator, n: int, p: float) -> np.ndarray:
    """``geometric_``: ``ceil(log(u) / log1p(-p))`` in double."""
    return np.ceil(_libm(math.log, uniform53(g, n)) / math.log1p(-p))


def log_normal(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``log_normal_``: glibc's ``exp`` of ``normal_distribution<double>``'s draws."""
    return _libm(math.exp, normal_serial(g, n, mean, std))


# -- normal ----------------------------------------------------------------------------------


def normal_serial(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_distribution<double>`` once per element (PyTorch's path below 16 elements or
    for a non-contiguous tensor): Box and Muller on two 53-bit uniforms, radius from
    ``log1p(-u2)``; it returns ``r cos`` and keeps ``r sin`` in the generator for the next
    call. Then ``v * std + mean`` (one rounding in the AVX2 kernels)."""
    out = np.empty(n, F64)
    for i in range(n):
        cached = g.take_normal()
        if cached is None:
            u1, u2 = uniform53(g, 2).tolist()
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            g.keep_normal(r * math.sin(theta))
            cached = r * math.cos(theta)
        out[i] = cached
    if std == 1.0 and mean == 0.0:
        return out
    return fma64(out, std, mean) if fused() else out * std + mean


def normal_fill(g: Generator, n: int, dtype: Any, mean: float, std: float) -> np.ndarray:
    """``normal_fill`` (16 or more contiguous elements): n uniforms, then Box and Muller on
    each block of 16 (u1 = 1 - the first 8, u2 = the next 8; cos to the first 8, sin to the
    next). If 16 does not divide n, the last 16 are drawn again from 16 fresh uniforms and
    transformed again."""
    dtype = np.dtype(dtype)
    data = uniform01(g, n, dtype)
    if n % 16:
        data = np.concatenate([data[: n - n % 16], uniform01(g, 16, dtype)])
    blocks = data.reshape(-1, 2, 8)
    out = np.empty(blocks.shape, dtype)
    if dtype == F32 and fused():
        _normal_avx2(blocks, out, mean, std)
    else:
        step = CHUNK // 16
        for i in range(0, len(blocks), step):
            part = blocks[i : i + step]
            u1, u2 = np.ascontiguousarray(part[:, 0]), np.ascontiguousarray(part[:, 1])
            out[i : i + step, 0], out[i : i + step, 1] = _box_muller_libm(u1, u2, mean, std, dtype)
    out = out.reshape(-1)
    if n % 16:
        out[n - 16 : n] = out[-16:]
        out = out[:n]
    return out


def _box_muller_libm(u1: Any, u2: Any, mean: float, std: float, dtype: Any) -> tuple:
    """The scalar template: ``sqrt(-2 log(1 - d)) * cos/sin(2 pi u2) * std + mean`` with the
    C library's functions, in the dtype (float32's angle computed in double, then rounded)."""
    t = np.dtype(dtype).type
    one_minus = (t(1) - u1).reshape(-1)
    if t is np.float64:
        logs = _libm(math.log, one_minus)
        radius = np.sqrt(-2.0 * logs).reshape(u1.shape)
        theta = (2.0 * math.pi) * u2
        cos, sin = np.cos(theta), np.sin(theta)
    else:
        logs = _libm_f(_LOGF, one_minus).reshape(u1.shape)
        radius = np.sqrt(np.float32(-2) * logs)
        theta = ((2.0 * math.pi) * u2.astype(F64)).astype(F32)  # in double, as the C++'s
        cos = _libm_f(_COSF, theta.reshape(-1)).reshape(u1.shape)
        sin = _libm_f(_SINF, theta.reshape(-1)).reshape(u1.shape)
    c, s = radius * cos, radius * sin
    if std == 1.0 and mean == 0.0:
        return c, s
    if t is np.float64:
        return fma64(c, std, mean), fma64(s, std, mean)
    return fma32(c, t(std), t(mean)), fma32(s, t(std), t(mean))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LOGF, _COSF, _SINF = _LIBM.logf, _LIBM.cosf, _LIBM.sinf
for _f in (_LOGF, _COSF, _SINF):
    _f.argtypes, _f.restype = [ctypes.c_float], ctypes.c_float


def _libm_f(f: Any, values: np.ndarray) -> np.ndarray:
    return np.fromiter(map(f, values.tolist()), F32, values.size)


# avx_mathfun's constants (Cephes), as float32
_C = {
    k: np.float32(v)
    for k, v in dict(
        SQRTHF=0.707106781186547524, p0=7.0376836292e-2, p1=-1.1514610310e-1,
        p2=1.1676998740e-1, p3=-1.2420140846e-1, p4=+1.4249322787e-1, p5=-1.6668057665e-1,
        p6=+2.0000714765e-1, p7=-2.4999993993e-1, p8=+3.3333331174e-1, q1=-2.12194440e-4,
        q2=0.693359375, DP1=-0.78515625, DP2=-2.4187564849853515625e-4,
        DP3=-3.77489497744594108e-8, s0=-1.9515295891e-4, s1=8.3321608736e-3,
        s2=-1.6666654611e-1, c0=2.443315711809948e-005, c1=-1.388731625493765e-003,
        c2=4.166664568298827e-002, FOPI=1.27323954473516, two_pi=2.0 * math.pi,
    ).items()
}  # fmt: skip
_P = [float(_C[f"p{k}"]) for k in range(9)]  # log's polynomial, multiplied in float64


# PyTorch's AVX2 kernel, a block of 16 at a time: avx_mathfun's ``log256_ps`` and
# ``sincos256_ps``, with the 20 multiply-adds GCC fuses. NumPy works here on many blocks at
# once, in buffers reused from chunk to chunk (a chunk's few hundred kilobytes stay in the
# cache). A fused multiply-add whose product is not exact in float32 is computed in float64:
# the product is exact there, and the sum rounded once to float64 then once to float32 is
# fmaf's result on every input these functions get (``tests/random/test_exhaustive.py``
# compares them over all 2**24 uniforms with the kernel written op for op with exact fmaf).
# Where the product is exact in float32 (a small integer times DP1, DP2 or q2), the float32
# sum is the fused one.
HALF_CHUNK = 16384  # elements of u1 (and of u2) per chunk


class _Scratch:
    """Buffers for one chunk (float32 a-d, int32 i-k, float64 t, w, z), cut to its length."""

    def __init__(self, n: int) -> None:
        self.a, self.b, self.c, self.d = (np.empty(n, F32) for _ in range(4))
        self.i, self.k = np.empty(n, np.int32), np.empty(n, np.int32)
        self.t, self.w, self.z = (np.empty(n, F64) for _ in range(3))

    def cut(self, n: int) -> list[np.ndarray]:
        return [
            v[:n] for v in (self.a, self.b, self.c, self.d, self.i, self.k, self.t, self.w, self.z)
        ]


def _fma_chain(y: np.ndarray, t: np.ndarray, w: np.ndarray, coefs: list[float]) -> None:
    """y <- fmaf(y, w, c) for each c in turn (w float64: a float32 value widened)."""
    for c in coefs:
        t[...] = y
        t *= w
        t += c
        y[...] = t


def _radius_avx2(d1: np.ndarray, out: np.ndarray, s: _Scratch) -> None:
    """``sqrt(-2 * log256_ps(1 - d1))`` into out (float32, flat; d1 of out's size)."""
    x, e, xm, y, bits, k, t, w, z = s.cut(out.size)
    np.subtract(np.float32(1), d1, out=x.reshape(d1.shape))
    # frexp with the mantissa m in [sqrt(1/2), sqrt(2)): adding 0x3504F3's complement to the
    # bits carries into the exponent exactly where Cephes keeps the exponent (m >= sqrt(1/2))
    bits[...] = x.view(np.int32)
    bits += 0x4AFB0D
    np.right_shift(bits, 23, out=k)
    k -= 127
    e[...] = k
    bits &= 0x7FFFFF
    bits += 0x3F3504F3
    np.subtract(bits.view(F32), np.float32(1), out=xm)  # exact: Cephes's x - 1 or 2x - 1
    w[...] = xm
    np.multiply(w, _P[0], out=t)
    t += _P[1]
    y[...] = t
    _fma_chain(y, t, w, _P[2:])
    y *= xm
    np.multiply(xm, xm, out=x)  # z = x * x
    z[...] = x
    t[...] = y
    t *= z
    np.multiply(e, _C["q1"], out=y)  # e * q1, rounded on its own
    w[...] = y
    t += w
    y[...] = t  # fmaf(y, z, e * q1)
    x *= np.float32(0.5)
    y -= x
    y += xm
    e *= _C["q2"]  # exact
    y += e  # fmaf(e, q2, x + y): the log
    y *= np.float32(-2)
    np.sqrt(y, out=out)


def _sincos_avx2(u2: np.ndarray, sin: np.ndarray, cos: np.ndarray, s: _Scratch) -> None:
    """``sincos256_ps(2 pi u2)`` into sin and cos (float32, flat; u2 of their size)."""
    x, y, ys, yc, j, k, t, w, z = s.cut(sin.size)
    np.multiply(u2, _C["two_pi"], out=x.reshape(u2.shape))
    np.multiply(x, _C["FOPI"], out=yc)
    j[...] = yc
    j += 1
    j &= ~1  # the octant, even: 0, 2, 4, 6 or 8
    y[...] = j
    for dp in ("DP1", "DP2"):  # x - y * pi/4 in three parts; these two products are exact
        np.multiply(y, _C[dp], out=yc)
        x += yc
    np.multiply(y, _C["DP3"], out=w, dtype=F64)
    t[...] = x
    t += w
    x[...] = t  # fmaf(DP3, y, x)
    np.multiply(x, x, out=y)  # z, float32
    z[...] = y
    np.multiply(z, float(_C["c0"]), out=t)
    t += float(_C["c1"])
    yc[...] = t
    _fma_chain(yc, t, z, [float(_C["c2"])])
    yc *= y
    t[...] = yc
    t *= z
    np.multiply(z, 0.5, out=w)
    t -= w
    yc[...] = t  # fmaf(yc, z, -(z * 0.5))
    yc += np.float32(1)  # the cosine polynomial
    np.multiply(z, float(_C["s0"]), out=t)
    t += float(_C["s1"])
    ys[...] = t
    _fma_chain(ys, t, z, [float(_C["s2"])])
    ys *= y
    w[...] = x
    t[...] = ys
    t *= w
    t += w
    ys[...] = t  # fmaf(ys, x, x): the sine polynomial
    # the octant's bit 2 swaps the polynomials, and sets the signs: sin's for j = 4, 6,
    # cos's for j = 2, 4 (on the bits, as the kernel's masks do)
    sb, cb = ys.view(np.int32), yc.view(np.int32)
    np.bitwise_xor(sb, cb, out=k)
    sb2 = np.left_shift(j, 30, out=x.view(np.int32))
    sb2 >>= 31  # -1 where j & 2
    k &= sb2
    sb ^= k
    cb ^= k
    np.bitwise_and(j, 4, out=k)
    k <<= 29
    np.bitwise_xor(sb, k, out=sin.view(np.int32))
    j += 2
    j &= 4
    j <<= 29
    np.bitwise_xor(cb, j, out=cos.view(np.int32))


def _normal_avx2(blocks: np.ndarray, out: np.ndarray, mean: float, std: float) -> None:
    """Box and Muller as the AVX2 kernel, blocks (b, 2, 8) of float32 uniforms into out:
    ``r cos`` to the first 8 of a block, ``r sin`` to the next, then ``fmaf(v, std, mean)``."""
    step = HALF_CHUNK // 8
    size = min(len(blocks), step) * 8
    s = _Scratch(size)
    radius, sin, cos = (np.empty(size, F32) for _ in range(3))
    for i in range(0, len(blocks), step):
        part, into = blocks[i : i + step], out[i : i + step]
        m = part.shape[0] * 8
        _radius_avx2(part[:, 0], radius[:m], s)
        _sincos_avx2(part[:, 1], sin[:m], cos[:m], s)
        r8 = radius[:m].reshape(-1, 8)
        np.multiply(r8, cos[:m].reshape(-1, 8), out=into[:, 0])
        np.multiply(r8, sin[:m].reshape(-1, 8), out=into[:, 1])
        if std != 1.0 or mean != 0.0:
            into[...] = fma32(into, np.float32(std), np.float32(mean))


# -- multinomial -----------------------------------------------------------------------------


def multinomial(
    g: Generator, probs: np.ndarray, n: int, replacement: bool, columns: bool = False
) -> np.ndarray:
    """``multinomial`` on (rows, categories) weights. One sample, or none replaced: q ~
    Exp(1) in the weights' dtype over the whole tensor (in its memory order: column by
    column where ``columns``, the weights of a transposed tensor), then the argmax (or the
    top n) of ``p / q``. More samples replaced: per row, a running sum in the dtype divided by the
    total (the last set to 1), and for each sample a 53-bit uniform's leftmost bin with
    ``cum >= u``."""
    rows, k = probs.shape
    if n == 1 or not replacement:
        q = exponential(g, probs.size, 1.0, probs.dtype)
        q = q.reshape(k, rows).T if columns else q.reshape(rows, k)
        keys = probs / q
        if n == 1:
            return np.argmax(keys, axis=1)[:, None]
        return np.stack([topk_indices(row, n) for row in keys])
    out = np.empty((rows, n), np.int64)
    for r in range(rows):
        out[r] = replaced_draws(probs[r], uniform53(g, n))
    return out


SEARCHED = 2**18  # categories from which replaced_draws searches the running sums


def replaced_draws(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``leftmost_bin(cumulative_bins(weights), u)`` without dividing every running sum:
    since ``s / total`` rounded is monotone in s, ``sums[j] / total >= u`` holds exactly when
    ``sums[j] >= s``, s the smallest value of the dtype whose quotient reaches u (found from
    ``u * total`` in a step or two of one unit), so that one search in the sums answers.
    Below ``SEARCHED`` categories the division (in the cache) costs less than the search's
    few calls."""
    if weights.size < SEARCHED:
        return leftmost_bin(cumulative_bins(weights), u)
    sums = np.cumsum(weights)
    total, t = sums[-1], sums.dtype.type
    if not 0 < total < np.inf:
        return leftmost_bin(cumulative_bins(weights), u)
    v = u.astype(sums.dtype)  # the smallest value of the dtype >= u: what cum must reach
    short = v < u
    v[short] = np.nextafter(v[short], t(np.inf))
    s = v * total
    for _ in range(8):  # up to the first s whose quotient reaches v
        low = s / total < v
        if not low.any():
            break
        s[low] = np.nextafter(s[low], t(np.inf))
    for _ in range(8):  # down while the one below still reaches it
        below = np.nextafter(s, t(0))
        lower = (s > 0) & (below / total >= v)
        if not lower.any():
            break
        s[lower] = below[lower]
    else:
        return leftmost_bin(cumulative_bins(weights), u)
    if (s / total < v).any():
        return leftmost_bin(cumulative_bins(weights), u)
    return np.minimum(sums.searchsorted(s, side="left"), len(sums) - 1)


def leftmost_bin(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """For each double u, the first index with ``cum >= u`` (cum float32 or float64, compared
    exactly, without widening cum: below a float32 u, ``cum < u`` is ``cum <= down``, down
    the largest float32 not above u)."""
    if cum.dtype == F64:
        return cum.searchsorted(u, side="left")
    down = u.astype(F32)
    over = down > u
    down[over] = np.nextafter(down[over], np.float32(-np.inf))
    exact = down == u
    return np.where(
        exact, cum.searchsorted(down, side="left"), cum.searchsorted(down, side="right")
    )


def cumulative_bins(weights: np.ndarray) -> np.ndarray:
    """multinomial's bins for replaced draws: the running sum in the weights' dtype divided
    by the total, the last set to 1 (a 53-bit uniform's bin is the leftmost with
    ``cum >= u``)."""
    cum = np.cumsum(weights)
    if cum[-1] > 0:
        cum /= cum[-1]
    cum[-1] = 1
    return cum
