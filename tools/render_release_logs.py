"""Render the release fixtures (tests/fixtures/formats/releases/) through the servers' own format
strings, read from each release's code, with known counts.

    python tools/render_release_logs.py --fetch /tmp/releases   # pip download + unpack what is read
    python tools/render_release_logs.py --src /tmp/releases     # render from unpacked sources

``--fetch DIR`` runs ``pip download --no-deps`` for each release (vLLM / SGLang wheels, the
llama-cpp-python sdist, which bundles llama.cpp's source), keeps only the files read here under
``DIR/<package>-<version>/`` and deletes the download. Each fixture's first line (``# source:``, a
line no server prints) names the release and the file:line of every format string it was
rendered with; ``expected.json`` holds, per fixture, the values worked out here from the counts
themselves (never from specwatch): records, the mean of the printed accept lengths on the one
scale (with the bonus token), the pooled accept length 1 + Σaccepted / Σsteps, the pooled rate,
the segments. The line prefixes (logger formats) are written here after docs/formats.md ("Line
prefixes"): only the messages come from the release's code.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "formats" / "releases"

# (package, version, files read: globs inside the wheel / sdist)
RELEASES = [
    (
        "vllm",
        "0.4.1",
        [
            "vllm/engine/metrics.py",
            "vllm/entrypoints/openai/api_server.py",
            "vllm/engine/llm_engine.py",
            "vllm/config.py",
        ],
    ),
    (
        "vllm",
        "0.6.3",
        [
            "vllm/engine/metrics.py",
            "vllm/entrypoints/openai/api_server.py",
            "vllm/engine/llm_engine.py",
            "vllm/config.py",
        ],
    ),
    ("vllm", "0.8.5", ["vllm/v1/spec_decode/metrics.py", "vllm/entrypoints/openai/api_server.py"]),
    ("vllm", "0.9.0", ["vllm/v1/spec_decode/metrics.py", "vllm/entrypoints/openai/api_server.py"]),
    ("vllm", "0.11.0", ["vllm/v1/spec_decode/metrics.py", "vllm/entrypoints/openai/api_server.py"]),
    (
        "vllm",
        "0.33.0",
        [
            "vllm/v1/spec_decode/metrics.py",
            "vllm/entrypoints/common/startup.py",
            "vllm/v1/metrics/loggers.py",
        ],
    ),
    ("sglang", "0.4.3", ["sglang/srt/managers/scheduler.py", "sglang/srt/entrypoints/engine.py"]),
    (
        "sglang",
        "0.5.2",
        ["sglang/srt/managers/scheduler_metrics_mixin.py", "sglang/srt/entrypoints/engine.py"],
    ),
    (
        "sglang",
        "0.5.23",
        ["sglang/srt/managers/scheduler_components/metrics_reporter.py", "sglang/srt/entrypoints/engine.py"],
    ),
    (
        "llama-cpp-python",
        "0.3.16",
        [
            "*/vendor/llama.cpp/tools/server/server.cpp",
            "*/vendor/llama.cpp/tools/server/utils.hpp",
            "*/vendor/llama.cpp/common/common.cpp",
        ],
    ),
    (
        "llama-cpp-python",
        "0.3.28",
        [
            "*/vendor/llama.cpp/tools/server/server-context.cpp",
            "*/vendor/llama.cpp/common/speculative.cpp",
            "*/vendor/llama.cpp/common/common.cpp",
            "*/vendor/llama.cpp/tools/server/server-common.h",
        ],
    ),
    (
        "llama-cpp-python",
        "0.3.36",
        [
            "*/vendor/llama.cpp/tools/server/server-context.cpp",
            "*/vendor/llama.cpp/common/speculative.cpp",
            "*/vendor/llama.cpp/common/common.cpp",
            "*/vendor/llama.cpp/tools/server/server.cpp",
            "*/vendor/llama.cpp/tools/server/server-common.h",
            "*/vendor/llama.cpp/common/common.h",
        ],
    ),
]


# -- reading format strings -------------------------------------------------------------------
@dataclass
class Found:
    node: Any
    path: Path
    line: int
    rel: str

    def where(self) -> str:
        return f"{self.rel}:{self.line}"


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _consts(node: ast.JoinedStr) -> str:
    return "".join(v.value for v in node.values if isinstance(v, ast.Constant))


def find_fstring(root: Path, rel: str, needle: str, after: str | None = None) -> Found:
    """The first f-string of ``rel`` whose literal text holds ``needle`` (after the first one
    holding ``after``, when given)."""
    path = root / rel
    nodes = sorted(
        (n for n in ast.walk(_tree(path)) if isinstance(n, ast.JoinedStr)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    if after is not None:
        first = next(i for i, n in enumerate(nodes) if after in _consts(n))
        nodes = nodes[first + 1 :]
    for n in nodes:
        if needle in _consts(n):
            return Found(n, path, n.lineno, rel)
    raise LookupError(f"{needle!r} not in an f-string of {path}")


def render_fstring(f: Found, values: dict[str, Any]) -> str:
    """The f-string with each replacement field's expression (as written in the release's code)
    given its value by ``values``; conversions and format specs as in the code."""
    out = []
    for v in f.node.values:
        if isinstance(v, ast.Constant):
            out.append(v.value)
            continue
        key = ast.unparse(v.value)
        x = values[key]
        if v.conversion == ord("r"):
            x = repr(x)
        elif v.conversion == ord("s"):
            x = str(x)
        spec = "" if v.format_spec is None else _consts(v.format_spec)
        out.append(format(x, spec))
    return "".join(out)


def find_call_format(root: Path, rel: str, needle: str) -> tuple[Found, list[str]]:
    """A logging call whose first argument (a literal, concatenated) holds ``needle``: its
    %-format and its arguments' expressions."""
    path = root / rel
    for n in ast.walk(_tree(path)):
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant):
            fmt = n.args[0].value
            if isinstance(fmt, str) and needle in fmt:
                return Found(fmt, path, n.lineno, rel), [ast.unparse(a) for a in n.args[1:]]
    raise LookupError(f"{needle!r} not in a call of {path}")


