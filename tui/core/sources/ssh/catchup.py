"""Every generation, by identity, over SSH: after a rotation (connected) and after a reconnect
that finds another file at the name, the rotated set is listed on the host (:data:`.scripts.SET`),
:func:`tui.core.sources.generations.plan` says what was not read to its end, and each of those
files is read in order (plain: the reader from the byte it was read to, not following; compressed:
``cat``, decompressed here), then the file at the name is opened -- only if it is still the one
the listing found there (reader mode ``expect``), else the set is listed again. One ``rotated``
event says what was read (file, bytes, lines) and what is gone from disk (``lost``, with a count).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING

from tui.core.sources.base import Batch, EventKind
from tui.core.sources.compressed import SUFFIXES, Inflater, sniff
from tui.core.sources.generations import Gen, Listed, Plan, plan, read_note, read_phrase, remember
from tui.core.sources.identity import WINDOW, Decision, cksum, plural
from tui.core.sources.lines import make_batch
from tui.core.sources.rotation import history_order, rotation_key
from tui.core.sources.ssh.remote_side import Entry, parse_set
from tui.core.sources.ssh.scripts import gen_command, set_command
from tui.core.sources.ssh.shared import ChannelRefused
from tui.core.sources.ssh.state import CatchUp

if TYPE_CHECKING:
    from tui.core.sources.ssh.opening import Opener

# listings in a row that read no file (a rotation while it reads lists again; a storm of rotations
# goes on as long as each listing's files are read: counted from the last file read)
MAX_ROUNDS = 50
HEAD_FETCH = 1 << 16  # compressed bytes fetched to see a compressed file's first bytes
HEAD_ROUNDS = 8  # listings when compressed files are renamed while their heads are fetched


def current_gen(op: Opener) -> Gen | None:
    """The generation being read now (joined to the chain, with how far it was read)."""
    f = op.file
    if f.identity is None:
        return None
    g = next((g for g in f.chain if g.identity == f.identity), None)
    fp = f.fingerprint
    if g is not None and fp.base == 0 and not (fp.head.startswith(g.head) or g.head.startswith(fp.head)):
        f.chain.remove(g)  # another file on the same inode (the old one was deleted)
        g = None
    if g is None:
        g = Gen(f.identity, name=f.current or op.src.rp.base, mtime=f.mtime)
    g.pos, g.line_no = f.splitter.pos, f.splitter.line_no
    g.size = max(g.size, op.cs.open_size or 0, g.pos)
    if fp.base == 0 and len(fp.head) > len(g.head):
        g.head = bytes(fp.head)
    g.name = f.current or g.name
    remember(f.chain, g)
    return g


async def begin(op: Opener, d: Decision | None = None, old: Entry | None = None) -> AsyncIterator[Batch]:
    """Starts (or continues) a catch-up; ``d``: how the old file was finished (connected), or what
    a probe found; ``old``: where the probe found the old file (outside the set, perhaps)."""
    src, cs = op.src, op.cs
    b = make_batch(src.name, op.file.splitter.flush(), op.display(op.file.current))
    if b is not None:
        yield b
    g = current_gen(op)
    if g is not None and d is not None and d.old_rest == "read":
        g.closed = True  # read to its end through the live tail (it was quiet)
    if op.file.catchup is None:
        op.file.catchup = CatchUp(op.file.identity, op.file.current, op.file.splitter.pos)
        if d is not None and d.old_rest == "read" and d.old_note:
            op.file.catchup.first_note = d.old_note
    cu = op.file.catchup
    cu.rounds += 1
    try:
        listing, p = await _planned(op, old)
    except ChannelRefused as exc:
        op.refused_for_now(exc)
        return
    for gone in p.lost_known:
        gone.closed = True  # said once
        cu.lost_ids.add(gone.identity)
    cu.lost += p.lost
    cu.lost_generations += p.lost_generations
    cs.steps = list(p.steps)
    cu.expect = p.live.identity if p.live is not None else None
    known = next((k for k in op.file.chain if p.live is not None and k.identity == p.live.identity), None)
    same = known is not None and p.live is not None and p.live.same is not False and p.live.size >= known.pos
    cu.expect_from = known.pos if same and known is not None else 0  # (a reused inode: from the start)
    for e in listing:
        for k in op.file.chain:
            if k.identity == e.identity and e.compression is None:
                k.mtime = max(k.mtime, e.mtime)
    async for x in next_step(op):
        yield x


async def _planned(op: Opener, old: Entry | None) -> tuple[list[Listed], Plan]:
    """The rotated set listed and planned. A compressed file whose first bytes decide is fetched;
    when one was renamed between the listing and its fetch (the set rotated meanwhile: its head
    would be unknown, and the known generation it holds taken for lost) the set is listed again
    (heads fetched before are kept by identity, which a rename keeps)."""
    base = op.src.rp.base
    for round_no in range(1, HEAD_ROUNDS + 1):
        listing = await _list(op, old)
        p = plan(op.file.chain, listing, base, _ordered(listing))
        if not p.needs_heads:
            return listing, p
        fetched, renamed = [], False
        for e in listing:
            if e.name in p.needs_heads and (not renamed or round_no == HEAD_ROUNDS):
                e, gone = await _with_head(op, e)  # (after a rename: listed again at once)
                renamed = renamed or gone
            fetched.append(e)
        if not renamed:
            break
    # (after HEAD_ROUNDS listings that each saw a rename, an unknown head is taken as no match)
    return fetched, plan(op.file.chain, fetched, base, _ordered(fetched))


def _ordered(listing: list[Listed]) -> list[str]:
    return history_order([e.name for e in listing], {e.name: e.mtime for e in listing})


async def _list(op: Opener, old: Entry | None) -> list[Listed]:
    src = op.src
    # every known generation's first bytes: an inode freed and reused by a new file is told apart
    known = {g.identity: [(0, len(g.head))] for g in op.file.chain if g.head}
    out = await op.run_raw(set_command(src.tag, src.rp, known))
    entries, sums, _ = parse_set(out, src.tag)
    base = src.rp.base
    found: list[Listed] = []
    names = set()
    for e in entries:
        if not e.regular or (e.name != base and rotation_key(e.name)[0] != base):
            continue
        names.add(e.name)
        found.append(_listed(op, e, sums.get(e.identity, {})))
    if old is not None and old.name not in names and old.regular:
        found.append(_listed(op, Entry(old.kind, old.identity, old.size, 0.0, old.name), {}))
    return found


def _listed(op: Opener, e: Entry, sums: dict) -> Listed:
    g = next((g for g in op.file.chain if g.identity == e.identity), None)
    same = None
    if g is not None and g.head and e.size >= len(g.head):
        got = sums.get((0, len(g.head)))
        same = None if got is None else (got == (cksum(g.head), len(g.head)))
    kind = _compression(e.name)
    return Listed(e.name, e.identity, e.size, e.mtime, kind, same, op.file.heads.get((e.identity, e.size)))


def _compression(name: str) -> str | None:
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return None


async def _with_head(op: Opener, e: Listed) -> tuple[Listed, bool]:
    """``e`` with its first decompressed bytes (the first :data:`HEAD_FETCH` compressed bytes),
    and whether it was renamed or replaced since the listing (its head then unknown: empty)."""
    raw = await op.run_raw(gen_command(op.src.tag, op.src.rp, e.name, 0, HEAD_FETCH, (e.identity, e.size)))
    mark = op.src.tag.encode() + b" H ok " + e.identity.encode() + b" "
    i = raw.find(mark)
    if i < 0:  # renamed (or replaced) since the listing
        return Listed(e.name, e.identity, e.size, e.mtime, e.compression, e.same, b""), True
    data = raw[raw.find(b"\n", i) + 1 :]
    kind = sniff(data[:16]) or e.compression
    head = b""
    if kind:
        inf = Inflater(kind)
        for piece in inf.feed(data):
            head += piece
            if len(head) >= WINDOW:
                break
    if len(op.file.heads) > 256:
        op.file.heads.clear()
    op.file.heads[(e.identity, e.size)] = head[:WINDOW]
    return Listed(e.name, e.identity, e.size, e.mtime, kind, e.same, head[:WINDOW]), False


async def reprobe(op: Opener, name: str) -> AsyncIterator[Batch]:
    """The file read is not where it was (``moved``): a probe says what happened; a rotation
    (another file at the name, or none) is a catch-up of the rotated set (:mod:`.catchup`)."""
    f = op.file
    if op.src.rp.glob or not op.src.follow or f.identity is None:
        await op.open(name, probe=True)
        return
    op.cs.probed = (f.identity, f.splitter.pos)
    try:
        d = await op.probe(name, f.identity)
    except ChannelRefused as exc:
        op.refused_for_now(exc)
        return
    if d.action in ("rotated", "missing") or (
        d.action == "restart" and d.old_rest == "lost" and await _elsewhere(op)
    ):
        # (a restart whose old bytes are in no plain copy: they may be in a compressed one, or the
        # file was rotated away and a new one got its inode)
        async for b in begin(op, None, op.probed_old):
            yield b
        return
    await op.open(name, probe=True, decided=d)


async def _elsewhere(op: Opener) -> bool:
    """Whether the file read (its first bytes) is in the rotated set under another name."""
    g = current_gen(op)
    if g is None or not g.head:
        return False
    try:
        _, p = await _planned(op, None)
    except ChannelRefused:
        return False
    return any(st.gen is g and st.name != op.src.rp.base for st in p.steps)


async def step_header(op: Opener, fields: list[str]) -> AsyncIterator[Batch]:
    """The header of a catch-up file's reader: it must still be the file listed, long enough."""
    st = op.cs.step
    assert st is not None
    size = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else -1
    if not (fields[:2] == ["ok", st.identity] and (st.compression is not None or size >= st.start)):
        async for b in step_done(op, False):
            yield b
        return
    if len(fields) > 3:  # found under the name a rotation gave it since the listing
        op.cs.step = replace(st, name=op.src.rp.base + fields[3])
        op.file.current = op.cs.pending_name = op.cs.step.name


