"""Per-request acceptance: the distribution of each finished request's accept length.

Records of kind ``"request"`` (SGLang ``Finish:`` lines) and llama.cpp's per-request
``print_timing`` lines enter here, never the interval means (a request is not an interval: a
weight never mixes units). Memory is bounded whatever the log's length:

* the mean is exact (a running sum);
* the percentiles come from a reservoir of :data:`RESERVOIR` values (Vitter's algorithm R with a
  fixed seed, so the same log gives the same numbers): exact up to that many requests, a uniform
  sample of them beyond;
* the histogram has fixed bins of :data:`BIN_WIDTH` over [:data:`LO`, :data:`HI`] (the accept
  length of a request is at least 1 and at most k + 1 <= 65); a value outside is refused and
  counted, never clamped into a bin;
* the step histogram (verify steps that accepted 0, 1, ..., k drafts) is summed position by
  position over the requests that printed one, up to :data:`MAX_STEPS` positions.

Which value is a request's accept length: the printed one (``spec_accept_length``, llama.cpp's
``mean len``); when not printed, the one derived by the documented formula (``1 + accepted /
verify steps`` from the step histogram or the counts, ``completion_tokens / verify steps``).
"""

from __future__ import annotations

import math
import random
import sys
from array import array
from collections import Counter
from collections.abc import Sequence
from functools import reduce
from operator import add

from tui.core import native
from tui.core.model.columns import RecordColumns

# the optional native reservoir draws (_reduce.c; off with SPECWATCH_NATIVE=0): the same draws
_native = native.load("tui.core.stats._reduce")
_U32 = next(t for t in "IL" if array(t).itemsize == 4)  # array's typecode of 32-bit outputs

RESERVOIR = 4096
LO, HI, BIN_WIDTH = 1.0, 65.0, 0.05
N_BINS = round((HI - LO) / BIN_WIDTH)
MAX_STEPS = 65


def _native_draws(
    rng: random.Random, n: int, vals: list[float], start: int, sample: list[float]
) -> tuple[int, int]:
    """The reservoir draws of ``vals[start:]`` after ``n`` values, by the native code, from the
    generator's next 32-bit outputs: taken in blocks (``getrandbits(32 * m)`` is m outputs, the
    first in the lowest bits), the generator put back and moved on by exactly the outputs the
    draws used, so it is left as drawing one by one leaves it. (index of the first value not
    drawn for, n after the drawn ones)."""
    lib = _native
    assert lib is not None
    while start < len(vals):
        state = rng.getstate()
        m = 2 * (len(vals) - start) + 64  # a draw takes < 2 outputs on average
        words = array(_U32, rng.getrandbits(32 * m).to_bytes(4 * m, "little"))
        if sys.byteorder != "little":
            words.byteswap()
        done, used = lib.reservoir(words, n, vals, start, sample)
        rng.setstate(state)
        if used:
            rng.getrandbits(32 * used)
        start, n = start + done, n + done
        if not done:  # n past 32 bits: the rest one by one
            break
    return start, n