def find_string(root: Path, rel: str, needle: str) -> tuple[str, int]:
    """The first string literal of ``rel`` (concatenations joined) holding ``needle``."""
    for n in ast.walk(_tree(root / rel)):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and needle in n.value:
            return n.value, n.lineno
    raise LookupError(needle)


def assignment(root: Path, rel: str, name: str) -> str:
    """The expression ``name`` is assigned in ``rel`` (as written)."""
    for n in ast.walk(_tree(root / rel)):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            return ast.unparse(n.value)
    raise LookupError(name)


_C_LIT = re.compile(r'"((?:[^"\\]|\\.)*)"')


def find_c_format(root: Path, rel: str, needle: str) -> Found:
    """The C string literal (adjacent literals joined) holding ``needle``, as a Python %-format
    (``%zu`` read as ``%d``)."""
    path = root / rel
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if needle in line and '"' in line:
            j, parts = i, []
            while j < len(lines) and (j == i or lines[j].strip().startswith('"')):
                parts += _C_LIT.findall(lines[j])
                j += 1
            fmt = "".join(parts).encode().decode("unicode_escape").rstrip("\n")
            return Found(re.sub(r"%(-?\d*)z[ud]", r"%\1d", fmt), path, i + 1, rel)
    raise LookupError(f"{needle!r} not in {path}")


def c_macro(root: Path, rel: str, name: str) -> tuple[str, str]:
    """The message prefix a logging macro puts before its format (``SRV_INF`` → ``"srv
    %12.*s: "``), as a Python %-format taking the function name, and where it is defined."""
    lines = (root / rel).read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"#define {name}("):
            lit = _C_LIT.findall(line)[0]
            return lit.replace("%12.*s", "%12.12s"), f"{rel}:{i + 1}"
    raise LookupError(name)


# -- counts -------------------------------------------------------------------------------------
@dataclass
class Interval:
    drafts: int  # verify steps x requests
    accepted: int
    drafted: int
    per_pos: list[int] = field(default_factory=list)  # drafts that accepted position i


def intervals(seed: int, n: int, k: int, p: float) -> list[Interval]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        d = rng.randint(40, 400)
        runs = []
        for _ in range(d):
            j = 0
            while j < k and rng.random() < p:
                j += 1
            runs.append(j)
        pos = [sum(1 for r in runs if r > i) for i in range(k)]
        out.append(Interval(d, sum(runs), d * k, pos))
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


# -- vLLM -----------------------------------------------------------------------------------------
def vllm_prefix(version: str, i: int, rel: str, line: int, level: str = "INFO") -> str:
    ts = f"05-01 10:{i // 6:02d}:{i % 6 * 10:02d}"
    base = rel.rsplit("/", 1)[-1]
    if version.startswith(("0.4", "0.6")):
        return f"{level} {ts} {base}:{line}] "
    if version.startswith(("0.8", "0.9")):
        return f"{level} {ts} [{base}:{line}] "
    return f"(APIServer pid=1) {level} {ts} [{base}:{line}] "


DRAFT_MODEL = "/models/llama-68m"
TARGET_MODEL = "meta-llama/Llama-2-7b-chat-hf"


class _Repr:
    """An object whose repr is the given text (a config object as its release prints it)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _filler(conv: str, expr: str) -> Any:
    """A plausible value for a config field the fixture does not care about."""
    if conv == "d":
        return 1
    return None if conv == "r" else "False" if "enable" in expr or "use_" in expr else "None"


def vllm_v0_engine_line(root: Path, version: str, k: int) -> tuple[str, str, int]:
    """The V0 engine's "Initializing an LLM engine (vX) with config: ..." line, with the
    release's own SpeculativeConfig repr (vllm/config.py): what 0.4 / 0.6 say of k."""
    rep = find_fstring(root, "vllm/config.py", "SpeculativeConfig(")
    spec = render_fstring(rep, {"draft_model": DRAFT_MODEL, "num_spec_tokens": k})
    rel = "vllm/engine/llm_engine.py"
    known: dict[str, Any] = {
        "model_config.model": TARGET_MODEL,
        "model_config.tokenizer": TARGET_MODEL,
        "speculative_config": _Repr(spec),
        "vllm.__version__": version,
        "VLLM_VERSION": version,
        "model_config.max_model_len": 4096,
        "parallel_config.tensor_parallel_size": 1,
        "model_config.seed": 0,
    }
    try:
        f = find_fstring(root, rel, "Initializing an LLM engine")
        exprs = [ast.unparse(v.value) for v in f.node.values if not isinstance(v, ast.Constant)]
        values = {e: known.get(e, "None") for e in exprs}
        return render_fstring(f, values), f"{f.where()} + {rep.where()}", f.line
    except LookupError:
        c, args = find_call_format(root, rel, "Initializing an LLM engine")
        convs = re.findall(r"%([srd])", c.node)
        vals = tuple(known.get(a, _filler(cv, a)) for cv, a in zip(convs, args))
        return c.node % vals, f"{c.where()} + {rep.where()}", c.line


def vllm_args_line(root: Path, k: int) -> tuple[str, str, int]:
    """vLLM 0.8's "args: Namespace(...)" line: --speculative-config parsed by json.loads."""
    c, _ = find_call_format(root, "vllm/entrypoints/openai/api_server.py", "args: %s")
    ns = argparse.Namespace(
        host=None,
        port=8000,
        model=TARGET_MODEL,
        tensor_parallel_size=1,
        speculative_config={"model": DRAFT_MODEL, "num_speculative_tokens": k},
        disable_log_stats=False,
    )
    return c.node % (ns,), c.where(), c.line


def version_line(root: Path, version: str) -> tuple[str, str]:
    """vLLM's "vLLM API server version X" startup line (an f-string before 0.5, then %s)."""
    rel = "vllm/entrypoints/openai/api_server.py"
    try:
        f = find_fstring(root, rel, "vLLM API server version")
        return render_fstring(f, {"vllm.__version__": version}), f.where()
    except LookupError:
        c, _ = find_call_format(root, rel, "vLLM API server version")
        return c.node % version, c.where()


