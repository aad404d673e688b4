"""Exit codes a CI gate can trust (issue 31 item 4): ``summary`` of a source with no
speculative-decoding metric exits 2 with the warning on stderr (a text file, an empty file, a
binary file, an endpoint without spec counters, a window outside the log); ``--allow-empty``
makes that 0 for scripts that want it."""

from __future__ import annotations

import shutil

import pytest
from _cli_util import ROOT, run_cli
from _prom_util import PromServer

GOOD = ROOT / "sample_logs" / "ab_a.log"
NO_SPEC = '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3\n'


def _summary(*args: str):
    return run_cli("summary", "--duration", "0", *args)


@pytest.fixture(scope="module")
def endpoint():
    server = PromServer(lambda: NO_SPEC).start()
    try:
        yield f"metrics+http://127.0.0.1:{server.port}/metrics"
    finally:
        server.stop()


@pytest.mark.parametrize("what", ["text", "empty", "binary", "endpoint"])
def test_no_metric_is_exit_2_with_the_warning_on_stderr(tmp_path, endpoint, what) -> None:
    source = {
        "text": str(ROOT / "README.md"),
        "empty": str(tmp_path / "empty.log"),
        "binary": str(tmp_path / "ls"),
        "endpoint": endpoint,
    }[what]
    (tmp_path / "empty.log").write_bytes(b"")
    shutil.copy(shutil.which("ls") or "/bin/ls", tmp_path / "ls")
    words = {
        "text": "no speculative-decoding metric found",
        "empty": "empty (0 lines read)",
        "binary": "does not look like a text log",
        "endpoint": "without spec-decode counters",
    }[what]
    for fmt in ("text", "json", "markdown"):
        out = _summary("--format", fmt, source)
        assert out.returncode == 2, (fmt, out.stderr)
        assert words in out.stderr and "warning" in out.stderr
    allowed = _summary("--allow-empty", source)
    assert allowed.returncode == (2 if what == "binary" else 0), (
        allowed.stderr
    )  # not a text log stays an error
    assert words in allowed.stderr  # still said


def test_a_one_line_log_is_one_line_read(tmp_path) -> None:
    (tmp_path / "one.log").write_bytes(b"not a server line\n")
    out = _summary(str(tmp_path / "one.log"))
    assert out.returncode == 2 and "(1 line read, no metric line)" in out.stderr, out.stderr
    assert (
        "1 line read, no metric line; formats read" in out.stdout and "1 lines" not in out.stdout + out.stderr
    )


def test_a_good_log_beside_an_empty_one_still_fails(tmp_path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    assert _summary(str(GOOD)).returncode == 0
    assert _summary(str(GOOD), str(tmp_path / "empty.log")).returncode == 2
    assert _summary("--allow-empty", str(GOOD), str(tmp_path / "empty.log")).returncode == 0


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_window_outside_the_log_says_its_range(tmp_path, suffix) -> None:
    import gzip

    log = tmp_path / ("old.log" + suffix)
    data = GOOD.read_bytes()
    log.write_bytes(gzip.compress(data) if suffix else data)
    out = _summary("--since=-2h", str(log))
    assert out.returncode == 2
    assert "no line in the window" in out.stderr and "the log's stamps run from 20" in out.stderr
