"""Run documentation code blocks in one fresh namespace: ``python blockrunner.py FILE...``.

Each file is one block, compiled as a module would be, except that top-level
``await`` / ``async with`` is allowed (as in ``python -m asyncio``): such a
block runs in one event loop per block. Blocks given together share the
namespace, in order (a block marked ``continues``). The working directory
comes first on ``sys.path``, as for a script run from there. An exception propagates:
the process exits non-zero with the traceback naming the block's file.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import sys
from pathlib import Path
from typing import Any


def run_block(path: Path, namespace: dict[str, Any]) -> None:
    """Run the block in ``path`` in ``namespace``."""
    code = compile(path.read_text("utf-8"), str(path), "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    result = eval(code, namespace)
    if inspect.iscoroutine(result):
        asyncio.run(result)


def main(paths: list[str]) -> None:
    """Run the blocks in ``paths`` in one namespace, as ``__main__``."""
    sys.path[0] = os.getcwd()  # as `python file.py` run from there: `examples.` imports
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    for name in paths:
        run_block(Path(name), namespace)


if __name__ == "__main__":
    main(sys.argv[1:])