def vllm_v0(root: Path, version: str) -> tuple[list[str], dict, list[str]]:
    k = 3
    f = find_fstring(root, "vllm/engine/metrics.py", "Speculative metrics: ")
    vline, vwhere = version_line(root, version)
    eline, ewhere, eno = vllm_v0_engine_line(root, version, k)
    lines, where = [], [f.where(), vwhere, ewhere]
    segs = []
    for seed in (1, 2):  # two runs of the server: counters start from zero again
        lines.append(vllm_prefix(version, 0, "api_server.py", 1) + vline)
        lines.append(vllm_prefix(version, 0, "llm_engine.py", eno) + eline)
        ivs = intervals(seed + int(version[2]) * 10, 6, k, 0.7)
        acc = dr = emit = steps = 0
        derived = []
        for i, iv in enumerate(ivs):
            acc, dr, steps = acc + iv.accepted, dr + iv.drafted, steps + iv.drafts
            emit += iv.accepted + iv.drafts  # prefix-accepted drafts plus the bonus token
            m = type(
                "M",
                (),
                {
                    "draft_acceptance_rate": acc / dr,
                    "system_efficiency": emit / (steps * (k + 1)),
                    "num_spec_tokens": k,
                    "accepted_tokens": acc,
                    "draft_tokens": dr,
                    "emitted_tokens": emit,
                },
            )
            vals = {f"metrics.{a}": getattr(m, a) for a in dir(m) if not a.startswith("_")}
            lines.append(vllm_prefix(version, i + 1, f.rel, f.line) + render_fstring(f, vals))
            derived.append((iv.accepted + iv.drafts) / iv.drafts)
        segs.append(
            {
                "records": len(ivs),
                "accept_len_derived_mean": _mean(derived),
                "pooled_accept_len": 1 + sum(iv.accepted for iv in ivs) / sum(iv.drafts for iv in ivs),
                "pooled_accept_rate": sum(iv.accepted for iv in ivs) / sum(iv.drafted for iv in ivs),
                "system_efficiency_last": round(emit / (steps * (k + 1)), 3),
                "config": {
                    "num_speculative_tokens": k,
                    "draft_model_path": DRAFT_MODEL,
                    "model_path": TARGET_MODEL,
                },
            }
        )
    return lines, {"segments": segs, "version": version}, where


def v1_spec_message(
    f: Found, args: list[str], accepted: int, drafted: int, drafts: int, per_pos: list[int], mal: float
) -> str:
    """A V1 ``SpecDecoding metrics`` message through the release's %-format (interval of 10 s)."""
    vals = {
        "draft_acceptance_rate": accepted / drafted * 100,
        "mean_acceptance_length": mal,
        "accepted_throughput": accepted / 10.0,
        "draft_throughput": drafted / 10.0,
        "num_accepted_tokens": accepted,
        "num_draft_tokens": drafted,
        "rates_str": ", ".join(f"{p / drafts:.3f}" for p in per_pos),
    }
    return f.node % tuple(vals[a] for a in args)


def vllm_v1(root: Path, version: str) -> tuple[list[str], dict, list[str]]:
    k = 3
    (f, args) = find_call_format(root, "vllm/v1/spec_decode/metrics.py", "SpecDecoding metrics: ")
    mal_expr = assignment(root, "vllm/v1/spec_decode/metrics.py", "mean_acceptance_length")
    bonus = mal_expr.replace(" ", "").startswith("1+")
    where = [f.where() + f" (mean_acceptance_length = {mal_expr})"]
    if version == "0.33.0":
        st_rel = "vllm/entrypoints/common/startup.py"
        plain, _ = find_string(root, st_rel, "vLLM server version")
        tmpl, _ = find_string(root, st_rel, "version ${w}")  # the logo's Template text
        logo = Template(tmpl)
        logo_text = logo.substitute(dict.fromkeys("wobr", ""))  # monochrome (no colour codes)
        where.append("vllm/entrypoints/common/startup.py (log_version_and_model: plain and logo)")
        starts = [plain % (version, "meta-llama/Llama-3.1-8B-Instruct"), logo_text % (version, "m")]
    else:
        vline, vwhere = version_line(root, version)
        where.append(vwhere)
        starts = [vline] * 2
    args_line = vllm_args_line(root, k) if version.startswith("0.8") else None
    if args_line is not None:
        where.append(args_line[1])
    lines: list[str] = []
    segs = []
    for seg, seed in enumerate((1, 2)):
        lines.append(vllm_prefix(version, 0, "api_server.py", 1) + starts[seg])
        if args_line is not None:
            lines.append(vllm_prefix(version, 0, "api_server.py", args_line[2]) + args_line[0])
        ivs = intervals(seed + 7, 5, k, 0.3 if seg else 0.75)  # the second run accepts little
        printed = []
        for i, iv in enumerate(ivs):
            mal = (1 + iv.accepted / iv.drafts) if bonus else iv.accepted / iv.drafts
            msg = v1_spec_message(f, args, iv.accepted, iv.drafted, iv.drafts, iv.per_pos, mal)
            lines.append(vllm_prefix(version, i + 1, f.rel, f.line) + msg)
            printed.append(round(float(f"{mal:.2f}") + (0 if bonus else 1), 2))
        segs.append(
            {
                "records": len(ivs),
                "accept_len_mean": _mean(printed),
                "pooled_accept_len": 1 + sum(iv.accepted for iv in ivs) / sum(iv.drafts for iv in ivs),
                "pooled_accept_rate": sum(iv.accepted for iv in ivs) / sum(iv.drafted for iv in ivs),
                "no_bonus_token": not bonus,
                **(
                    {
                        "config": {
                            "num_speculative_tokens": k,
                            "draft_model_path": DRAFT_MODEL,
                            "model_path": TARGET_MODEL,
                        }
                    }
                    if args_line is not None
                    else {}
                ),
            }
        )
    return (
        lines,
        {"segments": segs, "version": version, "throughputs": "Accepted throughput" in f.node},
        where,
    )


