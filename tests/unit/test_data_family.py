"""A family is a folder of data: one defined only under tests/families/ (a TGI-like router line,
found through a ``specwatch.formats`` entry point the test writes) is read by ``summary`` and
``stream``, with the native fast path, and the native scanner reads every family's declared
shapes exactly as the Python scanner does (hypothesis, lines drawn from the shapes themselves).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _hypothesis_util import examples
from _shape_lines import line
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from tests._cli_util import run_cli
from tui.core.formats import fastscan, grammar
from tui.core.formats.families import FAMILIES

ROOT = Path(__file__).resolve().parents[2]
FAMILY_DIR = ROOT / "tests" / "families"
TGI = (
    "2026-03-02T10:00:{s:02d}.{us:06d}Z  INFO text_generation_router: speculative: "
    "accepted={a} drafted={d} requests={r}"
)


def _column(c) -> list:
    return [None if (isinstance(x, float) and math.isnan(x)) else x for x in c]


def _view(sc) -> object:
    """A scan as plain data (NaN as None), to compare the two scanners."""
    if sc is None:
        return None
    runs = [
        (
            rc.family,
            rc.kind,
            rc.n,
            list(rc.line_nos) if rc.line_nos is not None else None,
            {k: _column(v) for k, v in rc.values.items()},
            list(rc.ranks) if rc.ranks is not None else None,
            [tuple(p) if p is not None else None for p in rc.per_position]
            if rc.per_position is not None
            else None,
            rc.rate_definition,
        )
        for rc in sc.runs
    ]
    e = sc.edge
    edge = (
        None
        if e is None
        else (e.family, e.process, e.head_unpaired, e.tail, e.first_stamp, e.last_md, e.year)
    )
    return sc.lines, runs, edge


def native_equals_python(buf: bytes, year: int = 2026) -> bool:
    """The native scan of ``buf`` equals the Python one whenever the native scanner answers
    (False: it leaves the buffer to the Python scanner); True when it read it."""
    r = fastscan._native.scan(buf, year)
    py = fastscan._scan_python(buf, year)
    if r is False:
        return False
    nat = None if r is None else fastscan._from_native(r, year)
    assert _view(nat) == _view(py)
    return nat is not None


def _family_lines(fi: int) -> st.SearchStrategy[bytes]:
    shapes = [s.shape for s in fastscan._SHAPES if s.family == fi]
    one = st.one_of(*(line(s) for s in shapes))
    return st.lists(one, min_size=1, max_size=6).map(lambda ls: ("\n".join(ls) + "\n").encode())


SHAPED = [i for i, f in enumerate(FAMILIES) if f.data.shapes]


@pytest.mark.skipif(fastscan._native is None, reason="the native scanner is not built")
@pytest.mark.parametrize("fi", SHAPED, ids=lambda i: FAMILIES[i].name)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_native_reads_every_declared_shape_as_python_does(fi, data):
    native_equals_python(data.draw(_family_lines(fi)))


@pytest.mark.skipif(fastscan._native is None, reason="the native scanner is not built")
@pytest.mark.parametrize("fi", SHAPED, ids=lambda i: FAMILIES[i].name)
def test_every_shipped_shape_is_read_natively(fi):
    """The property above exercises the native reading, not only its refusals. The first buffer
    found is checked as drawn (no shrinking: hypothesis spent ~15 s a family making it minimal,
    which this check does not need)."""
    records = [s.shape for s in fastscan._SHAPES if s.family == fi and not s.pairs]
    lines = st.lists(st.one_of(*(line(s) for s in records)), min_size=1, max_size=3)
    buf = find(
        lines.map(lambda ls: ("\n".join(ls) + "\n").encode()),
        lambda b: isinstance(fastscan._native.scan(b, 2026), tuple) and fastscan._native.scan(b, 2026)[3] > 0,
        settings=settings(max_examples=2000, database=None, phases=[Phase.generate]),
    )
    assert native_equals_python(buf)


def _env(tmp_path: Path) -> dict[str, str]:
    """An environment where the tests' family is installed: its folder on the path and a
    distribution whose entry point names it (what ``pip install`` of a plug-in would write)."""
    dist = tmp_path / "site" / "tgi_like_family-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tgi-like-family\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[specwatch.formats]\ntgi_like = tgi_like\n")
    return {"PYTHONPATH": os.pathsep.join([str(ROOT), str(FAMILY_DIR), str(tmp_path / "site")])}


def _log(tmp_path: Path, n: int = 300) -> Path:
    lines = []
    for i in range(n):
        d = 10 + i % 90
        lines.append(TGI.format(s=i % 60, us=i * 7 % 1000000, a=d // 2, d=d, r=1 + i % 4))
        lines.append("2026-03-02T10:00:00.000001Z  INFO text_generation_router::server: request done")
    p = tmp_path / "tgi.log"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_a_family_of_data_only_is_read_by_summary_and_stream(tmp_path):
    env = _env(tmp_path)
    log = _log(tmp_path)
    out = {}
    for native in ("1", "0"):
        r = run_cli("summary", "--json", str(log), env={**env, "SPECWATCH_NATIVE": native})
        assert r.returncode == 0, r.stderr
        out[native] = json.loads(r.stdout)
    assert out["1"] == out["0"]
    src = out["1"]["sources"][0]
    assert src["family"] == "tgi_like" and src["records"] == 300 and src["lines"] == 600
    accepted = sum((10 + i % 90) // 2 for i in range(300))
    drafted = sum(10 + i % 90 for i in range(300))
    assert src["accept_rate"]["pooled"]["value"] == pytest.approx(accepted / drafted)
    r = run_cli("stream", "--jsonl", "--no-follow", str(log), env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    recs = [x for x in recs if x.get("family") == "tgi_like"]
    assert len(recs) == 300 and recs[0]["accepted"] == 5 and recs[0]["drafted"] == 10


def test_a_family_of_data_only_gets_the_fast_path_and_the_property(tmp_path):
    """In a process where the family is installed: the native scanner reads its buffers (no
    refusal), equal to the Python scanner and to the line parser, on lines hypothesis draws
    from its declared shape."""
    from _native_util import require_native

    if not fastscan.native_scanner():
        require_native("the native scanner")
    env = _env(tmp_path)
    log = _log(tmp_path, 100)
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r}); sys.path.insert(0, {str(ROOT / "tests" / "unit")!r})
        from hypothesis import given, settings, HealthCheck, strategies as st
        from tui.core.formats import fastscan, LineParser
        from tui.core.formats.families import FAMILIES
        from tui.core.model.columns import RecordColumns
        from tui.core.model.records import Record
        from test_data_family import native_equals_python, _family_lines, _view
        assert fastscan.native_scanner()
        fi = [f.name for f in FAMILIES].index("tgi_like")
        buf = open({str(log)!r}, "rb").read()
        r = fastscan._native.scan(buf, 2026)
        assert isinstance(r, tuple) and r[3] == 100, r
        assert native_equals_python(buf)

        @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.data())
        def prop(data):
            b = data.draw(_family_lines(fi))
            native_equals_python(b)
            sc = fastscan.scan_chunk(b, 2026)
            if sc is None:
                return
            p = LineParser("x", year=2026)
            recs = [p.feed(ln, i + 1, 0) for i, ln in enumerate(b.decode().split("\\n")[:-1])]
            recs = [x for x in recs if isinstance(x, Record)]
            assert len(recs) == sum(rc.n for rc in sc.runs)
            if recs:
                want = RecordColumns.from_records(recs)
                assert [list(map(repr, want.values[k])) for k in ("accepted", "drafted", "running_req", "timestamp")] == [
                    list(map(repr, sc.runs[0].values[k])) for k in ("accepted", "drafted", "running_req", "timestamp")
                ]
        prop()
        print("ok")
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-4000:]


def test_family_data_mistakes_are_said_with_their_place(tmp_path):
    from tui.core.formats.family_data import FamilyDataError, load

    (tmp_path / "family.toml").write_text(
        'name = "x"\ndisplay = "X"\n[anchors]\nmain = "hello:"\n[prefixes]\np = []\n'
        '[[shapes]]\nkind = "k"\nanchor = "main"\nprefix = "p"\nbody = [{ number = "hex" }]\n'
    )
    with pytest.raises(FamilyDataError, match=r"(?s)family.toml.*shapes\.0\.body\.0\.number"):
        load(tmp_path)
    assert grammar.ANCHORS  # the shipped families load


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_family_file_passes_the_schema_and_reads_the_same_without_it(family):
    """The bundled files are checked here (a headless start reads them without pydantic): the
    schema accepts each, and the plain reader gives every field the schema gives, defaults too."""
    import dataclasses
    import tomllib

    from tui.core.formats.family_schema import FamilyData as Schema

    raw = tomllib.loads((family.folder / "family.toml").read_text(encoding="utf-8"))
    assert Schema.model_validate(raw).model_dump() == dataclasses.asdict(family.data)


def test_summary_of_a_file_starts_without_pydantic(tmp_path):
    log = _log(tmp_path, 10)
    code = (
        "import sys, runpy; sys.argv = ['specwatch', 'summary', '--json', %r]\n"
        "try:\n    runpy.run_module('tui', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'\n" % str(log)
    )
    r = run_cli(python=("-c", code))
    assert r.returncode == 0, r.stderr
