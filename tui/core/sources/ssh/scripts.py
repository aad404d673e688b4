"""The shell scripts run on the remote host (reader, lister, probe, copies, cat) and the
commands that start them; what they print, and how it is read back, is described in
:mod:`.remote`. Each script is a constant text: the user's path reaches it only as a positional
argument quoted with :func:`shlex.quote`.
"""

from __future__ import annotations

import secrets
import shlex

from tui.core.sources.identity import cksum
from tui.core.sources.rotation import rotation_key, strip_compression
from tui.core.sources.ssh.remote_side import RemotePath

# -- the scripts -------------------------------------------------------------------------------
# Kept on single logical lines joined by "; " so the outer quoting survives any login shell.

_PRELUDE = "LC_ALL=C; export LC_ALL; trap '' PIPE"

# end/last: the offset where the last N lines of bytes [0, SIZE) start (N=0: after the last
# newline), reading a window from the end that doubles until it holds enough newlines.
_LAST_START = (
    "last_start() { want=$1; e=$size; "
    'if [ "$want" -gt 0 ] && [ "$(tail -c +"$size" -- "$P" | head -c 1 | wc -l)" -eq 1 ]; then e=$((size - 1)); fi; '
    '[ "$want" -gt 0 ] || want=1; w=65536; '
    'while :; do lo=0; [ "$e" -gt "$w" ] && lo=$((e - w)); '
    'k=$(tail -c +$((lo + 1)) -- "$P" | head -c $((e - lo)) | wc -l); '
    'if [ "$k" -ge "$want" ] || [ "$lo" -eq 0 ]; then '
    'c=$( { tail -c +$((lo + 1)) -- "$P" | head -c $((e - lo)); echo; } | tail -n "$want" | wc -c); '
    "echo $((e + 1 - c)); return; fi; w=$((w * 2)); done; }"
)