def vllm_api_servers(root: Path, version: str) -> tuple[list[str], dict, list[str]]:
    """vLLM >= 0.11 with --api-server-count > 1: the stat logger is never made (a warning from
    StatLoggerManager), so the log has no SpecDecoding line at all."""
    st_rel = "vllm/entrypoints/common/startup.py"
    plain, _ = find_string(root, st_rel, "vLLM server version")
    rel = "vllm/v1/metrics/loggers.py"
    c, _ = find_call_format(root, rel, "disabling stats logging")
    lines = [
        vllm_prefix(version, 0, "startup.py", 1) + plain % (version, TARGET_MODEL),
        vllm_prefix(version, 1, "loggers.py", c.line, "WARNING") + c.node,
    ]
    where = [f"{st_rel} (log_version_and_model)", c.where()]
    return lines, {"version": version, "segments": [{"records": 0}], "no_metrics": True}, where


def vllm_aggregated(root: Path, version: str) -> tuple[list[str], dict, list[str]]:
    """vLLM 0.33 with data-parallel engines and --aggregate-engine-logging: the stats line of the
    AggregatedLoggingStatLogger ("N Engines Aggregated: " before its parts), each engine's
    "Iteration(N)" detail line (Engine NNN: prefix), then the spec line of the whole (no prefix:
    SpecDecodingLogging.log has none)."""
    rel = "vllm/v1/metrics/loggers.py"
    agg, agg_line = find_string(root, rel, " Engines Aggregated: ")
    literals = {n.value for n in ast.walk(_tree(root / rel)) if isinstance(n, ast.Constant)}
    parts = [  # LoggingStatLogger.log's log_parts, each a literal of its own
        next(x for x in literals if isinstance(x, str) and x.startswith(t) and x.count("%") == 1)
        for t in ("Avg prompt throughput: ", "Avg generation throughput: ", "Running: ", "Waiting: ")
    ]
    kv = next(x for x in literals if isinstance(x, str) and x.startswith("%s KV cache usage: "))
    it, it_args = find_call_format(root, rel, "Iteration(%d)")
    (f, args) = find_call_format(root, "vllm/v1/spec_decode/metrics.py", "SpecDecoding metrics: ")
    st_rel = "vllm/entrypoints/common/startup.py"
    plain, _ = find_string(root, st_rel, "vLLM server version")
    lines = [vllm_prefix(version, 0, "startup.py", 1) + plain % (version, TARGET_MODEL)]
    k, engines = 3, 2
    ivs = intervals(44, 8, k, 0.7)
    for i, iv in enumerate(ivs):
        for e in range(engines):
            vals = (f"Engine {e:03d}: ", 100 * i + e, 0, 0, 16, 64, 12.5, "", "GPU", 3.1, "")
            assert len(vals) == len(it_args)
            lines.append(vllm_prefix(version, i + 1, "loggers.py", it.line) + it.node % vals)
        stats = ", ".join([*parts, kv]) % (0.0, 512.0 + i, 16, 0, "GPU", 3.1)
        lines.append(vllm_prefix(version, i + 1, "loggers.py", agg_line) + agg.format(engines) + stats)
        msg = v1_spec_message(
            f, args, iv.accepted, iv.drafted, iv.drafts, iv.per_pos, 1 + iv.accepted / iv.drafts
        )
        lines.append(vllm_prefix(version, i + 1, f.rel, f.line) + msg)
    seg = {
        "records": len(ivs),
        "accept_len_mean": _mean([float(f"{1 + iv.accepted / iv.drafts:.2f}") for iv in ivs]),
        "pooled_accept_len": 1 + sum(iv.accepted for iv in ivs) / sum(iv.drafts for iv in ivs),
        "throughput_mean": _mean([512.0 + i for i in range(len(ivs))]),
    }
    where = [f.where(), f"{rel}:{agg_line} (AggregatedLoggingStatLogger.log_prefix)", it.where()]
    return lines, {"version": version, "segments": [seg], "aggregated": True}, where


def vllm_dynamic(root: Path, version: str) -> tuple[list[str], dict, list[str]]:
    """vLLM 0.33 dynamic speculative decoding (num_speculative_tokens_per_batch_size): each
    batch drafts k_b <= k tokens per request, so the drafted tokens are not drafts x k. The stats
    are kept as the release's SpecDecodingStats.observe_draft does (per-position lists of length
    k, drafts counted one per request and step) and logged through its SpecDecodingLogging."""
    k = 5
    rel = "vllm/v1/spec_decode/metrics.py"
    (f, args) = find_call_format(root, rel, "SpecDecoding metrics: ")
    st_rel = "vllm/entrypoints/common/startup.py"
    plain, _ = find_string(root, st_rel, "vLLM server version")
    rng = random.Random(33)
    lines = [vllm_prefix(version, 0, "startup.py", 1) + plain % (version, TARGET_MODEL)]
    acc_t = drafts_t = drafted_t = 0
    printed = []
    n = 40
    for i in range(n):
        drafts = accepted = drafted = 0
        per_pos = [0] * k
        for _ in range(rng.randint(30, 300)):  # steps of one batch size: its own draft length
            kb = rng.choice((1, 2, 3, 5))  # the schedule's k for this batch size
            for _ in range(rng.randint(1, 8)):  # the requests of the batch
                j = 0
                while j < kb and rng.random() < 0.55:
                    j += 1
                drafts, drafted, accepted = drafts + 1, drafted + kb, accepted + j
                for p in range(j):
                    per_pos[p] += 1
        mal = 1 + accepted / drafts
        msg = v1_spec_message(f, args, accepted, drafted, drafts, per_pos, mal)
        lines.append(vllm_prefix(version, i + 1, f.rel, f.line) + msg)
        printed.append(float(f"{mal:.2f}"))
        acc_t, drafts_t, drafted_t = acc_t + accepted, drafts_t + drafts, drafted_t + drafted
    seg = {
        "records": n,
        "accept_len_mean": _mean(printed),
        "pooled_accept_len": 1 + acc_t / drafts_t,
        "pooled_accept_rate": acc_t / drafted_t,
        "drafts": drafts_t,
    }
    where = [f.where(), f"{st_rel} (log_version_and_model)"]
    return lines, {"version": version, "segments": [seg], "dynamic": True}, where


# -- SGLang ---------------------------------------------------------------------------------------
class Repr:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


