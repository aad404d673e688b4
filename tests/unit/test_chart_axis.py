"""The chart's axes and its plotext drawing, without an app: wall-clock ticks by the log's clock,
points thinned to the plot's dots, strips of the exact size, outside text inert, a hint when the
size cannot hold the axes."""

from __future__ import annotations

import calendar

from tui.widgets.chart_axis import thin, time_ticks
from tui.widgets.history_chart import ChartData, ChartSeries, build_strips

COLOURS = {"primary": (80, 160, 255), "accent": (255, 160, 0), "foreground-muted": (128, 128, 128)}


def naive(text: str) -> float:
    """A log's printed time as naive seconds (its fields, timegm'd, as the app keeps them)."""
    return float(
        calendar.timegm(tuple(map(int, text.replace("-", " ").replace(":", " ").split())) + (0, 0, 0))
    )


def test_time_ticks_are_round_wall_clock_times_of_the_log():
    ticks, labels = time_ticks(naive("2026-11-20 09:00:01"), naive("2026-11-20 09:21:44"), 5)
    assert labels == ["09:05", "09:10", "09:15", "09:20"]
    assert ticks[0] == naive("2026-11-20 09:05:00")


def test_time_ticks_show_seconds_for_short_spans_and_the_date_across_midnight():
    _, labels = time_ticks(naive("2026-11-20 09:00:01"), naive("2026-11-20 09:00:50"), 4)
    assert labels[0] == "09:00:15" and all(len(t) == 8 for t in labels)
    _, labels = time_ticks(naive("2026-11-20 23:40:00"), naive("2026-11-21 00:20:00"), 4)
    assert labels == ["11-20 23:40", "23:50", "11-21 00:00", "00:10", "00:20"]


def test_thin_keeps_at_most_one_mean_point_per_bucket():
    xs = [float(i) for i in range(1000)]
    ys = [float(i % 2) for i in range(1000)]
    tx, ty = thin(xs, ys, 100)
    assert len(tx) == 100 and all(abs(y - 0.5) < 1e-9 for y in ty)
    assert thin(xs[:50], ys[:50], 100) == (xs[:50], ys[:50])


def test_build_strips_exact_size_time_ticks_and_inert_labels():
    xs = [naive("2026-11-20 09:00:00") + 2 * i for i in range(600)]
    data = ChartData(
        [ChartSeries("accept len", xs, [2.0 + (i % 7) / 10 for i in range(600)])],
        [(xs[300], "seg 1: \x1b[31mred\x1b[0m", "accent")],
        [],
        (1.0, 3.0),
        xlabel="accept len (x: time by the log's clock)",
        time_axis=True,
    )
    strips = build_strips(data, 100, 20, COLOURS)
    assert len(strips) == 20 and all(s.cell_length == 100 for s in strips)
    text = "\n".join(s.text for s in strips)
    assert "09:05" in text and "09:15" in text and "x: time by the log's clock" in text
    assert "\x1b" not in text and "seg 1: ␛[31mred" in text  # the label shown, never obeyed


def test_build_strips_gives_a_hint_where_axes_and_legend_do_not_fit():
    two = ChartData([ChartSeries("a", [0.0, 1.0], [1.0, 2.0]), ChartSeries("b", [0.0, 1.0], [2.0, 1.0])])
    strips = build_strips(two, 78, 6, COLOURS)
    assert len(strips) == 6 and all(s.cell_length == 78 for s in strips)
    assert "no room for the chart's axes here" in "".join(s.text for s in strips)