READER = "; ".join(
    [
        _PRELUDE,
        "T=$1; S=$2; D=$3; B=$4; X=$5; O=$6; M=$7; N=$8; I=$9",
        'for c in tail stat head wc; do command -v "$c" >/dev/null 2>&1 || { printf \'%s H err notfound %s\\n\' "$T" "$c"; exit 127; }; done',
        'cd -- "$D" 2>/dev/null || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        "P=./$B",
        '[ -e "$P" ] || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        '[ -d "$P" ] && { printf \'%s H err isdir\\n\' "$T"; exit 2; }',
        '[ -r "$P" ] || { printf \'%s H err eacces\\n\' "$T"; exit 2; }',
        "st=$(stat -L -c '%d:%i:%.9W %s %Y %F' -- \"$P\" 2>/dev/null) || { printf '%s H err stat\\n' \"$T\"; exit 2; }",
        "id=${st%% *}; st=${st#* }; size=${st%% *}; st=${st#* }; mt=${st%% *}; kind=${st#* }",
        "case $kind in regular*) ;; *) printf '%s H err notregular\\n' \"$T\"; exit 2;; esac",
        _LAST_START,
        "start=0; ln=1",
        # verify: resume only if the cksums of the ranges ${11} are ${10}, else say "moved" (a probe follows)
        'case $M in resume) [ "$id" = "$X" ] && [ "$size" -ge "$O" ] && start=$O && ln=-;; '
        # expect: only the file X (the generation planned to be at the name), else "moved"
        'expect) [ "$id" = "$X" ] && [ "$size" -ge "$O" ] || { printf \'%s H err moved\\n\' "$T"; exit 0; }; '
        '[ "$O" -gt 0 ] && { start=$O; ln=-; };; '
        'verify) [ "$id" = "$X" ] && [ "$size" -ge "$O" ] || { printf \'%s H err moved\\n\' "$T"; exit 0; }; '
        "c=; for r in ${11}; do a=${r%:*}; l=${r#*:}; "
        'c="$c$(tail -c +$((a + 1)) -- "$P" 2>/dev/null | head -c "$l" | cksum 2>/dev/null) "; done; '
        '[ "$c" = "${10}" ] || { printf \'%s H err moved\\n\' "$T"; exit 0; }; start=$O; ln=-;; '
        'end) [ "$size" -gt 0 ] && start=$(last_start 0);; last) [ "$size" -gt 0 ] && start=$(last_start "$N");; esac',
        '[ "$start" -gt 0 ] && [ "$ln" = 1 ] && ln=$(( $(head -c "$start" -- "$P" | wc -l) + 1 ))',
        'printf \'%s H ok %s %s %s %s %s\\n\' "$T" "$id" "$size" "$start" "$ln" "$mt"',
        '[ "$I" = 0 ] && exec tail -c +$((start + 1)) -- "$S$B" 2>&1',
        # GNU tail polls every 50 ms instead of writing each line as it lands: lines then leave the
        # host a few at a time (32 followed logs at 50 lines/s: half the client CPU, ~30 ms more
        # latency). Older or other tails without the option follow by inotify as usual.
        "F=---disable-inotify; tail $F -c 0 -- /dev/null >/dev/null 2>&1 || F=",
        'tail -c +$((start + 1)) -f $F -s 0.05 -- "$S$B" 2>&1 & p=$!; d=0.02',
        "while :; do sleep $d; "
        "r=$(stat -L -c '%F|%d:%i:%.9W|%s|%n' -- \"$P\" /proc/$p/fd/* 2>/dev/null); "
        'printf \'%s S\\n%s\\n%s E\\n\' "$T" "$r" "$T" || break; '
        "kill -0 $p 2>/dev/null || { printf '%s X\\n' \"$T\"; break; }; "
        "case $d in 0.02) d=0.1;; *) d=$I;; esac; done",
        "kill $p 2>/dev/null",
    ]
)

LISTER = "; ".join(
    [
        _PRELUDE,
        'T=$1; D=$2; G=$3; I=$4; Q=$5; IFS=""',
        "command -v stat >/dev/null 2>&1 || { printf '%s H err notfound stat\\n' \"$T\"; exit 127; }",
        "while :; do r=; if cd -- \"$D\" 2>/dev/null; then r=$(stat -L -c '%F|%d:%i:%.9W|%s|%.9Y|%n' -- $G 2>/dev/null); fi; "
        'printf \'%s S\\n%s\\n%s E\\n\' "$T" "$r" "$T" || exit 0; [ "$Q" = 1 ] && exit 0; sleep "$I" || exit 0; done',
    ]
)

# sums LABEL FILE [ID]: the cksum of each byte range R of FILE; with ID, only when FILE is still
# the file ID (opened once, read through /dev/fd: a rename after the listing sums no other file)
_SUMS = (
    'sums() { p=$2; if [ -n "$3" ]; then { command exec 4< "$2"; } 2>/dev/null || return 0; '
    '[ "$(stat -L -c %d:%i:%.9W /dev/fd/4 2>/dev/null)" = "$3" ] || return 0; p=/dev/fd/4; fi; '
    "for r in $R; do a=${r%:*}; l=${r#*:}; "
    'c=$(tail -c +$((a + 1)) -- "$p" 2>/dev/null | head -c "$l" | cksum 2>/dev/null); '
    'printf \'%s P C %s %s %s %s\\n\' "$T" "$1" "$a" "$l" "$c"; done; }'
)

# probe: what is at the name now, and (when it is another file) where the file with identity X
# went in the directory; the cksum of each byte range R ("start:length ...") of both.
PROBE = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; B=$3; X=$4; R=$5",
        'cd -- "$D" 2>/dev/null || { printf \'%s P E\\n\' "$T"; exit 0; }',
        _SUMS,
        "P=./$B; id=",
        "st=$(stat -L -c '%F|%d:%i:%.9W|%s|%n' -- \"$P\" 2>/dev/null) && { "
        'printf \'%s P N %s\\n\' "$T" "$st"; id=${st#*|}; id=${id%%|*}; '
        'case $st in regular*) sums name "$P";; esac; }',
        '[ "$id" != "$X" ] && stat -L -c \'%F|%d:%i:%.9W|%s|%n\' -- ./* ./.[!.]* ./..?* 2>/dev/null | '
        'while IFS= read -r l; do case $l in regular*"|$X|"*) '
        'f=${l#*"|$X|"}; f=${f#*|}; printf \'%s P O %s\\n\' "$T" "$l"; sums old "$f"; break;; esac; done',
        "printf '%s P E\\n' \"$T\"",
    ]
)

# copies: regular files named NAME?* (logrotate's NAME.1, NAME-DATE) at least O bytes long
# (up to 8), with the checksums of the ranges R: where a copy-truncated file's old bytes went.
COPIES = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; B=$3; O=$4; R=$5; n=0",
        'cd -- "$D" 2>/dev/null || { printf \'%s P E\\n\' "$T"; exit 0; }',
        _SUMS,
        "stat -L -c '%F|%d:%i:%.9W|%s|%n' -- ./\"$B\"?* 2>/dev/null | while IFS= read -r l; do "
        "case $l in regular*) ;; *) continue;; esac; f=${l#*|*|}; s=${f%%|*}; f=${f#*|}; "
        '[ "$s" -ge "$O" ] || continue; printf \'%s P K %s\\n\' "$T" "$l"; sums "k$n" "$f"; '
        "n=$((n + 1)); [ $n -lt 8 ] || break; done",
        "printf '%s P E\\n' \"$T\"",
    ]
)

