"""The behaviour snapshot: what ``summary --json`` says of every bundled log, reduced to the
numbers that a change of code shape must not move (records, n, means, pooled values, segments).

``python -m tests._summary_snapshot`` rewrites ``tests/fixtures/summary_snapshot.json``; do that only
when a change of meaning is intended (and say which in the commit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "fixtures" / "summary_snapshot.json"
METRICS = ("accept_len", "accept_rate", "accept_rate_normalized", "throughput", "running_req")


def snapshot_files() -> list[str]:
    """Every sample log, every real log and every format fixture (the release logs too), as
    paths relative to the repository root."""
    files = (
        sorted(ROOT.glob("sample_logs/*.log"))
        + sorted(ROOT.glob("tests/fixtures/real_logs/*"))
        + sorted(p for p in ROOT.glob("tests/fixtures/formats/*") if p.is_file())
        + sorted(ROOT.glob("tests/fixtures/formats/releases/*.log"))
    )
    return [str(p.relative_to(ROOT)) for p in files]


def _metric(m: dict | None) -> dict | None:
    if not m:
        return None
    pooled = m.get("pooled")
    return {
        "n": m.get("n"),
        "mean": m.get("mean"),
        "weighted_mean": m.get("weighted_mean"),
        "min": m.get("min"),
        "max": m.get("max"),
        "pooled": None if not pooled else pooled.get("value", pooled.get("mean")),
    }


def project(source: dict) -> dict:
    """The parts of one source's summary that must not change with the code's shape."""
    out: dict = {
        "records": source.get("records"),
        "malformed": source.get("malformed"),
        "lines": source.get("lines"),
        "family": source.get("family"),
        "refused": source.get("refused"),
    }
    for name in METRICS:
        out[name] = _metric(source.get(name))
    out["segments"] = [
        {
            "index": seg.get("index"),
            "reason": seg.get("reason"),
            "label": seg.get("label"),
            "start_line": seg.get("start_line"),
            "records": seg.get("records"),
            "config": seg.get("config"),
            **{name: _metric(seg.get(name)) for name in METRICS},
            "ranks": None
            if not seg.get("ranks")
            else {rank: _metric(r.get("accept_len")) for rank, r in seg["ranks"].items()},
            "per_position": seg.get("per_position"),
        }
        for seg in source.get("segments", [])
    ]
    return out


def take(run) -> dict:
    """``run(*paths) -> summary JSON`` of every file at once: the projected snapshot, by file."""
    files = snapshot_files()
    sources = run(*files)["sources"]
    assert [s["source"] for s in sources] == files
    return {path: project(s) for path, s in zip(files, sources)}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from tests._cli_util import summary_json

    SNAPSHOT.write_text(
        json.dumps(take(lambda *files: summary_json("--allow-empty", *files)), indent=1, sort_keys=True)
        + "\n"
    )
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
