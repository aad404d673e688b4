"""Debian's Prometheus started on 127.0.0.1 for a test, scraping the given targets every second
(the fleet and exporter end-to-end tests). With CI=true a missing binary fails the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from _ssh_util import free_port
from _wait import wait_until


def binary(name: str) -> str:
    """The path of Debian's ``prometheus`` package's program ``name`` (prometheus, promtool); with
    CI=true a missing one fails the test (it must run), else it is skipped."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {name} is not installed (Debian package prometheus): the test must run")
        pytest.skip(f"{name} is not installed (apt-get install prometheus)")
    return path


def prometheus_binary() -> str:
    return binary("prometheus")


def promtool_binary() -> str:
    return binary("promtool")


def scrape_config(
    jobs: list[tuple[str, str, dict[str, str], str]], rule_files: list[str] | None = None
) -> str:
    """prometheus.yml scraping each (job, host:port, labels, metrics path) every second (and
    evaluating ``rule_files`` every second)."""
    out = ["global:", "  scrape_interval: 1s", "  evaluation_interval: 1s"]
    if rule_files:
        out += ["rule_files:", *(f"  - {json.dumps(f)}" for f in rule_files)]
    out.append("scrape_configs:")
    for job, target, labels, path in jobs:
        out += [
            f"  - job_name: {job}",
            "    scrape_interval: 1s",
            "    scrape_timeout: 1s",
            f"    metrics_path: {path}",
            "    static_configs:",
            f"      - targets: ['{target}']",
        ]
        if labels:
            out.append("        labels:")
            out += [f"          {k}: {json.dumps(v)}" for k, v in labels.items()]
    return "\n".join(out) + "\n"


class Prometheus:
    def __init__(self, port: int, log: Path, prefix: str = "", basic: tuple[str, str] | None = None) -> None:
        self.port, self.log, self.prefix, self.basic = port, log, prefix, basic

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def query(self, promql: str) -> list[dict]:
        req = urllib.request.Request(f"{self.url}/api/v1/query?query={quote(promql)}")
        if self.basic is not None:
            import base64

            token = base64.b64encode(f"{self.basic[0]}:{self.basic[1]}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(req, timeout=5) as r:
            data = json.loads(r.read())
        assert data["status"] == "success", data
        return data["data"]["result"]

    def value(self, promql: str) -> float | None:
        """The single value of an instant query (None: no result yet, or Prometheus not up)."""
        try:
            got = self.query(promql)
        except OSError:
            return None
        return float(got[0]["value"][1]) if len(got) == 1 else None

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]


@contextmanager
def running_prometheus(
    tmp_path: Path,
    jobs: list[tuple[str, str, dict[str, str], str]],
    rules: str | None = None,
    prefix: str = "",
    basic: tuple[str, str] | None = None,
):
    """Prometheus scraping ``jobs`` (see :func:`scrape_config`), ready when its API answers;
    ``rules``: a rules file's text it loads and evaluates every second; ``prefix``: its
    ``--web.route-prefix``; ``basic``: a user and password its web config requires (bcrypt)."""
    binary = prometheus_binary()
    files = []
    if rules is not None:
        (tmp_path / "rules.yml").write_text(rules)
        files.append(str(tmp_path / "rules.yml"))
    (tmp_path / "prometheus.yml").write_text(scrape_config(jobs, files))
    port = free_port()
    log_path = tmp_path / "prometheus.log"
    extra = (
        [f"--web.route-prefix={prefix}", f"--web.external-url=http://127.0.0.1:{port}{prefix}"]
        if prefix
        else []
    )
    if basic is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt

            hashed = crypt.crypt(basic[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))
        (tmp_path / "web.yml").write_text(f"basic_auth_users:\n  {basic[0]}: {json.dumps(hashed)}\n")
        extra.append(f"--web.config.file={tmp_path / 'web.yml'}")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                *extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
        prom = Prometheus(port, log_path, prefix, basic)
        try:

            def ready() -> bool:
                assert proc.poll() is None, prom.tail()
                return prom.value("vector(1)") is not None

            wait_until(ready, what="Prometheus's API", show=prom.tail, step=0.1)
            yield prom
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def history_of(url: str, labels: dict[str, str], auth):
    """One vLLM instance read whole by the history source the fleet screen opens (through
    ``auth``, a :class:`tui.core.sources.prom.api.PromAuth`): the driver it fed."""
    import asyncio

    from tui.core.fleet.fetch import fleet_families
    from tui.core.pipeline.follow import Followed
    from tui.core.sources.base import LineBatch
    from tui.core.sources.prom.history import PromHistorySource

    names = next(n for n in fleet_families() if n.family == "vllm")
    drv = Followed("one")

    async def run() -> None:
        src = PromHistorySource("one", url, names, labels, window=300, step=1, follow=False, auth=auth)
        async for b in src:
            if isinstance(b, LineBatch):
                drv.feed(b)
            else:
                assert b.kind.value != "error", b.message
        await src.aclose()

    asyncio.run(run())
    return drv
