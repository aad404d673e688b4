"""What a start keeps in the user cache (docs/formats.md, "Adding a server family") is found
again whenever what it was read from changes: the entry points of a distribution added, removed
or edited in place, a family's TOML file edited, a third-party text checked against the schema
once and a wrong one never marked as checked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tui.core.formats import families, family_data
from tui.core.formats.family_data import FamilyDataError

GOOD = 'name = "cached_fam"\ndisplay = "Cached"\n'


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("SPECWATCH_CACHE_DIR", str(d))
    return d


def _dist(folder: Path, entry: str) -> Path:
    dist = folder / "cached_fam-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cached-fam\nVersion: 0\n")
    ep = dist / "entry_points.txt"
    ep.write_text(f"[{families.GROUP}]\n{entry}\n")
    return ep


def _bump(path: Path) -> None:
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_entry_points_kept_and_found_again_when_changed(cache, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    assert families._entry_points() == []
    ep = _dist(site, "one = pkg_one")
    assert families._entry_points() == [("one", "pkg_one")]  # a new distribution: found
    assert any(p.name.startswith("entry-points-") for p in cache.iterdir())
    assert families._entry_points() == [("one", "pkg_one")]  # from the cache
    ep.write_text(f"[{families.GROUP}]\ntwo = pkg_two\n")  # edited in place: the folder's time stays
    _bump(ep)
    assert families._entry_points() == [("two", "pkg_two")]


def test_other_files_changing_keep_the_entry_points_cached_in_one_file(cache, tmp_path, monkeypatch):
    """A command started from a folder being written (a log folder: ``python -m tui`` puts it
    on sys.path) still finds the entry points in the cache, and the cache holds one file per
    sys.path however often what it holds changes (before: one per state, growing for ever)."""
    import importlib.metadata

    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    ep = _dist(site, "one = pkg_one")
    assert families._entry_points() == [("one", "pkg_one")]
    for i in range(5):
        (site / f"server.log.{i}").write_text("a line\n")  # the folder's time moves
        _bump(site)

        def walked(**_kw):
            raise AssertionError("the installed distributions were walked again")

        with monkeypatch.context() as m:
            m.setattr(importlib.metadata, "entry_points", walked)
            assert families._entry_points() == [("one", "pkg_one")]
    for i in range(3):  # what the cache holds changes: the same file is rewritten
        ep.write_text(f"[{families.GROUP}]\nv{i} = pkg_{i}\n")
        _bump(ep)
        assert families._entry_points() == [(f"v{i}", f"pkg_{i}")]
    assert len([p for p in cache.iterdir() if p.name.startswith("entry-points-")]) == 1


def test_nothing_kept_with_an_empty_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECWATCH_CACHE_DIR", "")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert families._entry_points() == [] and family_data.cache_dir() is None
    assert list(tmp_path.iterdir()) == []


def test_family_toml_parsed_again_when_edited(cache, tmp_path):
    folder = tmp_path / "fam"
    folder.mkdir()
    f = folder / family_data.FILE
    f.write_text(GOOD)
    assert family_data.load(folder, validate=False).display == "Cached"
    assert family_data.load(folder, validate=False).display == "Cached"  # from the cache
    f.write_text(GOOD.replace("Cached", "Edited"))
    _bump(f)
    assert family_data.load(folder, validate=False).display == "Edited"


def test_a_text_is_marked_checked_only_when_it_passes(cache, tmp_path):
    folder = tmp_path / "fam"
    folder.mkdir()
    f = folder / family_data.FILE
    f.write_text(GOOD + "order = 'first'\n")  # not an integer: the schema refuses it
    with pytest.raises(FamilyDataError, match="order"):
        family_data.load(folder)
    assert not (cache / "checked-families").exists()
    with pytest.raises(FamilyDataError, match="order"):  # still checked: refused again
        family_data.load(folder)
    f.write_text(GOOD)
    assert family_data.load(folder).name == "cached_fam"
    assert len(list((cache / "checked-families").iterdir())) == 1
    assert family_data.load(folder).name == "cached_fam"
