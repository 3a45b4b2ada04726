"""Load tools from a Python module or file: :func:`load_tools`."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import ModuleType
from typing import Any

from toolscript.errors import ToolDefinitionError, ToolLoadError

from .definition import Tool
from .twophase import TwoPhase

__all__ = ["load_module", "load_tools"]


def load_tools(spec: str) -> list[Tool]:
    """The tools defined by a module (``pkg.tools``) or a file (``./tools.py``).

    If the module has a ``TOOLS`` list, its items are used (Tool objects,
    :class:`TwoPhase` pairs or plain functions); otherwise every :class:`Tool`
    (and both tools of every ``TwoPhase``) bound at module level, in
    definition order.

    Raises:
        ToolLoadError: the file is missing, the import failed (with the
            exception's text), ``TOOLS`` is malformed, or no tools were found.
        ToolDefinitionError: a tool in the module is invalid (e.g. SchemaError).
    """
    module = load_module(spec)
    if hasattr(module, "TOOLS"):
        declared = module.TOOLS
        if not isinstance(declared, (list, tuple)):
            raise ToolLoadError(
                f"{spec}: TOOLS must be a list of tools or functions, got {type(declared).__name__}"
            )
        tools: list[Tool] = []
        for i, item in enumerate(declared):
            if isinstance(item, TwoPhase):
                tools.extend(item)
            elif isinstance(item, Tool):
                tools.append(item)
            elif callable(item):
                tools.append(Tool.from_function(item))
            else:
                raise ToolLoadError(f"{spec}: TOOLS[{i}] is {item!r}, not a tool or a function")
    else:
        tools = []
        seen: set[int] = set()
        for value in vars(module).values():
            found = list(value) if isinstance(value, TwoPhase) else [value]
            for item in found:
                if isinstance(item, Tool) and id(item) not in seen:
                    seen.add(id(item))
                    tools.append(item)
    if not tools:
        raise ToolLoadError(
            f"no tools found in {spec}: decorate functions with @tool or define "
            "TOOLS = [...] at module level"
        )
    return tools


def load_module(spec: str) -> ModuleType:
    """Import a dotted module name, or execute a ``.py`` file as a module.

    Raises:
        ToolLoadError: with a message that says what went wrong.
    """
    if not spec or not spec.strip():
        raise ToolLoadError("empty tools specification: give a module name or a .py file")
    if _looks_like_path(spec):
        return _load_file(Path(spec))
    try:
        return _import(spec)
    except ToolDefinitionError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if spec == missing or spec.startswith(missing + "."):
            raise ToolLoadError(
                f"cannot import tools module {spec!r}: no module named {missing!r} "
                "(give a dotted module name on sys.path or a path to a .py file)"
            ) from exc
        raise ToolLoadError(_import_failed(spec, exc)) from exc
    except Exception as exc:
        raise ToolLoadError(_import_failed(spec, exc)) from exc


def _looks_like_path(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec or Path(spec).is_file()


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Console scripts do not put the working directory on sys.path; try it.
        cwd = os.getcwd()
        top = name.split(".")[0]
        if exc.name != top or cwd in sys.path or "" in sys.path:
            raise
        with _sys_path(cwd):
            return importlib.import_module(name)


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        what = "is a directory, not a .py file" if path.is_dir() else "does not exist"
        raise ToolLoadError(f"tools file {str(path)!r} {what}")
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode(), usedforsecurity=False).hexdigest()[:10]
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in resolved.stem)
    name = f"_toolscript_tools_{stem}_{digest}"
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise ToolLoadError(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    # Registered before executing: dataclasses and typing look the module up.
    previous: Any = sys.modules.get(name)
    sys.modules[name] = module
    try:
        with _sys_path(str(resolved.parent)):
            module_spec.loader.exec_module(module)
    except ToolDefinitionError:
        _restore(name, previous)
        raise
    except (Exception, SystemExit) as exc:
        _restore(name, previous)
        raise ToolLoadError(_import_failed(str(path), exc)) from exc
    return module


def _restore(name: str, previous: Any) -> None:
    if previous is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = previous


def _import_failed(spec: str, exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<frozen"):
            where = f" ({filename}, line {tb.tb_lineno})"
        tb = tb.tb_next
    if isinstance(exc, SyntaxError):
        where = f" ({exc.filename}, line {exc.lineno})"
        return f"cannot import tools from {spec!r}: SyntaxError: {exc.msg}{where}"
    return f"cannot import tools from {spec!r}: {type(exc).__name__}: {exc}{where}"


@contextmanager
def _sys_path(directory: str) -> Iterator[None]:
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        with suppress(ValueError):
            sys.path.remove(directory)
