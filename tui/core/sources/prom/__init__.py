"""Prometheus metrics sources: the scraper (scraper), a small HTTP client (http), the
exposition-text converter (exposition) and the counters' shared machinery (counters); each
family's metric names live in its format package. Nothing is imported here."""
