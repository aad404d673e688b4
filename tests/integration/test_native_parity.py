"""``SPECWATCH_NATIVE=0`` (the pure-Python scanner and reduction) prints exactly what the C
extensions print: the full ``summary --json`` stdout, byte for byte, of every sample, real and
format log, each read by the CLI in a subprocess with the switch on and off."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from _native_util import require_native
from _summary_snapshot import ROOT, snapshot_files

from tui.core import native


def _summary(files: list[str], switch: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, native.ENV: switch}
    return subprocess.run(
        [sys.executable, "-m", "tui", "summary", "--json", "--allow-empty", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=300,
    )


def test_summary_json_is_byte_identical_without_the_native_code() -> None:
    if native.load("tui.core.formats._fastscan") is None or native.load("tui.core.stats._reduce") is None:
        require_native("the C extensions")
    files = snapshot_files()
    assert len(files) >= 40  # every sample_logs/, tests/fixtures/real_logs/ and formats/ file
    with_c, without = _summary(files, "1"), _summary(files, "0")
    assert with_c.returncode == without.returncode == 0, (with_c.stderr[-2000:], without.stderr[-2000:])
    sources = json.loads(with_c.stdout)["sources"]
    assert len(sources) == len(files)
    if with_c.stdout != without.stdout:  # name the first file that differs, then fail on the bytes
        for path, a, b in zip(files, sources, json.loads(without.stdout)["sources"]):
            assert a == b, path
    assert with_c.stdout == without.stdout


def test_the_switch_keeps_the_extensions_unloaded() -> None:
    code = (
        "import sys; from tui.cli import main; sys.argv = ['specwatch', 'summary', '--json', sys.argv[1]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.rsplit('.', 1)[-1] in ('_fastscan', '_reduce')), file=sys.stderr)"
    )
    log = snapshot_files()[0]
    for switch, want in (("0", "[]"), ("1", "['tui.core.formats._fastscan', 'tui.core.stats._reduce']")):
        if switch == "1" and native.load("tui.core.stats._reduce") is None:
            require_native("the C extensions")
        out = subprocess.run(
            [sys.executable, "-c", code, log],
            cwd=ROOT,
            env={**os.environ, native.ENV: switch},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stderr.strip().splitlines()[-1] == want, switch