ARGS = {
    "model_path": "meta-llama/Llama-3.1-8B-Instruct",
    "tp_size": 1,
    "speculative_algorithm": "EAGLE3",
    "speculative_draft_model_path": "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B",
    "speculative_num_steps": 3,
    "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 4,
}


# a day when the release was current (a log is never older than its build: the rate's formula is
# told apart by date too, tui/core/formats/sglang/rates.py)
SGLANG_DAY = {"0.4.3": "2025-02-20", "0.5.2": "2025-09-20", "0.5.23": "2026-09-20"}


def sglang(root: Path, version: str, rel: str, cap: bool = False) -> tuple[list[str], dict, list[str]]:
    """``cap`` (0.5.23): DSpark's ``cap len: `` and ``block accept len: `` parts too (each printed
    when above 0; the cap-accept mode for the block length)."""
    eng = "sglang/srt/entrypoints/engine.py"
    if version == "0.5.23":
        sa = find_fstring(root, eng, "server_args=")
        sa_vals = {
            "_server_args_for_logging(server_args)": {**ARGS, "dtype": "auto", "speculative_token_map": None}
        }
    else:
        sa = next(
            Found(n, root / eng, n.lineno, eng)
            for n in ast.walk(_tree(root / eng))
            if isinstance(n, ast.JoinedStr) and _consts(n) == "server_args="
        )
        sa_vals = {
            "server_args": Repr("ServerArgs(" + ", ".join(f"{a}={v!r}" for a, v in ARGS.items()) + ")")
        }
    parts = [find_fstring(root, rel, "Decode batch")]
    if version != "0.4.3":  # the message is built in pieces
        parts.append(find_fstring(root, rel, "accept len: "))
        if cap:
            parts.append(find_fstring(root, rel, "cap len: "))
            parts.append(find_fstring(root, rel, "block accept len: "))
        parts.append(find_fstring(root, rel, "gen throughput (token/s): ", after="accept len: "))
    else:
        parts = [find_fstring(root, rel, "accept len: ")]
    where = [sa.where()] + [p.where() for p in parts]
    rng = random.Random(int(version.replace(".", "")) + cap)
    day = SGLANG_DAY[version]
    lines = [f"[{day} 09:00:00] {render_fstring(sa, sa_vals)}"]
    printed, weights, caps, blocks = [], [], [], []
    for i in range(8):
        run = rng.randint(1, 32)
        fwd = run * 40
        accs = [min(3, int(rng.expovariate(0.6))) for _ in range(fwd)]  # accepted drafts per step
        acc = sum(1 + a for a in accs)  # bonus token included
        al = acc / fwd
        # DSpark: each step's verify window (bonus slot included) at least what it accepted; the
        # uncapped block's accept length at least the capped one
        crng = random.Random(i)  # (its own draws: the plain fixture's counts stay as they were)
        cap_lens = [min(4, 1 + a + crng.randint(0, 2)) for a in accs]
        block = [1 + a + (crng.random() < 0.3) for a in accs]
        vals = {
            "num_running_reqs": run,
            "num_used": 1000 + i,
            "num_used / self.max_total_num_tokens": 0.01,
            "token_msg": render_fstring(
                find_fstring(root, rel, "#token: "), {"num_used": 1000, "token_usage": 0.01}
            )
            if version == "0.5.2"
            else "",
            # 0.5.2x: ", ".join(pool_stats.get_decode_usage_msg_parts()) + ", " (the plain pool's parts)
            "token_usage_msg": "#token: 1000, token usage: 0.01, ",
            "spec_accept_length": al,
            "spec_accept_rate": (acc - fwd) / (fwd * 3),
            "gen_throughput": 100.0 + i,
            "self.last_gen_throughput": 100.0 + i,
            "len(self.waiting_queue)": 0,
            "len(self.scheduler.waiting_queue)": 0,
            "can_run_cuda_graph": True,
            "'cpu graph' if self.device == 'cpu' else 'cuda graph'": "cuda graph",
            "self._graph_backend_label": "cuda graph",
            "iter_msg": "",
            "spec_cap_length": sum(cap_lens) / fwd,
            "spec_block_accept_length": sum(block) / fwd,
        }
        msg = "".join(render_fstring(p, vals) for p in parts)
        lines.append(f"[{day} 09:{i + 1:02d}:00 TP0] {msg}")
        printed.append(float(f"{al:.2f}"))
        weights.append(run)
        caps.append(float(f"{sum(cap_lens) / fwd:.2f}"))
        blocks.append(float(f"{sum(block) / fwd:.2f}"))
    exp = {
        "segments": [
            {
                "records": len(printed),
                "accept_len_mean": _mean(printed),
                "accept_len_weighted_mean": sum(a * w for a, w in zip(printed, weights)) / sum(weights),
                "config": {"num_steps": 3, "topk": 1, "num_draft_tokens": 4, "algorithm": "EAGLE3"},
                # the rate printed (0.5.2x: accepted drafts / (forward_ct x draft_per_round))
                "printed_definition": "accepted_drafts_over_proposed_drafts"
                if "accept rate" in "".join(_consts(p.node) for p in parts)
                else None,
            }
        ],
        "version": version,
    }
    if cap:  # the means of the printed values
        exp["segments"][0]["cap_len_mean"] = _mean(caps)
        exp["segments"][0]["block_accept_len_mean"] = _mean(blocks)
    return lines, exp, where


def _sglang_rel(version: str) -> str:
    return next(r[2][0] for r in RELEASES if r[0] == "sglang" and r[1] == version)


