"""llama.cpp's part of the one grammar (:mod:`tui.core.formats.grammar`): its anchors, the
``print_timing`` draft-acceptance line shape, its line prefix."""

from __future__ import annotations

from tui.core.formats.shapes import FLOAT, INT, Field, Lit, OneOf, Opt, Prefix, Shape, Spaces

TIMING = "draft acceptance"
STATS = "#gen drafts ="  # "statistics <impl>: ..." (cumulative counters)
GRAPHS = "graphs reused ="  # print_timing's line before the draft line: compute graphs reused
# startup lines of llama-server (its elapsed clock starts again at 0.0x): a restart marker. Builds
# to late 2025 print "build: N (commit) with CC for TARGET" (common/common.cpp, not an anchor: too
# short a text for the scanners' skip loop) then "system info: n_threads = ..." (tools/server/
# server.cpp, INFO); later ones "cmn  common_param: common_params_print_info: build N (commit) with
# ..." (trace level) and the server's first line "srv          main: initializing ...".
SYSTEM_INFO = "system info: n_threads"
BUILD_INFO = "print_info: build "
INIT = "main: initializing"

# groups 1-4: minutes, seconds, ms, us since the server started; the slot and task
PREFIX = Prefix(r"(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) I slot print_timing: id +\d+ \| task +\d+ \| ", 4)

TIMING_SHAPE = Shape(
    "llamacpp",
    "timing",
    PREFIX,
    TIMING,
    (
        Opt((Lit(" rate"),)),  # the old form: "draft acceptance rate = ..."
        Lit(" ="),
        Spaces(),
        Field(FLOAT, "accept_rate"),
        Spaces(),
        Lit("("),
        Spaces(),
        Field(INT, "accepted"),
        Lit(" accepted"),
        Spaces(),
        Lit("/"),
        Spaces(),
        Field(INT, "drafted"),
        Lit(" generated)"),
        # "mean acceptance length =" (PR #24536 review form), "mean len =" (the merged form)
        Opt(
            (
                Lit(", mean "),
                OneOf(("acceptance length", "len")),
                Lit(" ="),
                Spaces(),
                Field(FLOAT, "accept_len"),
            )
        ),
        Opt((Lit(", acceptance rate per position = ("), Field("list", "per_position"), Lit(")"))),
    ),
)
