"""Sources: async iterators of line batches and events (see ``base.py``)."""
