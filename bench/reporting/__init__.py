"""bench/report.py's parts, one module per output (see report.py)."""
