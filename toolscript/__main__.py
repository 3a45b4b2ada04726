"""``python -m toolscript``: the same as the ``toolscript`` command."""

import sys

from toolscript.runtime.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
