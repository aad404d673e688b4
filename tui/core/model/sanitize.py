"""One sanitiser for text that comes from outside (log lines, file names, paths, config values,
remote and error messages) before it reaches a terminal.

A terminal acts on control characters: ``ESC ] 2 ; … BEL`` sets the window title, ``ESC [2J``
clears the screen, ``ESC ] 52 ; …`` writes the clipboard, ``ESC [6n`` makes the terminal type an
answer into our input, and the 8-bit C1 forms (U+009B is CSI) do the same on some terminals.
Bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder what is shown.

:func:`visible` makes every one of them visible and inert instead:

* C0 controls except TAB, and DEL, become their Unicode control pictures (``ESC`` → ``␛``,
  ``BEL`` → ``␇``, ``NUL`` → ``␀``, ``CR`` → ``␍``, ``DEL`` → ``␡``). Every ESC-introduced sequence
  (CSI, OSC with its BEL or ST terminator, DCS, APC, PM, SOS, SS2/SS3, single ``ESC x``) thereby
  loses its introducer and shows as text: ``␛]2;title␇``, ``␛[2J``, ``␛\\``.
* C1 controls U+0080–U+009F are shown as ``␛`` plus the 7-bit character they stand for
  (U+009B → ``␛[``, U+009D → ``␛]``).
* Bidi overrides and isolates are shown as ``⟨U+202E⟩``.
* Bytes that are not UTF-8 (a file name, a label or a remote path read with ``surrogateescape``:
  U+DC80–U+DCFF) are written escaped, as ``\\x9b`` (the four characters), like ``ls -b``; any
  other lone surrogate as ``\\udXXX``. Written raw they would be the raw byte (0x9b is CSI on
  8-bit terminals) and make the output invalid UTF-8.

Everything else, markup-looking text included, is kept as it is: the app shows outside text with
``rich.text.Text`` (never as markup).

JSON output keeps the text's value but not its raw bytes: :func:`json_text` is ``json.dumps`` with
``ensure_ascii=False`` and every character of :data:`UNSAFE` written as a ``\\uXXXX`` escape
(JSON escapes C0 itself; DEL, C1 and the bidi characters are escaped here), so other Unicode stays
readable and ``json.loads`` gives back the same value; a byte that is not UTF-8 is the text
``\\x9b`` in the value, as in every other output. JSON is therefore valid UTF-8 always.

CSV (the app's ``e`` export) goes through :func:`csv_row`: every text cell :func:`visible`, and a
text cell that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, TAB
or CR, and no plain number) prefixed with ``'`` (OWASP's advice against CSV injection).

Cost: a string with nothing to change is detected by ``str.isprintable`` (C, one pass) and
returned as is; a string with a TAB or other harmless non-printable character costs one
precompiled regex search more; only strings with something to change go through ``str.translate``.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_TABLE: dict[int, str] = {}
for _c in range(0x20):
    if _c != 0x09:
        _TABLE[_c] = chr(0x2400 + _c)
_TABLE[0x7F] = "\u2421"  # ␡
for _c in range(0x80, 0xA0):
    _TABLE[_c] = "\u241b" + chr(_c - 0x40)  # the 7-bit form of the C1 control, its ESC shown
for _c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)):
    _TABLE[_c] = f"\u27e8U+{_c:04X}\u27e9"
for _c in range(0xD800, 0xE000):  # lone surrogates: a byte that is not UTF-8 (surrogateescape) or worse
    _TABLE[_c] = f"\\x{_c - 0xDC00:02x}" if 0xDC80 <= _c <= 0xDCFF else f"\\u{_c:04x}"
del _c

_TABLE_KEEP_LF = {**_TABLE}
del _TABLE_KEEP_LF[0x0A]

_SURROGATES = "\ud800-\udfff"
_ANY = re.compile("[" + "".join(re.escape(chr(c)) for c in _TABLE if c < 0xD800) + _SURROGATES + "]")
_ANY_LF = re.compile(
    "[" + "".join(re.escape(chr(c)) for c in _TABLE_KEEP_LF if c < 0xD800) + _SURROGATES + "]"
)

# The characters a terminal would act on (what tests check output for).
UNSAFE = frozenset(chr(c) for c in _TABLE)


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every terminal control made visible and inert (see the module doc).

    ``keep_newlines``: LF stays a line break (messages of several lines); otherwise it shows as
    ``␊`` (one log line, a label, a path)."""
    if text.isprintable() or not (_ANY_LF if keep_newlines else _ANY).search(text):
        return text
    return text.translate(_TABLE_KEEP_LF if keep_newlines else _TABLE)


