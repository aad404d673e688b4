"""The plan of a catch-up (tui/core/sources/generations.py): what is read of a rotated set, in
which order, from which byte, and what is named as gone."""

from __future__ import annotations

from tui.core.sources.generations import Gen, Listed, plan, read_note, read_phrase
from tui.core.sources.rotation import history_order


def lines(a: int, n: int) -> bytes:
    return b"".join(b"L %06d\n" % i for i in range(a, a + n))


def run(chain: list[Gen], listing: list[Listed]):
    ordered = history_order([e.name for e in listing], {e.name: e.mtime for e in listing})
    return plan(chain, listing, "srv.log", ordered)


def test_three_rotations_read_the_rest_then_every_new_generation_oldest_first() -> None:
    old = Gen("1:10", pos=90, size=90, head=lines(1, 10), name="srv.log")
    listing = [
        Listed("srv.log.4", "1:5", 10, 1.0),  # older than anything read: not read
        Listed("srv.log.3", "1:10", 180, 2.0, same=True),  # the old file, grown after it was read
        Listed("srv.log.2", "1:11", 90, 3.0),
        Listed("srv.log.1", "1:12", 90, 4.0),
        Listed("srv.log", "1:13", 45, 5.0),
    ]
    p = run([old], listing)
    assert [(s.name, s.start, s.gen is old) for s in p.steps] == [
        ("srv.log.3", 90, True),
        ("srv.log.2", 0, False),
        ("srv.log.1", 0, False),
    ]
    assert p.live is not None and p.live.identity == "1:13" and not p.lost and p.lost_generations == 0


def test_a_compressed_copy_is_known_by_its_first_bytes() -> None:
    read = Gen("1:10", pos=90, size=90, head=lines(1, 10), name="srv.log", closed=True)
    half = Gen("1:11", pos=45, size=45, head=lines(11, 5), name="srv.log.1")
    listing = [
        Listed("srv.log.3.gz", "1:20", 40, 1.0, "gzip"),
        Listed("srv.log.2.gz", "1:21", 40, 2.0, "gzip"),
        Listed("srv.log.1", "1:12", 90, 3.0),
        Listed("srv.log", "1:13", 9, 4.0),
    ]
    p = run([read, half], listing)
    assert sorted(p.needs_heads) == ["srv.log.2.gz", "srv.log.3.gz"]  # fetched, then planned again
    listing[0] = Listed("srv.log.3.gz", "1:20", 40, 1.0, "gzip", head=lines(1, 10))
    listing[1] = Listed("srv.log.2.gz", "1:21", 40, 2.0, "gzip", head=lines(11, 10))
    p = run([read, half], listing)
    # the one read to its end is not read again; the one read half way goes on from its byte
    assert [(s.name, s.start) for s in p.steps] == [("srv.log.2.gz", 45), ("srv.log.1", 0)]
    assert not p.lost


def test_a_missing_number_is_a_generation_gone_unseen_and_a_known_one_gone_is_lost() -> None:
    old = Gen("1:10", pos=90, size=90, head=lines(1, 10), name="srv.log")
    listing = [
        Listed("srv.log.4", "1:10", 90, 1.0, same=True),
        Listed("srv.log.3", "1:11", 90, 2.0),
        Listed("srv.log.1", "1:13", 90, 4.0),
        Listed("srv.log", "1:14", 9, 5.0),
    ]
    p = run([old], listing)
    assert [s.name for s in p.steps] == ["srv.log.3", "srv.log.1"]
    assert p.lost_generations == 1 and "no srv.log.2 between srv.log.4 and srv.log" in p.lost[0]
    gone = Gen("1:99", pos=50, size=70, head=lines(500, 5), name="srv.log")
    p = run([gone], [Listed("srv.log", "1:14", 9, 5.0)])
    assert p.lost_known == [gone] and "read to byte 50 (it was at least 70 bytes long)" in p.lost[0]
    assert not p.steps


def test_the_same_inode_with_other_bytes_is_not_the_generation_read() -> None:
    old = Gen("1:10", pos=90, size=90, head=lines(1, 10), name="srv.log")
    listing = [Listed("srv.log.1", "1:10", 200, 1.0, same=False), Listed("srv.log", "1:11", 9, 2.0)]
    p = run([old], listing)
    assert p.lost_known == [old] and not [s for s in p.steps if s.gen is old]


def test_a_storm_of_rotations_is_said_in_a_line_of_its_own_size() -> None:
    """Tens of files read in one catch-up (a rotation every 0.2 s): the event names the first three
    and the last two and counts the rest and the lines; a few are all named."""
    notes = [read_note(f"srv.log.{n}", 0, 108, 12, None) for n in range(40, 0, -1)]
    text = read_phrase(notes, 480)
    assert text == (
        "then read what was left in 40 files of the rotated set (480 lines in all), oldest first: "
        "srv.log.40 (bytes 0 to 108, 12 lines), srv.log.39 (bytes 0 to 108, 12 lines), "
        "srv.log.38 (bytes 0 to 108, 12 lines), … 35 more …, srv.log.2 (bytes 0 to 108, 12 lines), "
        "srv.log.1 (bytes 0 to 108, 12 lines)"
    )
    few = read_phrase(notes[-2:], 24)
    assert few == (
        "then read what was left in 2 files of the rotated set, oldest first: "
        "srv.log.2 (bytes 0 to 108, 12 lines), srv.log.1 (bytes 0 to 108, 12 lines)"
    )
