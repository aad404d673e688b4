"""Text helpers shared by the parsers: cleaning, prefixes, numbers."""

from __future__ import annotations

import re

# ANSI colour codes, raw or mangled into U+FFFD by a paste (docs/formats.md, "Pasted and decorated lines").
_ANSI = re.compile(r"(?:\x1b|\ufffd)\[[0-9;]*[A-Za-z]")
_PROCESS = re.compile(r"\((\w[\w ]*? pid=\d+)\)")
_RANK_TOKEN = re.compile(r"[A-Z][A-Z_]*\d+")


def clean(line: str) -> str:
    """Remove ANSI codes, NULs and markdown decorations a paste adds; keep everything else."""
    if "\x1b" in line or "\ufffd[" in line:
        line = _ANSI.sub("", line)
    if "\x00" in line:
        line = line.replace("\x00", "")
    if "`" in line:
        line = line.replace("`", "")
    if "**" in line:
        line = line.replace("**", "")
    if line[:1] == "[":  # the common case: a prefix right at the start
        return line
    s = line.lstrip()
    if s[:1] == ">":  # markdown quote: "> ", "> > "
        while s[:1] == ">":
            s = s[1:].lstrip()
        return s
    return line


def at_message_start(text: str, i: int) -> bool:
    """True when position ``i`` starts a log message: line start, or after a prefix that
    ends with ``] ``, ``: `` or spaces (SGLang ``[ts TP0] ``, forks ``[file.py:287] ``,
    vLLM ``[metrics.py:101] `` / ``metrics.py:367] ``)."""
    if i == 0:
        return True
    before = text[:i].rstrip(" ")
    if not before:
        return True
    return before[-1] in "]:|" or before.endswith("INFO") or before.endswith(">")


_RANK_CACHE: dict[str, str] = {}


def rank_of(prefix: str) -> str:
    """Rank tags of an SGLang prefix: ``[2025-05-31 18:31:21 DP6 TP6] `` → ``"DP6 TP6"``.

    Untagged lines (tp=1, non-scheduler processes, forks with another prefix) give ``""``.
    """
    end = prefix.rfind("]")
    if end < 0:
        return ""
    start = prefix.rfind("[", 0, end)
    if start < 0:
        return ""
    inner = prefix[start + 1 : end]
    if len(inner) > 20 and inner[4] == "-" and inner[19] == " ":
        inner = inner[20:]  # "YYYY-MM-DD HH:MM:SS TAGS": only the tags vary (and rarely)
    rank = _RANK_CACHE.get(inner)
    if rank is None:
        rank = " ".join(t for t in inner.split() if _RANK_TOKEN.fullmatch(t))
        if len(_RANK_CACHE) > 4096:
            _RANK_CACHE.clear()
        _RANK_CACHE[inner] = rank
    return rank


def process_of(prefix: str) -> str | None:
    """vLLM process tag: ``(APIServer pid=1)`` → ``"APIServer pid=1"``."""
    if "pid=" not in prefix:
        return None
    m = _PROCESS.search(prefix)
    return m.group(1) if m else None


def to_float(text: str) -> float | None:
    """A printed float (``2.85``, ``76.7%`` → 76.7, ``nan``, ``inf``), or None."""
    t = text.strip()
    if t.endswith("%"):
        t = t[:-1]
    if not t or "_" in t:
        return None
    try:
        return float(t)
    except ValueError:
        return None


def to_int(text: str) -> int | None:
    t = text.strip()
    if not t or "_" in t:
        return None
    try:
        return int(t)
    except ValueError:
        return None


def first_number(text: str) -> str:
    """``"553.18 tokens/s"`` → ``"553.18"``; ``"5533 tokens"`` → ``"5533"``."""
    t = text.strip()
    sp = t.find(" ")
    return t if sp < 0 else t[:sp]
