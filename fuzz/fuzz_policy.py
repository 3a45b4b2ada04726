"""atheris harness: the policy compiler and interpreter. ``python fuzz/fuzz_policy.py -runs=N``."""

import sys

import atheris

with atheris.instrument_imports():
    from targets import policy

if __name__ == "__main__":
    atheris.Setup(sys.argv, policy)
    atheris.Fuzz()
