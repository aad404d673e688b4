"""The exporter with a log that mixes valid values with ``1e308``, NaN, −1 and 99 (issue 23): every
series it serves and every alert it raises are those of the same log without those lines; only
the refusal counters (and the counts of lines and records read) tell them apart."""

from __future__ import annotations

import io

from _export_util import Running
from _refused_util import generated_log

from tui.cli.alert_args import Alerting
from tui.core.alerts.engine import AlertEngine, parse_rule

RULES = ("accept_len<2.0 for 30s", "accept_len>50", "accept_len<1.2", "accept_rate>0.9", "drift")
COUNTS = ("refused", "lines", "records", "age_seconds", "malformed")


async def served(lines: list[str], where) -> tuple[dict, list[str]]:
    where.mkdir()
    path = where / "server.log"
    path.write_text("".join(lines))
    err = io.StringIO()
    alerting = Alerting(AlertEngine([parse_rule(r) for r in RULES]))
    async with Running([str(path)], err=err, alerting=alerting) as run:
        await run.wait_records([len(lines)])
        got = await run.scrape()
    where_text = str(where) + "/"
    kept = {
        (name, frozenset((k, x.replace(where_text, "")) for k, x in labels)): v
        for (name, labels), v in got.items()
        if name.startswith("specwatch_") and not any(c in name for c in COUNTS)
    }
    said = [x.replace(where_text, "") for x in err.getvalue().splitlines() if "alert" in x.lower()]
    return kept, said


async def test_refused_values_change_no_series_and_no_alert(tmp_path):
    mixed, clean = generated_log(4)
    want, want_said = await served(clean, tmp_path / "clean")
    got, said = await served(mixed, tmp_path / "mixed")
    assert want_said and said == want_said
    assert len(want) > 20 and got.keys() == want.keys()
    assert {k for k in want if abs(got[k] - want[k]) > 1e-9 * max(1.0, abs(want[k]))} == set()
