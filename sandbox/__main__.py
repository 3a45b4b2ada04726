"""``python -m toolscript.sandbox``: the sandbox server on stdin/stdout."""

import sys

from .launcher import main

sys.exit(main())