def _percentile(sorted_vals: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = (len(sorted_vals) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


class RequestSet:
    """The per-request accept lengths of one segment or source."""

    __slots__ = ("n", "total", "refused", "_sample", "_rng", "bins", "step_histogram", "with_steps")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.refused = 0
        self._sample: list[float] = []
        self._rng = random.Random(12)
        self.bins = array("q", bytes(8 * N_BINS))
        self.step_histogram: list[int] = []  # verify steps that accepted 0, 1, ..., k drafts, summed
        self.with_steps = 0  # requests that printed a step histogram

    def add(self, al: float, steps: tuple[int, ...] | None = None) -> None:
        if steps is not None and len(steps) <= MAX_STEPS:
            self.with_steps += 1
            if len(steps) > len(self.step_histogram):
                self.step_histogram.extend([0] * (len(steps) - len(self.step_histogram)))
            for i, c in enumerate(steps):
                self.step_histogram[i] += c
        if not (LO <= al <= HI):  # NaN included
            self.refused += 1
            return
        self.n += 1
        self.total += al
        # 1e-9: a printed 2.2 is 23.999999... bins of 0.05 up, and belongs to the bin from 2.20
        self.bins[min(int((al - LO) / BIN_WIDTH + 1e-9), N_BINS - 1)] += 1
        if len(self._sample) < RESERVOIR:
            self._sample.append(al)
        else:
            j = self._rng.randrange(self.n)
            if j < RESERVOIR:
                self._sample[j] = al

    def add_columns(self, cols: RecordColumns) -> None:
        """The accept length of each record: printed, else derived; records without either are
        not requests with acceptance (but a printed step histogram still counts)."""
        printed, derived = cols.values["accept_len"], cols.values["accept_len_derived"]
        sh = cols.step_hist
        if sh is None:  # no step histograms (llama.cpp): the same as add() one by one, in bulk
            vals = [p if p == p else d for p, d in zip(printed, derived)]
            self._add_many([a for a in vals if a == a])
            return
        for i in range(cols.n):
            al = printed[i] if printed[i] == printed[i] else derived[i]
            steps = sh[i] if sh is not None else None
            if al != al and steps is None:
                continue
            self.add(al, steps)

    def _add_many(self, vals: list[float]) -> None:
        """:meth:`add` of each of ``vals`` (no step histograms), in order, with the same result to
        the bit: the running sum added value by value, the same bins, and the reservoir drawing
        the same numbers from its generator (``randrange(n)`` is ``getrandbits`` of n's bit
        length until below n)."""
        if _native is not None:
            ok, self.total = _native.tally(vals, self.bins, LO, HI, BIN_WIDTH, self.total)
        else:
            ok = [a for a in vals if LO <= a <= HI]  # NaN refused too
            self.total = reduce(add, ok, self.total)
            last = N_BINS - 1
            for b, c in Counter([int((a - LO) / BIN_WIDTH + 1e-9) for a in ok]).items():
                self.bins[min(b, last)] += c
        self.refused += len(vals) - len(ok)
        if not ok:
            return
        sample = self._sample
        room = max(0, RESERVOIR - len(sample))
        sample.extend(ok[:room])
        n = self.n + min(room, len(ok))
        self.n += len(ok)
        start = min(room, len(ok))
        if _native is not None and start < len(ok):
            start, n = _native_draws(self._rng, n, ok, start, sample)
        getrandbits = self._rng.getrandbits
        for a in ok[start:]:
            n += 1
            k = n.bit_length()
            j = getrandbits(k)
            while j >= n:
                j = getrandbits(k)
            if j < RESERVOIR:
                sample[j] = a

    def percentiles(self) -> dict[str, float] | None:
        if not self._sample:
            return None
        s = sorted(self._sample)
        return {"p10": _percentile(s, 0.1), "p50": _percentile(s, 0.5), "p90": _percentile(s, 0.9)}

    def histogram(self) -> tuple[float, list[int]]:
        """(lower edge of the first bin, counts) from the first to the last non-empty bin."""
        nz = [i for i, c in enumerate(self.bins) if c]
        if not nz:
            return LO, []
        return LO + nz[0] * BIN_WIDTH, list(self.bins[nz[0] : nz[-1] + 1])

    def to_dict(self) -> dict:
        p = self.percentiles()
        lo, counts = self.histogram()
        return {
            "n": self.n,
            "accept_len": {
                "mean": self.total / self.n if self.n else None,
                **(p or dict.fromkeys(("p10", "p50", "p90"))),
            },
            "step_histogram": list(self.step_histogram) if self.with_steps else None,
            "histogram": {"lo": round(lo, 6), "width": BIN_WIDTH, "counts": counts},
            "exact_percentiles": self.n <= RESERVOIR,
            "refused": self.refused,
        }


def to_dict(rs: RequestSet | None) -> dict | None:
    """``requests`` in ``summary --json``: None when no per-request line was read."""
    return rs.to_dict() if rs is not None else None
