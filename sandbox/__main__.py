"""``python -m toolscript.sandbox``: the sandbox server on stdin/stdout."""

import sys

from .server import main

sys.exit(main())
