"""The `mnemo` command line: one module per command group, attached in `main.py`."""
