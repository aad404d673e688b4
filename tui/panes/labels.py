"""The label policy of the pane headers (pure Python: no Textual here).

A pane's label is never dropped for its status. When the labels of the panes on the screen must
be shortened, what they all share at the start and at the end is elided (``…node05…``,
``…broken.log``), never a middle they share, so the part that tells them apart survives. Every
status has a short form (``live · 11 d old``, ``idle 3 min``, ``reconnecting 2``) used when space is
short, and nothing is cut mid-word without ``…``. The widgets only draw what :func:`fit_header`
chose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

SEPARATORS = "-_./ :@,+=()[]"
ELLIPSIS = "…"
LABEL_MIN = 16  # cells of a label kept before the counts are shown beside it


def elide_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, cut in the middle (``sglang-ea…run-fixed.log``): the
    start and the end of a name, where file names differ, both survive."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail_w = width // 2  # the end gets the extra cell: extensions and run suffixes
    head_w = width - 1 - tail_w
    head, tail = "", ""
    for ch in text:
        if cell_len(head + ch) > head_w:
            break
        head += ch
    for ch in reversed(text):
        if cell_len(ch + tail) > tail_w:
            break
        tail = ch + tail
    return head + ELLIPSIS + tail


def shared_ends(labels: Sequence[str]) -> tuple[int, int]:
    """(start, end): how many characters every label shares at its start and at its end, cut
    back to a separator (``eagle3-…-node01-tp8.log`` … ``node16``: the start up to ``-node``'s
    dash, the end from ``-tp8``'s dash), so that a word that differs stays whole. (0, 0) for one
    label or none."""
    labels = list(dict.fromkeys(labels))
    if len(labels) < 2:
        return 0, 0
    shortest = min(len(lab) for lab in labels)
    start = len(os.path.commonprefix(labels))
    while start > 0 and labels[0][start - 1] not in SEPARATORS:
        start -= 1
    end = len(os.path.commonprefix([lab[::-1] for lab in labels]))
    end = min(end, shortest - start)  # never past the shared start (a label inside another)
    while end > 0 and labels[0][len(labels[0]) - end] not in SEPARATORS:
        end -= 1
    if start + end >= shortest:  # one label is nothing but the shared parts: keep its end
        end = 0
    return start, end


def label_core(label: str, peers: Sequence[str] = ()) -> str:
    """The part of ``label`` that tells it from ``peers`` (every shown label), with ``…`` where
    a shared start or end was left out."""
    labels = [label, *peers] if label not in peers else list(peers)
    start, end = shared_ends(labels)
    core = label[start : len(label) - end]
    return (ELLIPSIS if start else "") + core + (ELLIPSIS if end else "")


def fit_label(label: str, width: int, peers: Sequence[str] = ()) -> str:
    """``label`` in ``width`` cells, told apart from its ``peers``: whole when it fits; else as
    much as fits of its own end with the shared start elided (``…run-broken.log``); else its
    core (:func:`label_core`); else that core cut in the middle (with ``…``)."""
    if cell_len(label) <= width:
        return label
    labels = [label, *peers] if label not in peers else list(peers)
    start, end = shared_ends(labels)
    if start:
        # as much of the shared start as there is room for (never "……" or "…:…": a label may
        # hold an ellipsis of its own, the remote path shortened, ``gpu1:…/blue/server.log``)
        for cut in range(1, start + 1):
            form = ELLIPSIS + label[cut:]
            if cell_len(form) <= width and not label[cut:].lstrip(SEPARATORS).startswith(ELLIPSIS):
                return form
    core = label_core(label, peers)
    if (start or end) and cell_len(core) <= width:
        return core
    return elide_middle(core if (start or end) else label, max(1, width))


_LIVE_OLD = re.compile(r"^live \(last line (.+?) ago(?:,.*)?\)$")
_IDLE = re.compile(r"^idle for ([^,]+)(?:,.*)?$")
_RECONNECTING = re.compile(r"^reconnecting \(attempt (\d+)\)$")
_REPLAYING = re.compile(r"^replaying \S+ (\d+%)$")


def short_status(status: str) -> str:
    """The short form of a status text of :meth:`tui.panes.state.PaneState.status_text`:
    ``live · 11 d old``, ``idle 3 min``, ``reconnecting 2``, ``error``, ``replay 45%`` (the text
    itself when it is short already)."""
    for pattern, form in (
        (_LIVE_OLD, "live · {} old"),
        (_IDLE, "idle {}"),
        (_RECONNECTING, "reconnecting {}"),
        (_REPLAYING, "replay {}"),
    ):
        m = pattern.match(status)
        if m:
            return form.format(m.group(1))
    word = status.split(" (", 1)[0]
    return word if word != status else status


def status_forms(status: str, frozen: bool = False) -> tuple[str, ...]:
    """The status, longest form first, each whole (the last: its first word)."""
    forms = [status, short_status(status), status.split(" ", 1)[0]]
    if frozen:
        forms = [f"view frozen · {forms[0]}", f"frozen · {forms[1]}", f"frozen · {forms[2]}", "frozen"]
    return tuple(dict.fromkeys(forms))


MESSAGES = ("error (", "waiting (")  # statuses whose words say why: cut at a word, not dropped


def _words(text: str, width: int) -> str:
    """The first words of ``text`` that fit ``width`` cells with a closing ``…)``."""
    out = ""
    for word in text.split(" "):
        nxt = f"{out} {word}" if out else word
        if cell_len(nxt) + 2 > width:
            break
        out = nxt
    return f"{out} …)" if out and out != text else out


@dataclass(frozen=True)
class HeaderFit:
    """What a header of ``width`` cells shows: ``● [tag] label  where ··· counts  status``."""

    tag: str
    label: str
    where: str
    counts: str
    status: str

    @property
    def text(self) -> str:
        left = "● " + (f"{self.tag} " if self.tag else "") + self.label
        if self.where:
            left += "  " + self.where
        right = (f"{self.counts}  " if self.counts else "") + self.status
        return left + " " + right


def fit_header(
    label: str,
    status: str,
    width: int,
    *,
    peers: Sequence[str] = (),
    tag: str = "",
    where: str = "",
    extra: str = "",
    frozen: bool = False,
) -> HeaderFit:
    """The header's parts for ``width`` cells, in this order of need: the label's core and a
    status form (short when space is short), then the label whole, then the status whole, then
    the counts (``extra``, or its last part; whole or not at all), then where it reads from."""
    fixed = 2 + (cell_len(tag) + 1 if tag else 0) + 1  # "● ", the tag, one gap
    room = max(1, width - fixed)
    forms = status_forms(status, frozen)
    least = min(cell_len(label_core(label, peers)), 12)  # a longer core is cut before the status gives way
    shown_status = forms[-1]
    for i, form in enumerate(forms):
        need = cell_len(label) if i == 0 else least  # the long status only beside the whole label
        if need + cell_len(form) <= room:
            shown_status = form
            break
    if shown_status != forms[0] and status.startswith(MESSAGES) and not frozen:
        # a message (why it failed, what it waits for): as many of its words as fit, then "…"
        cut = _words(status, room - min(cell_len(label), room // 2) - 1)
        if cell_len(cut) > cell_len(shown_status) + 4:
            shown_status = cut
    if cell_len(shown_status) > room - 1:
        shown_status = shown_status[: max(0, room - 2)].rstrip() + ELLIPSIS
    left_room = max(1, room - cell_len(shown_status))
    # the counts (whole or not at all: a number is never cut) beside the label's core, given at
    # least LABEL_MIN cells, or whole
    need = cell_len(label)  # beside the whole label when it fits, else beside its core (or LABEL_MIN)
    if need > left_room:
        need = min(need, max(cell_len(label_core(label, peers)), LABEL_MIN))
    counts = ""
    for form in (extra, extra.rsplit(" · ", 1)[-1]) if extra else ():
        if need + 2 + cell_len(form) <= left_room:
            counts = form
            break
    left_room -= cell_len(counts) + 2 if counts else 0
    shown = fit_label(label, left_room, peers)
    shown_where = ""
    if (
        where
        and where != label
        and shown == label
        and shown_status == forms[0]
        and (cell_len(label) + 2 + cell_len(where) <= left_room)
    ):
        shown_where = where
    return HeaderFit(tag, shown, shown_where, counts, shown_status)


def title_of(labels: Sequence[str]) -> str:
    """The sources in a title: ``a · b`` for two; three or more that share a start or an end as
    one name with what differs in braces (``eagle3-…-node{01,02,…}-tp8.log``), so the title shows
    which sources they are before the terminal cuts it."""
    labels = list(labels)
    start, end = shared_ends(labels)
    if len(labels) < 3 or not (start or end):
        return " · ".join(labels)
    cores = ",".join(lab[start : len(lab) - end] for lab in labels)
    first = labels[0]
    return f"{first[:start]}{{{cores}}}{first[len(first) - end :]}"
