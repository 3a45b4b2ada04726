"""Side-by-side benchmarks of toolscript, plain CPython ``exec`` and the peers.

Run ``python -m benchmarks`` (``--help`` for options); it regenerates
``BENCHMARKS.md`` and ``benchmarks/plots/``. See :mod:`benchmarks.run`.
"""
