"""The ``toolscript`` command line: one module per command group.

:mod:`~toolscript.runtime.cli.main` builds the parser and runs ``run`` and
``tools``; every other module adds its subcommands with an
``add_*_command(subparsers)`` function whose handlers are
``cmd_*(args) -> int`` (set with ``set_defaults(handler=...)``). Only this
package imports it: the library never imports the command line.
"""

from toolscript.runtime.cli.main import main

__all__ = ["main"]
