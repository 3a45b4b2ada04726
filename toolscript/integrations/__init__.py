"""toolscript as the code tool of other agent frameworks.

Each module adapts a toolscript session to one framework and imports that
framework only when it is used (install it with the matching extra, e.g.
``pip install 'toolscript[pydantic-ai]'``).
"""
