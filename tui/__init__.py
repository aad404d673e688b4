"""specwatch: watch speculative-decoding acceptance in inference-server logs."""

__version__ = "0.1.0"
