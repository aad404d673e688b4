"""``specwatch.toml``: named sources, pairs and alerts, checked by pydantic."""
