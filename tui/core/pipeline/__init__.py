"""One way from a source to statistics: following live sources, reading whole ones, and the
status a source is in."""
