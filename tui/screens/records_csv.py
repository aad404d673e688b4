"""``e`` on the watch screen: the records each pane keeps for its charts, as one CSV file (pure
Python; the screen picks the path and says what was written)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tui.core.model import quantities
from tui.core.model.records import format_ts
from tui.core.model.sanitize import csv_writer
from tui.core.stats.rates import normalise_transform
from tui.panes.state import PaneState

# The quantities' columns, in this order (their CSV names from tui.core.model.quantities); the
# quantities registered beyond the built-in ones (a family's own) that the CSV shows follow them.
QUANTITY_COLUMNS = (
    "timestamp",
    "rank",
    "accept_len",
    "accept_rate",
    "accept_rate_normalised",
    "throughput",
    "running_req",
)
ABOUT = ["source", "where", "segment", "config", "record", "line_no"]


def csv_fields() -> list[str]:
    """The header: what each row is about, then the quantities (``rank`` and the normalised rate
    are the pane's, not quantities of their own)."""
    cols = [c if (q := quantities.find(c)) is None else str(q.csv) for c in QUANTITY_COLUMNS]
    return ABOUT + cols + [str(q.csv) for q in _added_csv()]


def _added_csv() -> list[quantities.Quantity]:
    return [q for q in quantities.added() if q.csv is not None and q.shown_in(quantities.Output.CSV)]


CSV_FIELDS = csv_fields()  # the built-in header (a quantity registered later: csv_fields())


def write_records(path: Path, states: Sequence[PaneState]) -> int:
    """Write every pane's kept records (its history) to ``path``, creating its directory; returns
    the number of rows. ``accept_rate_normalised`` is (accept len − 1) / D with the D of the
    record's segment, empty where D is unknown. Raises OSError when the file cannot be written."""
    rows = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv_writer(f)  # every cell inert (control characters, spreadsheet formulas)
        w.writerow(csv_fields())
        order = {q.name: i for i, q in enumerate(quantities.added())}
        extra = [order[q.name] for q in _added_csv()]
        for st in states:
            transforms: dict[int, tuple] = {}
            for p in list(st.history):
                if p.segment not in transforms:
                    seg = st.segment(p.segment)
                    tr = normalise_transform(seg.rate_definition().drafts_per_step) if seg else None
                    transforms[p.segment] = (tr, (seg.label or seg.config.label()) if seg else "")
                tr, config = transforms[p.segment]
                norm = "" if tr is None or p.accept_len is None else f"{tr[0] + tr[1] * p.accept_len:.6g}"
                w.writerow(
                    [
                        st.label,
                        st.where,
                        p.segment,
                        config,
                        p.seq,
                        p.line_no,
                        format_ts(p.timestamp) or "",
                        p.rank or "",
                        _v(p.accept_len),
                        _v(p.accept_rate),
                        norm,
                        _v(p.throughput),
                        _v(p.running_req),
                        *(_v(p.more[i] if p.more is not None and i < len(p.more) else None) for i in extra),
                    ]
                )
                rows += 1
    return rows


def _v(x) -> str:
    return "" if x is None else f"{x:g}" if isinstance(x, float) else str(x)
