"""Compressed copies of the sample logs and their summaries compared without the keys that name
the file read (the compressed-log tests, local and over SSH)."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "sample_logs").glob("*.log"))
COMPRESS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zst": lambda b: zstandard.ZstdCompressor().compress(b),
}
NAMED = {"source", "label", "files", "config_path"}  # the keys that name where a file is


def without_names(obj):
    """``obj`` (a summary's JSON) without the keys of :data:`NAMED`, at every depth."""
    if isinstance(obj, dict):
        return {k: without_names(v) for k, v in obj.items() if k not in NAMED}
    if isinstance(obj, list):
        return [without_names(v) for v in obj]
    return obj
