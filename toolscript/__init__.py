"""toolscript: programmatic tool calling in a restricted, sandboxed Python.

The public API is re-exported here; see README.md for a tour.
"""
