"""Prometheus metrics sources: the scraper (scraper), a small HTTP client (http) and the
exposition-text reader (text). Nothing is imported here."""
