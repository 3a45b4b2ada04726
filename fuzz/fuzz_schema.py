"""atheris harness: schema generation and argument validation.

``python fuzz/fuzz_schema.py -runs=N``.
"""

import sys

import atheris

with atheris.instrument_imports():
    from targets import schema

if __name__ == "__main__":
    atheris.Setup(sys.argv, schema)
    atheris.Fuzz()
