"""``python -m toolscript.runtime.cli``: the same as the ``toolscript`` command."""

import sys

from toolscript.runtime.cli.main import main

sys.exit(main())