# -- llama.cpp ------------------------------------------------------------------------------------
def llamacpp(root: Path, restart_line: bool) -> tuple[list[str], dict, list[str]]:
    base = next(root.glob("*/vendor/llama.cpp"))
    rel = base.relative_to(root)
    g = find_c_format(root, str(rel / "tools/server/server-context.cpp"), "graphs reused = ")
    t = find_c_format(root, str(rel / "tools/server/server-context.cpp"), "draft acceptance = ")
    s = find_c_format(root, str(rel / "common/speculative.cpp"), "statistics %16s")
    b = find_c_format(root, str(rel / "common/common.cpp"), ": build %d (%s) with")
    init = find_c_format(root, str(rel / "tools/server/server.cpp"), "initializing ...")
    srv, w1 = c_macro(root, str(rel / "tools/server/server-common.h"), "SRV_INF")
    slt, w2 = c_macro(root, str(rel / "tools/server/server-common.h"), "SLT_INF")
    spc, w3 = c_macro(root, str(rel / "common/speculative.cpp"), "SPC_TRC")
    cmn, w4 = c_macro(root, str(rel / "common/common.h"), "COM_TRC")
    where = [x.where() for x in (g, t, s, b, init)] + [w1, w2, w3, w4]
    rng = random.Random(5 if restart_line else 6)
    lines: list[str] = []
    segs = []
    clock = [0.0]

    def stamp() -> str:  # common/log.cpp: elapsed M.SS.mmm.uuu, then the level letter
        clock[0] += rng.uniform(0.5, 3.0)
        us = int(clock[0] * 1e6)
        return f"{us // 60_000_000}.{us // 1_000_000 % 60:02d}.{us // 1000 % 1000:03d}.{us % 1000:03d} I "

    for seg in range(2):
        clock[0] = 0.0
        if seg == 0 or restart_line:
            func = "common_params_print_info"
            build = b.node % (func, 6123, "a1b2c3d", "cc (GCC) 13.2", "x86_64-linux-gnu", "")
            lines.append(stamp() + cmn % func + build)
            fmt, arg = _C_LIT.findall(init.path.read_text().splitlines()[init.line - 1])[:2]  # ("%s", "...")
            lines.append(stamp() + srv % "main" + fmt % arg.replace("\\n", ""))
        cum = [0, 0, 0, 0, 0]  # calls: begin, draft, accept; drafts: generated, with a token accepted
        gen_tok = acc_tok = 0
        reqs = []
        for r in range(4):
            steps = rng.randint(30, 120)
            sizes = [rng.randint(1, 4) for _ in range(steps)]
            accs = [min(sz, int(rng.expovariate(0.8))) for sz in sizes]
            a, gtot = sum(accs), sum(sizes)
            reqs.append((steps, a, gtot, accs))
            cum[0] += 1
            cum[1] += steps
            cum[2] += steps
            cum[3] += steps
            cum[4] += sum(1 for x in accs if x > 0)
            gen_tok += gtot
            acc_tok += a
            slot = slt % ("print_timing", 0, r * 100)
            lines.append(stamp() + slot + g.node % rng.randint(10, 200))
            lines.append(stamp() + slot + t.node % (a / gtot, a, gtot, 1 + a / steps))
            mean = f", #mean acc len = {1 + acc_tok / cum[2]:.2f}"
            lines.append(
                stamp()
                + spc % "common_speculative_print_stats"
                + s.node % ("draft", cum[0], cum[1], cum[2], cum[3], cum[4], gen_tok, acc_tok, mean, "")
            )
        segs.append(
            {
                "requests": len(reqs),
                "requests_accept_len_mean": _mean([float(f"{1 + a / st:.2f}") for st, a, _, _ in reqs]),
                "pooled_accept_len": 1 + sum(a for _, a, _, _ in reqs) / sum(st for st, _, _, _ in reqs),
                "pooled_accept_rate": sum(a for _, a, _, _ in reqs) / sum(gt for _, _, gt, _ in reqs),
                "accepted": sum(a for _, a, _, _ in reqs),
                "drafted": sum(gt for _, _, gt, _ in reqs),
            }
        )
    return (
        lines,
        {"segments": segs, "restart_by": "startup lines" if restart_line else "counter reset"},
        where,
    )


def _elapsed(clock: float) -> str:
    """common/log.cpp's stamp: elapsed M.SS.mmm.uuu, then the level letter."""
    us = int(clock * 1e6)
    return f"{us // 60_000_000}.{us // 1_000_000 % 60:02d}.{us // 1000 % 1000:03d}.{us % 1000:03d} I "


def llamacpp_form_b(root: Path, slots: int) -> tuple[list[str], dict, list[str]]:
    """llama-cpp-python 0.3.28: form B (``draft acceptance = r (a accepted / g generated)``, no
    length) then ``statistics`` (LOG_INF) with the server-wide counters of the one speculative
    context every slot shares (``common_speculative_accept`` per slot verify step: ``a``). ``slots``
    slots decode at once, one step each per round; a request's lines come when it ends. Two
    server runs (the build line again: the counters from zero)."""
    base = next(root.glob("*/vendor/llama.cpp"))
    rel = base.relative_to(root)
    g = find_c_format(root, str(rel / "tools/server/server-context.cpp"), "graphs reused = ")
    t = find_c_format(root, str(rel / "tools/server/server-context.cpp"), "draft acceptance = ")
    s = find_c_format(root, str(rel / "common/speculative.cpp"), "statistics %16s")
    b = find_c_format(root, str(rel / "common/common.cpp"), ": build %d (%s) with")
    slt, w1 = c_macro(root, str(rel / "tools/server/server-common.h"), "SLT_INF")
    where = [x.where() for x in (g, t, s, b)] + [w1]
    rng = random.Random(28 + slots)
    lines: list[str] = []
    segs = []
    for _run in range(2):
        clock = 0.0

        def stamp() -> str:
            nonlocal clock
            clock += rng.uniform(0.01, 0.2)
            return _elapsed(clock)

        lines.append(
            stamp() + b.node % ("common_params_print_info", 6200, "0f1e2d3", "cc (GCC) 13.2", "x86_64", "")
        )
        cum = [0, 0, 0, 0, 0, 0, 0]  # calls b, g, a; gen drafts, acc drafts, gen tokens, acc tokens
        todo = [rng.randint(20, 80) for _ in range(3 * slots)]  # each request's verify steps
        # slot -> [task, steps left, steps, accepted, generated, began after the last statistics line]
        active: dict[int, list] = {}
        done, own, task = [], [], 0
        stepped = set()  # tasks that made a verify step since the previous statistics line
        while todo or active:
            for slot in range(slots):
                if slot not in active and todo:
                    active[slot] = [task, todo.pop(0), 0, 0, 0, True]
                    task += 1
                    cum[0] += 1
            cum[1] += 1  # one draft call for every drafting slot of the round
            for slot in sorted(active):
                r = active[slot]
                size = rng.randint(1, 4)
                acc = min(size, int(rng.expovariate(0.7)))
                r[1], r[2], r[3], r[4] = r[1] - 1, r[2] + 1, r[3] + acc, r[4] + size
                cum[2] += 1
                cum[3] += 1
                cum[4] += acc > 0
                cum[5] += size
                cum[6] += acc
                stepped.add(r[0])
            for slot in sorted(active):
                r = active[slot]
                if r[1] > 0:
                    continue
                del active[slot]
                pre = slt % ("print_timing", slot, r[0])
                lines.append(stamp() + pre + g.node % rng.randint(10, 200))
                ratio = struct.unpack("f", struct.pack("f", r[3] / r[4]))[0]  # (float) accepted / total
                lines.append(stamp() + pre + t.node % (ratio, r[3], r[4]))
                lines.append(stamp() + s.node % ("draft", *cum, ""))
                done.append(r)
                if r[5] and stepped == {r[0]}:  # the statistics difference is this request's alone
                    own.append(1 + r[3] / r[2])
                stepped = set()
                for other in active.values():
                    other[5] = False
        segs.append(
            {
                "requests": len(done),
                "requests_alone": len(own),
                "requests_alone_accept_len_mean": _mean(own) if own else None,
                "pooled_accept_len": 1 + sum(r[3] for r in done) / sum(r[2] for r in done),
                "pooled_accept_rate": sum(r[3] for r in done) / sum(r[4] for r in done),
                "accepted": sum(r[3] for r in done),
                "drafted": sum(r[4] for r in done),
                "verify_steps": cum[2],
            }
        )
    return lines, {"segments": segs, "slots": slots, "restart_by": "startup lines"}, where


