"""The fleet view over Prometheus: queries built from each family's series (query), one row per
serving instance (rows), groups and canary verdicts (groups), one refresh (fetch), JSON and text
(report)."""