async def next_step(op: Opener) -> AsyncIterator[Batch]:
    """Reads the next file of the plan, or opens the file at the name (expecting the one listed)."""
    src, cs, f = op.src, op.cs, op.file
    cu = op.file.catchup
    assert cu is not None
    op.prepare()
    cs.verified = True
    if cs.steps:
        step = cs.steps.pop(0)
        cs.step = step
        line_no = step.gen.line_no if step.gen is not None else 1
        f.splitter.reset(step.start, line_no)
        f.fingerprint.reset(step.start)
        f.identity, f.current = step.identity, step.name
        cs.pending_name = step.name
        cs.drain_from_line = line_no
        if step.compression is not None:
            cs.inflater, cs.skip = Inflater(step.compression, whole_lines=True), step.start
            cmd = gen_command(src.tag, src.rp, step.name, 0, listed=(step.identity, step.size))
        else:
            cs.inflater, cs.skip = None, 0
            cmd = gen_command(src.tag, src.rp, step.name, step.start, listed=(step.identity, step.size))
        await op.start_reader(cmd)
        return
    cs.step = None
    cs.inflater = None
    base = src.rp.base
    cs.pending_name = base
    cs.verified = not src.follow
    if cu.expect is None:  # nothing at the name now: said, then waited for
        async for x in finish(op, None, 0, 0, 1):
            yield x
        await op.start_reader(src.reader_for(base, "first" if f.identity is None else "resume", offset=0))
        return
    await op.start_reader(src.reader_for(base, "expect", offset=cu.expect_from, expect=cu.expect))


