"""specwatch's statistics as Prometheus metric families."""
