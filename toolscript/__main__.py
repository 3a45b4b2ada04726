"""``python -m toolscript``: the same as the ``toolscript`` command."""

import sys

from toolscript.runtime.cli import main

sys.exit(main())
