"""The signal matrix: {the app, summary of a local file, summary over SSH (a real sshd), stream,
export, fleet (its Prometheus never answering)} × {SIGINT, SIGTERM, SIGHUP} × {during start-up, running, while shutting down}, each cell
run :data:`REPEATS` times: 162 runs, about 2–4 minutes on the shared 2-core machine (a race shows up
as one bad run among them; bench/bench_signal_matrix.py runs 50 per cell, start-up signals
spread over a random second). Every run: exit status 128 + signal, exactly one line (``specwatch CMD:
interrupted`` / ``stopped by SIGNAME``), no traceback, no process left; the app (in tmux) leaves
the terminal as it found it: out of the alternate screen, mouse reporting off, the same title.
The phases are described in tests/_signal_util.py.

With CI=true a missing tmux or sshd fails; elsewhere those cells are skipped.
"""

from __future__ import annotations

import signal

import pytest
from _signal_util import PHASES, SIGNALS, big_log, first_signal, run_app, run_process

REPEATS = 3

CELLS = [(phase, sig) for phase in PHASES for sig in SIGNALS]
IDS = [f"{phase}-{signal.Signals(sig).name}" for phase, sig in CELLS]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """One large log for every summary cell (it takes seconds to scan: stopped while running)."""
    return big_log(tmp_path_factory.mktemp("big") / "big.log")


def _check(runs: list, command: str, sig: int, phase: str) -> None:
    first = first_signal(sig, phase)
    # shutdown, even repeats: both signals sent at once (see tests/_signal_util.py)
    alt = [sig if phase == "shutdown" and i % 2 == 0 else None for i in range(len(runs))]
    bad = [(i, o.problems(command, first, alt[i])) for i, o in enumerate(runs)]
    bad = [(i, p) for i, p in bad if p]
    assert not bad, f"{len(bad)} of {len(runs)} runs not clean: {bad}"


@pytest.mark.parametrize("phase,sig", CELLS, ids=IDS)
@pytest.mark.parametrize("command", ["summary", "stream", "export", "fleet"])
def test_local_commands(tmp_path, big, command, phase, sig):
    runs = []
    for i in range(REPEATS):
        d = tmp_path / str(i)
        d.mkdir()
        if command == "summary":
            (d / "big.log").symlink_to(big)
        runs.append(run_process(command, sig, phase, d, repeat=i))
    _check(runs, command, sig, phase)


@pytest.mark.parametrize("phase,sig", CELLS, ids=IDS)
def test_summary_over_ssh(home, tmp_path, big, phase, sig):
    runs = []
    for i in range(REPEATS):
        d = tmp_path / str(i)
        d.mkdir()
        (d / "big.log").symlink_to(big)
        runs.append(run_process("summary-ssh", sig, phase, d, repeat=i, home=home))
    _check(runs, "summary", sig, phase)


@pytest.mark.parametrize("phase,sig", CELLS, ids=IDS)
def test_app(tmux, tmp_path, phase, sig):
    runs = []
    for i in range(REPEATS):
        d = tmp_path / str(i)
        d.mkdir()
        runs.append(run_app(tmux, sig, phase, d, repeat=i))
    _check(runs, "watch", sig, phase)
