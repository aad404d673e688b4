"""A file the follower may not read is one clear error (the follower in a child process, without
the capabilities that let root read anything)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from _ci import missing
from _cli_util import ROOT
from _sources_util import seq_lines


def test_permission_denied_is_a_clear_error(tmp_path):
    """In a child process; as root, without the capabilities that let root read anything."""
    p = tmp_path / "secret.log"
    p.write_text(seq_lines(1, 2))
    p.chmod(0o000)
    code = (
        "import asyncio, sys; from tui.core.sources.file import FileSource\n"
        "async def main():\n"
        "    async for b in FileSource(sys.argv[1], follow=True, idle_after=None):\n"
        "        print(b.kind.value, b.data.get('fatal'), b.message)\n"
        "asyncio.run(main())\n"
    )
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            missing("running as root and util-linux setpriv is missing")
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]
    r = subprocess.run(
        prefix + [sys.executable, "-c", code, str(p)],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"error True permission denied: cannot read {p}"
