"""A quantity defined only here — ``draft_latency_ms`` — with a family whose lines print it (a
family registered at run time, as a third party's would be): every output must show it with no
file outside tests/ edited (tests/functional/test_new_quantity.py).

The family's own parser knows nothing of the latency: the field is declared through the quantity
registry's public API (:func:`tui.core.model.quantities.register_field`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from tui.core.formats import registry
from tui.core.formats.plugin import NOT_MINE, Format, Line
from tui.core.model import quantities as Q
from tui.core.model.records import RATE_DRAFTS, Record

LATENCY = Q.Quantity(
    "draft_latency_ms",
    "ms",
    "draft latency",
    "lat",
    "time the draft model took per verify step, as printed",
    Q.Combine.MEAN,
    valid=(0.0, 1e6),
    digits=2,
    csv="draft_latency_ms",
    prometheus="specwatch_draft_latency_ms",
    outputs=Q.ALL_OUTPUTS,
)
FIELD = Q.FamilyField("benchllm", "draft_latency_ms", "draft latency: ")
LINE = re.compile(r"BENCHSPEC accepted=(\d+) drafted=(\d+) steps=(\d+)")


class Bench(Format):
    """``... BENCHSPEC accepted=A drafted=D steps=S draft latency: X ms``, one line per window."""

    name = "benchllm"
    display = "BenchLLM"
    anchors: ClassVar[tuple[str, ...]] = ("BENCHSPEC ",)

    def parse(self, state: Any, line: Line) -> Any:
        m = LINE.search(line.text)
        if m is None:
            return NOT_MINE
        acc, dr, steps = map(int, m.groups())
        return Record(
            line.source,
            line.line_no,
            line.offset,
            self.name,
            "bench",
            line.raw,
            accept_len=1.0 + acc / steps,
            accept_rate=acc / dr,
            rate_definition=RATE_DRAFTS,
            accepted=acc,
            drafted=dr,
            num_drafts=float(steps),
        )


def install() -> None:
    registry.register(Bench())
    Q.register(LATENCY)
    Q.register_field(FIELD)


def uninstall() -> None:
    Q.unregister(LATENCY.name)
    registry.unregister(Bench.name)


# `python -c CODE summary ...`: the CLI with the quantity and its family installed first
CLI = (
    "import sys; sys.path.insert(0, 'tests'); import _draft_latency; _draft_latency.install(); "
    "from tui.cli import main; sys.exit(main(sys.argv[1:]))"
)


def latencies(n: int = 60) -> list[float]:
    return [round(3.0 + (i % 7) * 0.25, 2) for i in range(n)]


def write_log(path: Path) -> Path:
    lines = [
        f"2026-11-20 10:{i // 60:02d}:{i % 60:02d} BENCHSPEC accepted={20 + i % 5} drafted=40 steps=10 "
        f"draft latency: {x} ms"
        for i, x in enumerate(latencies())
    ]
    path.write_text("\n".join(lines) + "\n")
    return path