async def step_done(op: Opener, whole: bool) -> AsyncIterator[Batch]:
    """The reader of a step ended (``whole``: at the file's end)."""
    cs, f = op.cs, op.file
    step, cu = cs.step, op.file.catchup
    assert step is not None and cu is not None
    inf = cs.inflater
    if isinstance(inf, Inflater):
        inf.finish()
        tail = inf.take_tail()
        if tail and not inf.cut_at_end:
            b = op.feed_plain(tail)
            if b is not None:
                yield b
    b = make_batch(op.src.name, f.splitter.flush(), op.display(step.name))
    if b is not None:
        yield b
    g = step.gen or Gen(step.identity, name=step.name)
    if step.gen is None and f.fingerprint.base == 0:
        g.head = bytes(f.fingerprint.head)
    lines = f.splitter.line_no - cs.drain_from_line
    end = f.splitter.pos
    if whole:
        g.pos, g.line_no, g.closed, g.name = end, f.splitter.line_no, True, step.name
        g.size = max(g.size, end)
        remember(f.chain, g)
        cu.rounds = 0
        cu.read_ids.append(g.identity)
        cu.read.append(
            {
                "path": op.display(step.name),
                "from": step.start,
                "to": end,
                "lines": lines,
                "compression": step.compression,
            }
        )
        cu.notes.append(read_note(step.name, step.start, end, lines, step.compression))
        if isinstance(inf, Inflater) and inf.problem:
            cu.notes[-1] += f" ({inf.problem})"
    cs.step, cs.inflater = None, None
    if not whole and step.gen is None and end == step.start:
        f.identity = None  # nothing of it was read: it is found again by the next listing
    if not whole and cu.rounds < MAX_ROUNDS:  # gone from the set since the listing: list again
        cs.steps = []
        async for x in begin(op):
            yield x
        return
    if not whole:  # (the set changed under every one of MAX_ROUNDS listings) said, never dropped
        cu.lost.append(
            f"{step.name} (from byte {step.start}) could not be read: the rotated set changed "
            f"under each of {cu.rounds} listings"
        )
        if step.gen is None:
            cu.lost_generations += 1
    async for x in next_step(op):
        yield x