# set: the rotated set of NAME (regular files NAME and NAME?*: NAME.1, NAME.2.gz, NAME-DATE), one
# "K kind|dev:ino|size|mtime|name" line each, and for a file whose identity is one of W ("ID=a:l,a:l
# ...": the known generations' fingerprints) the cksum of those ranges ("C ID a l SUM LEN").
SET = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; B=$3; W=$4",
        'cd -- "$D" 2>/dev/null || { printf \'%s P E\\n\' "$T"; exit 0; }',
        _SUMS,
        # listed again until two listings agree: a rename between the glob and stat drops a file
        'ls1() { stat -L -c \'%F|%d:%i:%.9W|%s|%.9Y|%n\' -- ./"$B" ./"$B"?* 2>/dev/null; }',
        'a=$(ls1); k=0; while [ $k -lt 20 ]; do b=$(ls1); [ "$a" = "$b" ] && break; a=$b; k=$((k + 1)); done',
        "printf '%s\\n' \"$a\" | while IFS= read -r l; do "
        'case $l in regular*) ;; *) continue;; esac; printf \'%s P K %s\\n\' "$T" "$l"; '
        "id=${l#*|}; id=${id%%|*}; f=${l#*|*|*|*|}; "
        'for w in $W; do case $w in "$id="*) R=$(printf %s "${w#*=}" | tr , " "); sums "$id" "$f" "$id";; esac; done; '
        "done",
        "printf '%s P E\\n' \"$T\"",
    ]
)

# gen: one file of the rotated set through one descriptor (so the identity said is the file read):
# "H ok DEV:INO:BIRTH SIZE [WHERE]", then its bytes from O (L > 0: at most L of them). With K (the number in the
# name listed, 0 for the name itself): when N is no longer the file I listed there (the set rotated
# since, renaming it), it is found where a rotation can have taken it -- B.M with M > K and the same
# compression suffix S, at least Z bytes long (an inode freed and reused by another file is not
# taken for it) -- up to three renames (WHERE: its name now, after B); "H err enoent" when nothing
# can be opened.
GEN = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; N=$3; O=$4; L=$5; I=$6; B=$7; K=$8; S=$9; Z=${10}; k=0",
        'cd -- "$D" 2>/dev/null || { printf \'%s H err enoent\\n\' "$T"; exit 0; }',
        # (command exec: a failed redirection must not end the shell, as a special built-in's does)
        "while :; do st=; { command exec 3< \"./$N\"; } 2>/dev/null && st=$(stat -L -c '%d:%i:%.9W %s' /dev/fd/3 2>/dev/null)",
        '[ -z "$K" ] && break; [ "${st%% *}" = "$I" ] && break; k=$((k + 1)); [ $k -le 3 ] || break',
        'n=$(stat -L -c \'%d:%i:%.9W|%s|%n\' -- ./"$B".*"$S" 2>/dev/null | while IFS= read -r l; do '
        'case $l in "$I|"*) ;; *) continue;; esac; f=${l#*|}; z=${f%%|*}; f=${f#*|./}; d=${f#"$B".}; d=${d%"$S"}; '
        'case $d in ""|*[!0-9]*) continue;; esac; '
        '[ "$d" -gt "$K" ] && [ "$z" -ge "$Z" ] && { printf %s "$f"; break; }; done)',
        '[ -n "$n" ] || break; N=$n; done',
        '[ -n "$st" ] || { printf \'%s H err enoent\\n\' "$T"; exit 0; }',
        '[ "$N" = "$3" ] || st="$st ${N#"$B"}"',  # (found renamed: where, after the name)
        'printf \'%s H ok %s\\n\' "$T" "$st"',
        '[ "$L" = 0 ] && exec tail -c +$((O + 1)) <&3',
        'tail -c +$((O + 1)) <&3 | head -c "$L"',
    ]
)