def llamacpp_synthetic(root: Path) -> tuple[list[str], dict, list[str]]:
    """llama-cpp-python 0.3.36 with ``--spec-synth-len`` (benchmarking): the two synthetic
    acceptance lines of ``common_speculative_init``, the LLAMA_TRACE step lines (``accepted N/M
    draft tokens``, one per verify step of the slot) and the per-request ``mean len`` form; then a
    second, real run (the build line again)."""
    base = next(root.glob("*/vendor/llama.cpp"))
    rel = base.relative_to(root)
    sc = str(rel / "tools/server/server-context.cpp")
    on = find_c_format(
        root, str(rel / "common/speculative.cpp"), "synthetic speculative acceptance is enabled"
    )
    syn = find_c_format(root, str(rel / "common/speculative.cpp"), "synthetic acceptance: n_max = ")
    step = find_c_format(root, sc, '"accepted %2zu/%2zu draft tokens\\n"')
    t = find_c_format(root, sc, "draft acceptance = ")
    b = find_c_format(root, str(rel / "common/common.cpp"), ": build %d (%s) with")
    spc_w, w1 = c_macro(root, str(rel / "common/speculative.cpp"), "SPC_WRN")
    spc_i, w2 = c_macro(root, str(rel / "common/speculative.cpp"), "SPC_INF")
    slt, w3 = c_macro(root, str(rel / "tools/server/server-common.h"), "SLT_INF")
    cmn, w4 = c_macro(root, str(rel / "common/common.h"), "COM_TRC")
    where = [x.where() for x in (on, syn, step, t, b)] + [w1, w2, w3, w4]
    rng = random.Random(36)
    lines: list[str] = []
    segs = []
    for run in range(2):
        clock = 0.0

        def stamp(level: str = "I") -> str:
            nonlocal clock
            clock += rng.uniform(0.01, 0.2)
            return _elapsed(clock)[:-2] + level + " "

        func = "common_params_print_info"
        lines.append(stamp() + cmn % func + b.node % (func, 6300, "9a8b7c6", "cc (GCC) 13.2", "x86_64", ""))
        rates = [0.8, 0.5, 0.2]
        if run == 0:
            fmt, arg = _C_LIT.findall(on.path.read_text().splitlines()[on.line - 1])[:2]  # ("%s", "...")
            lines.append(stamp("W") + spc_w % "common_speculative_init" + fmt % arg.replace("\\n", ""))
            said = ", ".join(f"{r:.6g}" for r in rates)
            lines.append(stamp() + spc_i % "common_speculative_init" + syn.node % (3, 1 + sum(rates), said))
        printed, hist, accs, gens = [], [0, 0, 0, 0], [], []
        for r in range(4):
            steps = rng.randint(10, 30)
            a_tot = g_tot = 0
            for _ in range(steps):
                a = 0
                while a < 3 and rng.random() < (0.7 if run == 0 else 0.4):
                    a += 1
                hist[a] += 1
                a_tot, g_tot = a_tot + a, g_tot + 3
                lines.append(stamp() + slt % ("post_decode", 0, r) + step.node % (a, 3))
            pre = slt % ("print_timing", 0, r)
            mean = 1 + a_tot / steps
            lines.append(stamp() + pre + t.node % (a_tot / g_tot, a_tot, g_tot, mean))
            printed.append(float(f"{mean:5.2f}"))
            accs.append(a_tot)
            gens.append(g_tot)
        segs.append(
            {
                "synthetic": run == 0,
                "requests": len(printed),
                "accept_len_mean": _mean(printed),
                "pooled_accept_rate": sum(accs) / sum(gens),
                "step_histogram": hist,
            }
        )
    return lines, {"segments": segs, "restart_by": "startup lines"}, where


