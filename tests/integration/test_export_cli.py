"""``specwatch export`` as a subprocess: the daemon serves and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from _cli_util import ROOT
from _export_util import SAMPLES, one, scraped_when_read

from tui.core.pipeline.whole import summarize_file

# `specwatch ...` whether or not the command is registered in tui.cli yet
CLI = (
    "import sys, tui.cli as c\n"
    "if 'tui.cli.export' not in [m for _, m in c.COMMANDS]: c.COMMANDS.append(('export', 'tui.cli.export'))\n"
    "raise SystemExit(c.main(sys.argv[1:]))\n"
)


def test_cli_daemon_serves_and_stops_on_sigterm():
    log = SAMPLES / "ab_a.log"
    ref = summarize_file(str(log), "ab_a.log", workers=1).stats
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "export", "--prometheus", "127.0.0.1:0", str(log)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        got = scraped_when_read(proc, "ab_a.log", ref.records)
        assert one(got, "specwatch_accept_len_mean", source="ab_a.log", rank="all") == pytest.approx(
            ref.current.all.accept_len.mean, rel=1e-12
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
