"""Benchmark SSH sources over Debian's OpenSSH sshd on loopback (run by hand, as root or as a
user who may start sshd on a high port).

    python bench/bench_ssh.py [--rate 1000] [--seconds 10] [--streams 32] [--stream-rate 50]

An sshd is started on 127.0.0.1 with its own keys and config (as in the tests), and a temporary
HOME holds ``~/.ssh/config`` with a ``Host benchbox`` alias, the key and known_hosts, so
``specwatch stream --jsonl benchbox:/path`` runs exactly as a user runs it.

1. **Latency**: a writer appends SGLang ``Decode batch`` lines at ``--rate`` lines/s (one write per
   line), each carrying its sequence number (``#running-req``) and write time in microseconds
   (``#token``); a reader thread stamps each JSON record when it appears on stdout.
   Reported: p50 / p99 / max, lines lost or duplicated. Target: p99 < 200 ms at 1,000 lines/s.
2. **CPU**: one ``specwatch stream --jsonl`` process following ``--streams`` remote files (one
   shared connection), each written at ``--stream-rate`` lines/s. Reported: the process's CPU
   time / wall time (from /proc), and the remote side's (sshd session, tail and the status
   loops), which on a real setup runs on the GPU host. Target: < 50 % of one core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _latency import LatencyReader, line, pct  # bench/ is the script's directory, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _ssh_util import Sshd, _children, user_home  # noqa: E402


def cpu_seconds(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total / tick


_MAIN = (
    "import faulthandler, signal, sys; faulthandler.register(signal.SIGUSR1); "
    "from tui.cli import main; sys.exit(main())"
)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, as a user's Ctrl-C; if it does not end in 10 s, dump its stacks and kill it."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.send_signal(__import__("signal").SIGUSR1)
        time.sleep(1)
        proc.kill()
        proc.wait()
        print(
            "stream did not stop on SIGTERM:",
            proc.stderr.read().decode()[-5000:] if proc.stderr else "",
            file=sys.stderr,
        )


def stream(home: Path, paths: list[str], local: bool = False) -> subprocess.Popen:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            _MAIN,
            "stream",
            "--jsonl",
            "--idle",
            "0",
            *[p if local else f"benchbox:{p}" for p in paths],
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )


def latency(home: Path, d: Path, rate: float, seconds: float) -> dict:
    path = d / "live.log"
    path.write_text("")
    n = int(rate * seconds)
    proc = stream(home, [str(path)])
    reader = LatencyReader(proc, n)
    got = reader.got
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    start = time.monotonic()
    for i in range(n):
        wait = start + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        os.write(fd, line(i).encode())
    os.close(fd)
    reader.done.wait(15)
    stop(proc)
    lat = list(got.values())
    return {
        "rate": rate,
        "lines": n,
        "received": len(got),
        "lost": n - len(got),
        "duplicated": reader.dupes,
        "p50_ms": round(statistics.median(lat), 2) if lat else None,
        "p99_ms": round(pct(lat, 99), 2) if lat else None,
        "max_ms": round(max(lat), 2) if lat else None,
    }


def cpu(
    home: Path,
    d: Path,
    sshd: Sshd,
    streams: int,
    rate: float,
    seconds: float,
    warmup: float = 4.0,
    local: bool = False,
) -> dict:
    paths = [d / f"{'local' if local else 'gpu'}{i:02d}.log" for i in range(streams)]
    for p in paths:
        p.write_text("")
    proc = stream(home, [str(p) for p in paths], local)
    records = [0]
    opened = [0]

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            if b'"record"' in raw[:20]:
                records[0] += 1
            elif b'"opened"' in raw:
                opened[0] += 1

    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + 30
    while opened[0] < streams and time.time() < deadline:
        time.sleep(0.05)
    fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]
    halt = threading.Event()
    written = [0]

    def writer() -> None:  # lines spread evenly over the streams, streams x rate lines/s in total
        total = streams * rate
        i = 0
        start = time.monotonic()
        while not halt.is_set():
            wait = start + i / total - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            os.write(fds[i % streams], line(i).encode())
            i += 1
            written[0] = i

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(warmup)
    remote = [p for p in _children(sshd.proc.pid)]
    c0, r0, w0, n0 = cpu_seconds([proc.pid]), cpu_seconds(remote), time.monotonic(), records[0]
    time.sleep(seconds)
    remote_now = [p for p in _children(sshd.proc.pid)]
    c1, r1, w1, n1 = cpu_seconds([proc.pid]), cpu_seconds(remote_now), time.monotonic(), records[0]
    halt.set()
    t.join()
    time.sleep(1.0)
    for fd in fds:
        os.close(fd)
    stop(proc)
    wall = w1 - w0
    conns = (sshd.d / "sshd.log").read_text().count("Accepted publickey")
    return {
        "streams": streams,
        "lines_per_s_each": rate,
        "records_per_s": round((n1 - n0) / wall, 1),
        "cpu_percent_of_one_core": round(100 * (c1 - c0) / wall, 1),
        "remote_cpu_percent": round(100 * (r1 - r0) / wall, 1),
        "received": records[0],
        "written": written[0],
        "ssh_logins": conns,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--streams", type=int, default=32)
    ap.add_argument("--stream-rate", type=float, default=50.0)
    ap.add_argument(
        "--compare-local",
        action="store_true",
        help="also measure the same files followed locally (the parsing/statistics/JSON share)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="specwatch-bench-ssh-") as tmp:
        d = Path(tmp)
        (d / "sshd").mkdir()
        sshd = Sshd(d / "sshd")
        sshd.start()
        try:
            home = user_home(d / "home", sshd, alias="benchbox")
            lat = latency(home, d, args.rate, args.seconds)
            print(json.dumps({"latency": lat}))
            usage = cpu(home, d, sshd, args.streams, args.stream_rate, args.seconds)
            print(json.dumps({"cpu": usage}))
            if args.compare_local:
                print(
                    json.dumps(
                        {
                            "cpu_same_files_local": cpu(
                                home, d, sshd, args.streams, args.stream_rate, args.seconds, local=True
                            )
                        }
                    )
                )
        finally:
            sshd.stop()
    ok = (
        lat["p99_ms"] is not None
        and lat["p99_ms"] < 200
        and lat["lost"] == 0
        and lat["duplicated"] == 0
        and usage["cpu_percent_of_one_core"] < 50
    )
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
