"""Statistics: streaming series, segments, rate definitions, A/B comparison."""

from tui.core.stats.compare import Comparison, compare
from tui.core.stats.metrics import MetricSet
from tui.core.stats.segments import Segment, SourceStats
from tui.core.stats.series import Series

__all__ = ["Comparison", "MetricSet", "Segment", "Series", "SourceStats", "compare"]