# What json.dumps(ensure_ascii=False) leaves raw of UNSAFE: DEL, C1 and the bidi characters (it
# escapes C0 itself, and they can only stand inside strings, so escaping them keeps the value),
# and lone surrogates (bytes that are not UTF-8: the escaped text of visible(), a backslash of
# which JSON escapes once more).
_JSON_RAW = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069" + _SURROGATES + "]")


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if 0xD800 <= c < 0xE000:
        return _TABLE[c].replace("\\", "\\\\")
    return f"\\u{c:04x}"


def json_text(obj: Any, **kw: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False, **kw)`` with no character of :data:`UNSAFE` raw in
    it: C0 controls as JSON escapes them (``\\n``, ``\\u001b``), DEL, C1 controls and bidi
    overrides / isolates as ``\\u007f``, ``\\u009b``, ``\\u202e``; other Unicode as is. The one
    way specwatch writes JSON (``summary --json``, ``stream --jsonl``)."""
    text = json.dumps(obj, ensure_ascii=False, **kw)
    if (text.isascii() and "\x7f" not in text) or not _JSON_RAW.search(text):
        return text
    return _JSON_RAW.sub(_json_escape, text)


# A cell a spreadsheet runs as a formula (=, +, -, @; TAB and CR as OWASP lists them), unless it is
# a plain number (a negative value stays a number).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


def csv_cell(value: Any) -> Any:
    """One CSV cell: text :func:`visible` and kept from acting as a spreadsheet formula (a ``'``
    in front); numbers and None (an empty cell) as they are."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = visible(value if isinstance(value, str) else str(value))
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text


def csv_row(values: Any) -> list[Any]:
    """A CSV row of :func:`csv_cell` values: the one way specwatch writes CSV (the app's ``e``,
    through :func:`csv_writer`)."""
    return [csv_cell(v) for v in values]


class _CsvWriter:
    def __init__(self, f: Any) -> None:
        import csv

        self._w = csv.writer(f)

    def writerow(self, row: Any) -> Any:
        return self._w.writerow(csv_row(row))

    def writerows(self, rows: Any) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(f: Any) -> _CsvWriter:
    """``csv.writer(f)`` whose rows go through :func:`csv_row`."""
    return _CsvWriter(f)


def visible_any(value: Any, *, keep_newlines: bool = False) -> str:
    """``str(value)`` made visible: for values of unknown type (config values, exceptions)."""
    return visible(value if isinstance(value, str) else str(value), keep_newlines=keep_newlines)


# -- numbers ----------------------------------------------------------------------------------
# Parsed values are outside input too: ``accept len: 1e200`` must not print 200 digits.
FIXED_LIMIT = 1e9  # larger magnitudes are written in scientific notation


def number(value: float | int | None, digits: int = 2, *, signed: bool = False, none: str = "—") -> str:
    """``value`` with ``digits`` decimals, bounded in length whatever it is: scientific notation
    from ``FIXED_LIMIT`` on (``1.00e+200``), ``nan`` / ``inf`` / ``-inf`` as such (true, never a
    made-up number), ``none`` for a missing value. ``signed``: a leading ``+`` on positives."""
    if value is None:
        return none
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < FIXED_LIMIT:
        v: float = value
    else:
        try:
            v = float(value)
        except OverflowError:  # an int beyond any float
            return format(Decimal(value), f"{'+' if signed else ''}.{max(digits, 1)}e")
        except (ValueError, TypeError):
            return visible_any(value)[:40]
    sign = "+" if signed else ""
    if v != v:
        return "nan"
    if v in (math.inf, -math.inf):
        return ("+inf" if signed else "inf") if v > 0 else "-inf"
    if abs(v) >= FIXED_LIMIT:
        return format(v, f"{sign}.{max(digits, 1)}e")
    return format(v, f"{sign}.{digits}f")