def llamacpp_2025(root: Path) -> tuple[list[str], dict, list[str]]:
    """A 2025 build: "draft acceptance rate = ..." on a line of its own after the slot prefix (no
    length, no statistics lines); "build: ..." and "system info: n_threads = ..." at start."""
    base = next(root.glob("*/vendor/llama.cpp"))
    rel = base.relative_to(root)
    t = find_c_format(root, str(rel / "tools/server/server.cpp"), "draft acceptance rate = ")
    si = find_c_format(root, str(rel / "tools/server/server.cpp"), "system info: n_threads = ")
    b = find_c_format(root, str(rel / "common/common.cpp"), '"build: %d (%s) with')
    slt, w1 = c_macro(root, str(rel / "tools/server/utils.hpp"), "SLT_INF")
    where = [x.where() for x in (t, si, b)] + [w1]
    rng = random.Random(16)
    lines: list[str] = []
    segs = []
    for _seg in range(2):
        clock = 0.0

        def stamp() -> str:
            nonlocal clock
            clock += rng.uniform(0.5, 3.0)
            us = int(clock * 1e6)
            return f"{us // 60_000_000}.{us // 1_000_000 % 60:02d}.{us // 1000 % 1000:03d}.{us % 1000:03d} I "

        lines.append(stamp() + b.node % (6000, "1a2b3c4d", "cc (GCC) 13.2", "x86_64-linux-gnu", ""))
        lines.append(stamp() + si.node % (8, 8, 16))
        printed, accs, gens = [], [], []
        for r in range(5):
            g = rng.randint(50, 400)
            a = rng.randint(0, g)
            ratio = struct.unpack("f", struct.pack("f", a / g))[0]  # (float) n_draft_accepted / n_draft_total
            lines.append(stamp() + slt % ("print_timing", 0, r * 10))  # the message starts with "\n"
            lines.append(t.node % (ratio, a, g))
            printed.append(float(f"{ratio:0.5f}"))
            accs.append(a)
            gens.append(g)
        segs.append(
            {
                "records": len(printed),
                "accept_rate_mean": _mean(printed),
                "pooled_accept_rate": sum(accs) / sum(gens),
                "accepted": sum(accs),
                "drafted": sum(gens),
            }
        )
    return lines, {"segments": segs, "restart_by": "startup lines"}, where


# -- fetching and writing -------------------------------------------------------------------------
def fetch(dest: Path, only: list[str] | None = None) -> None:
    for pkg, version, globs in RELEASES:
        target = dest / f"{pkg}-{version}"
        if only and f"{pkg}-{version}" not in only:
            continue
        if target.exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            sdist = pkg == "llama-cpp-python"
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", f"{pkg}=={version}", "-d", tmp, "-q"]
            cmd += ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
            subprocess.run(cmd, check=True)
            got = next(Path(tmp).iterdir())
            if sdist:
                with tarfile.open(got) as tf:
                    members = [m for m in tf.getmembers() if any(Path(m.name).match(gl) for gl in globs)]
                    tf.extractall(target, members=members, filter="data")
            else:
                with zipfile.ZipFile(got) as z:
                    for name in z.namelist():
                        if name in globs:
                            z.extract(name, target)


def render(src: Path, out: Path, only: list[str] | None = None) -> None:
    """Every release's fixtures (``only``: those of these ``package-version`` names, the others'
    files and expected values left as they are)."""
    out.mkdir(parents=True, exist_ok=True)
    expected = (
        json.loads((out / "expected.json").read_text()) if only and (out / "expected.json").exists() else {}
    )
    jobs: list[tuple[str, str, Any]] = []
    for pkg, version, _ in RELEASES:
        if only and f"{pkg}-{version}" not in only:
            continue
        root = src / f"{pkg}-{version}"
        if pkg == "vllm":
            fn = vllm_v0 if version.startswith(("0.4", "0.6")) else vllm_v1
            jobs.append((f"vllm-{version}.log", f"vllm {version}", lambda r=root, v=version, fn=fn: fn(r, v)))
            if version == "0.33.0":
                for suffix, what, fn2 in (
                    ("api-servers", "more than one API server", vllm_api_servers),
                    ("dynamic", "dynamic speculative decoding", vllm_dynamic),
                    ("aggregated", "two engines, --aggregate-engine-logging", vllm_aggregated),
                ):
                    jobs.append(
                        (
                            f"vllm-{version}-{suffix}.log",
                            f"vllm {version} ({what})",
                            lambda r=root, v=version, fn=fn2: fn(r, v),
                        )
                    )
        elif pkg == "sglang":
            jobs.append(
                (
                    f"sglang-{version}.log",
                    f"sglang {version}",
                    lambda r=root, v=version: sglang(r, v, _sglang_rel(v)),
                )
            )
            if version == "0.5.23":
                jobs.append(
                    (
                        f"sglang-{version}-dspark.log",
                        f"sglang {version} (DSpark: cap len, block accept len)",
                        lambda r=root, v=version: sglang(r, v, _sglang_rel(v), cap=True),
                    )
                )
        elif version == "0.3.28":
            for slots in (1, 2):
                jobs.append(
                    (
                        f"llamacpp-{version}-{slots}-slot{'s' if slots > 1 else ''}.log",
                        f"llama.cpp (llama-cpp-python {version}, {slots} slot{'s' if slots > 1 else ''})",
                        lambda r=root, n=slots: llamacpp_form_b(r, n),
                    )
                )
        elif version == "0.3.16":
            jobs.append(
                (
                    f"llamacpp-{version}.log",
                    f"llama.cpp (llama-cpp-python {version})",
                    lambda r=root: llamacpp_2025(r),
                )
            )
        else:
            jobs.append(
                (
                    f"llamacpp-{version}-synthetic.log",
                    f"llama.cpp (llama-cpp-python {version}, synthetic acceptance)",
                    lambda r=root: llamacpp_synthetic(r),
                )
            )
            for restart in (True, False):
                name = f"llamacpp-{version}-{'startup' if restart else 'counter-reset'}.log"
                jobs.append(
                    (
                        name,
                        f"llama.cpp (llama-cpp-python {version})",
                        lambda r=root, x=restart: llamacpp(r, x),
                    )
                )
    for name, release, job in jobs:
        lines, exp, where = job()
        head = f"# source: {release}, rendered by tools/render_release_logs.py through " + "; ".join(where)
        (out / name).write_text("\n".join([head, *lines]) + "\n")
        expected[name] = exp
    (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fetch", type=Path, help="download and unpack the releases' sources here")
    ap.add_argument("--src", type=Path, help="the unpacked sources (as --fetch leaves them)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", action="append", help="render only this package-version (repeatable)")
    a = ap.parse_args()
    src = a.fetch or a.src
    if src is None:
        ap.error("--fetch DIR or --src DIR")
    if a.fetch:
        fetch(a.fetch, a.only)
    render(src, a.out, a.only)


if __name__ == "__main__":
    main()