async def finish(
    op: Opener, identity: str | None, size: int, start: int, line_no: int
) -> AsyncIterator[Batch]:
    """The catch-up is over: the file ``identity`` at the name is read from ``start`` (None:
    there is none now); one ``rotated`` event says what was read and what is gone."""
    cs, f, src = op.cs, op.file, op.src
    cu = f.catchup
    assert cu is not None
    name = src.rp.base
    if identity is None:  # nothing at the name: the event waits for the file that comes there
        f.current = name
        if not cs.waiting_said:
            cs.waiting_said = True
            what = "; ".join(cu.notes) if cu.notes else ""
            yield op.ev(
                EventKind.WAITING,
                f"{op.display(name)} was removed or renamed{'; read ' + what if what else ''}; "
                "waiting for it to come back",
                name,
            )
        return
    f.catchup = None
    parts = []
    if cu.first_note:
        parts.append(cu.first_note)
    if cu.notes:
        parts.append(read_phrase(cu.notes, sum(g["lines"] for g in cu.read)))
    if cu.lost:
        parts.append("lost: " + "; ".join(cu.lost))
    if not parts:
        parts.append("finished reading the old one")
    if cu.prev_identity in cu.lost_ids:
        rest = "lost"
    elif cu.read_ids and cu.read_ids[0] == cu.prev_identity:
        rest = "drain"
    else:
        rest = "read"
    data: dict = {
        "old_path": op.display(cu.prev_name),
        "old_inode": _inode(cu.prev_identity),
        "old_read_to": cu.prev_pos,
        "old_rest": rest,
        "generations": cu.read,
        "lost": cu.lost,
        "lost_generations": cu.lost_generations,
    }
    first = cu.read[0] if cu.read and rest == "drain" else None
    if first is not None:
        data.update(
            rest_path=first["path"], rest_from=first["from"], rest_to=first["to"], rest_lines=first["lines"]
        )
    f.splitter.reset(start, line_no)
    f.fingerprint.reset(start)
    f.identity, f.current = identity, name
    data["inode"] = _inode(identity)
    how = (
        "was rewritten on the same inode (copy-truncated, or a new file on a freed inode)"
        if identity == cu.prev_identity
        else "now points at a new file (rotated)"
    )
    msg = f"{op.display(name)} {how}; {'; '.join(parts)}; reading the new one"
    if cu.lost_generations:
        msg += f" ({plural(cu.lost_generations, 'generation')} lost)"
    yield op.ev(EventKind.ROTATED, msg, name, **data)


def _inode(identity: str | None) -> int | None:
    try:
        return int(identity.split(":")[1]) if identity else None
    except (IndexError, ValueError):
        return None