CAT = "; ".join(
    [
        _PRELUDE,
        "T=$1; F=$2; L=$3",
        "command -v head >/dev/null 2>&1 || { printf '%s H err notfound head\\n' \"$T\"; exit 127; }",
        '[ -e "$F" ] || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        '[ -d "$F" ] && { printf \'%s H err isdir\\n\' "$T"; exit 2; }',
        '[ -r "$F" ] || { printf \'%s H err eacces\\n\' "$T"; exit 2; }',
        # the modification time (seconds; empty without GNU stat): where vLLM's year-less stamps take their year
        'printf \'%s H ok %s\\n\' "$T" "$(stat -L -c %Y -- "$F" 2>/dev/null)"',
        '[ "$L" = 0 ] && exec cat -- "$F"',
        'exec head -c "$L" -- "$F"',
    ]
)


def _command(script: str, *args: str) -> str:
    return "sh -c " + shlex.quote(script) + " specwatch " + " ".join(shlex.quote(a) for a in args)


def new_tag() -> str:
    return "\x1fspecwatch-" + secrets.token_hex(12)


def new_nonce() -> str:
    """A run of ``./`` and ``/`` (resolves to the same directory) that no log line will hold."""
    bits = secrets.randbits(48)
    return "./" + "".join("./" if bits >> i & 1 else "/" for i in range(48))


def reader_command(
    tag: str,
    nonce: str,
    rp: RemotePath,
    name: str,
    *,
    expect: str = "-",
    offset: int = 0,
    mode: str = "start",
    lines: int = 0,
    interval: float = 1.0,
    follow: bool = True,
    sums: str = "",
    ranges: list[tuple[int, int]] | None = None,
) -> str:
    """``name`` is the file to read in ``rp.dir`` (the pattern's current match, or ``rp.base``).
    ``mode="verify"``: resume at ``offset`` only if the file is ``expect``, not shorter, and the
    ``cksum`` lines of ``ranges`` joined are ``sums`` (:func:`expected_sums`); else the header is
    ``err moved``."""
    iv = "0" if not follow else f"{max(interval, 0.05):g}"
    r = " ".join(f"{a}:{n}" for a, n in ranges or ())
    return _command(READER, tag, nonce, rp.dir, name, expect, str(offset), mode, str(lines), iv, sums, r)


def expected_sums(chunks: list[bytes]) -> str:
    """What the reader's ``verify`` mode computes for byte ranges holding ``chunks``."""
    return "".join(f"{cksum(c)} {len(c)} " for c in chunks)


def probe_command(tag: str, rp: RemotePath, name: str, identity: str, ranges: list[tuple[int, int]]) -> str:
    r = " ".join(f"{a}:{n}" for a, n in ranges)
    return _command(PROBE, tag, rp.dir, name, identity, r)


def copies_command(tag: str, rp: RemotePath, name: str, at_least: int, ranges: list[tuple[int, int]]) -> str:
    r = " ".join(f"{a}:{n}" for a, n in ranges)
    return _command(COPIES, tag, rp.dir, name, str(at_least), r)


def lister_command(tag: str, rp: RemotePath, *, interval: float = 1.0, once: bool = False) -> str:
    return _command(LISTER, tag, rp.dir, rp.base, f"{max(interval, 0.05):g}", "1" if once else "0")


def set_command(tag: str, rp: RemotePath, known: dict[str, list[tuple[int, int]]]) -> str:
    """:data:`SET` for ``rp``'s name; ``known``: identity -> the byte ranges to checksum."""
    w = " ".join(f"{i}=" + ",".join(f"{a}:{n}" for a, n in r) for i, r in known.items() if r)
    return _command(SET, tag, rp.dir, rp.base, w)


def gen_command(
    tag: str,
    rp: RemotePath,
    name: str,
    offset: int = 0,
    limit: int = 0,
    listed: tuple[str, int] | None = None,
) -> str:
    """:data:`GEN` for the file ``name`` in ``rp.dir``: its bytes from ``offset`` (``limit``);
    ``listed``: (identity, size) of the file the listing found there, followed where a rotation
    renames it since (a numbered name: ``NAME.N`` to ``NAME.M``, M > N)."""
    ident, size = listed or ("", 0)
    base, rank, within = rotation_key(name)
    number = {2: "0", 1: str(-within[0]) if within else ""}.get(rank, "") if listed else ""
    suffix = name[len(strip_compression(name)) :]
    return _command(
        GEN, tag, rp.dir, name, str(offset), str(limit), ident, rp.base, number, suffix, str(size)
    )


def cat_command(tag: str, path: str, limit: int = 0) -> str:
    return _command(CAT, tag, path, str(limit))
