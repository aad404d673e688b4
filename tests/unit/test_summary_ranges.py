"""summary_threads.ranges: chunk boundaries at line ends, found with small reads; a line longer than
a line may be at a boundary gives None (the file is then read in order)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.pipeline.ranges import ranges
from tui.core.sources.base import MAX_LINE_BYTES


def _ranges(data: bytes, size: int, tmp_path: Path) -> list[tuple[int, int]] | None:
    p = tmp_path / "log"
    p.write_bytes(data)
    with open(p, "rb") as f:
        return ranges(f, size)


def _expected(data: bytes, size: int) -> list[tuple[int, int]] | None:
    """The boundaries by definition: each chunk ends at the first line end at or after
    ``start + size``, when that line end is within MAX_LINE_BYTES."""
    out, start = [], 0
    while start < len(data):
        end = min(start + size, len(data))
        if end < len(data):
            nl = data.find(b"\n", end, end + MAX_LINE_BYTES)
            if nl < 0:
                if end + MAX_LINE_BYTES < len(data):
                    return None
                nl = len(data) - 1
            end = nl + 1
        out.append((start, end))
        start = end
    return out


@pytest.mark.parametrize("long", [0, 5000, 70_000, MAX_LINE_BYTES - 10, MAX_LINE_BYTES + 10])
@pytest.mark.parametrize("final_newline", [True, False])
def test_ranges_at_line_ends(tmp_path: Path, long: int, final_newline: bool) -> None:
    lines = [b"x" * (i * 37 % 300) for i in range(4000)]
    lines[1500] = b"y" * long
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    size = 64 << 10
    got = _ranges(data, size, tmp_path)
    assert got == _expected(data, size)
    if got is not None:
        assert got[0][0] == 0 and got[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in zip(got, got[1:]))
        assert all(data[e - 1 : e] == b"\n" for _, e in got[:-1])
    else:
        assert long > MAX_LINE_BYTES


def test_unterminated_tail_within_max_line(tmp_path: Path) -> None:
    data = b"a\n" * 10 + b"z" * 3000
    assert _ranges(data, 8, tmp_path) == _expected(data, 8)
    assert _expected(data, 8) is not None


def test_ranges_on_empty_file(tmp_path: Path) -> None:
    assert _ranges(b"", 16, tmp_path) == []
