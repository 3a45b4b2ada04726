"""atheris harness: the wire-protocol decoder. ``python fuzz/fuzz_protocol.py -runs=N``."""

import sys

import atheris

with atheris.instrument_imports():
    from targets import protocol

if __name__ == "__main__":
    atheris.Setup(sys.argv, protocol)
    atheris.Fuzz()
