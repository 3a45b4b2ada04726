"""Other frameworks' tool objects as toolscript tools.

``Runtime(tools=[...])`` accepts a pydantic-ai ``Tool``, an Agents SDK
``FunctionTool``, a LangChain ``BaseTool`` or a smolagents ``Tool``; each
module here converts one of them, importing its framework only when such an
object is passed.
"""
