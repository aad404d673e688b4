"""llama.cpp's part of the one grammar (:mod:`tui.core.formats.grammar`), read from its data
(``family.toml``): its anchors, its marker texts, the ``print_timing`` draft-acceptance shape."""

from __future__ import annotations

from tui.core.formats.families import data

DATA = data("llamacpp")
TIMING = DATA.anchors["timing"]
STATS = DATA.anchors["stats"]
GRAPHS = DATA.anchors["graphs"]
STEP = DATA.anchors["step"]
SYSTEM_INFO = DATA.markers["system_info"]
BUILD_INFO = DATA.markers["build_info"]
INIT = DATA.markers["init"]
SYNTHETIC_ON = DATA.markers["synthetic_on"]
SYNTHETIC = DATA.markers["synthetic"]

TIMING_SHAPE = DATA.shape_of("timing")
PREFIX = TIMING_SHAPE.prefix
