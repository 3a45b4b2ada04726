"""Span and attribute names of toolscript's OpenTelemetry traces, in one place.

The ``gen_ai.*`` names follow the OpenTelemetry GenAI semantic conventions
(still in development: when they move, change them here only). Names under
``toolscript.*`` are ours, for what the conventions do not cover (script runs,
approval decisions).
"""

from __future__ import annotations

# --- span names ----------------------------------------------------------------------
SPAN_EXECUTE_TOOL = "execute_tool {tool}"
SPAN_CHAT = "chat {model}"
SPAN_RUN_SCRIPT = "execute_script"
SPAN_INVOKE_AGENT = "invoke_agent {agent}"

# --- GenAI semantic conventions --------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
OPERATION_EXECUTE_TOOL = "execute_tool"
OPERATION_CHAT = "chat"
OPERATION_INVOKE_AGENT = "invoke_agent"

AGENT_NAME = "gen_ai.agent.name"
AGENT_NAME_VALUE = "toolscript"

TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_TYPE_FUNCTION = "function"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"  # opt-in content
TOOL_CALL_RESULT = "gen_ai.tool.call.result"  # opt-in content

PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"  # opt-in content
OUTPUT_MESSAGES = "gen_ai.output.messages"  # opt-in content

ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# --- metrics (GenAI semantic conventions) ------------------------------------------------
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
TOKEN_TYPE = "gen_ai.token.type"
TOKEN_TYPE_INPUT = "input"
TOKEN_TYPE_OUTPUT = "output"
TOKEN_USAGE_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
                       4194304, 16777216, 67108864)
"""The conventions' advised bucket boundaries of ``gen_ai.client.token.usage``."""
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
                    20.48, 40.96, 81.92)
"""The conventions' advised bucket boundaries of ``gen_ai.client.operation.duration``."""

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' switch for recording content (arguments, results, messages)."""

# --- toolscript's own ------------------------------------------------------------------
RUN_ID = "toolscript.run.id"
SESSION_ID = "toolscript.session.id"
BACKEND = "toolscript.backend"
RUN_OK = "toolscript.run.ok"
RUN_TOOL_CALLS = "toolscript.run.tool_calls"
RUN_SESSION_RESTARTED = "toolscript.run.session_restarted"
SCRIPT_CODE = "toolscript.script.code"  # opt-in content
SCRIPT_VALUE = "toolscript.script.value"  # opt-in content
TOOL_APPROVED = "toolscript.tool.approved"
TOOL_DECIDED_BY = "toolscript.tool.decided_by"
TOOL_SOURCE = "toolscript.tool.source"
TOOL_RECORD_ID = "toolscript.tool.record_id"
TOOL_EXECUTED = "toolscript.tool.executed"
AGENT_MODE = "toolscript.agent.mode"
AGENT_RUN_ID = "toolscript.agent.run_id"
AGENT_TURNS = "toolscript.agent.turns"
AGENT_STOPPED_BY = "toolscript.agent.stopped_by"
USAGE_CACHE_READ_TOKENS = "toolscript.usage.cache_read_tokens"
METRIC_TOOL_DURATION = "toolscript.tool.call.duration"
"""Histogram (s) of host tool calls, by tool, source and ``error.type`` (the
conventions have no tool-call metric yet)."""
METRIC_TOOL_ERRORS = "toolscript.tool.call.errors"
"""Counter of host tool calls that failed, by tool, source and ``error.type``."""

PROVIDER_NAMES = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "gemini-openai": "gcp.gemini",
    "deepseek": "deepseek",
    "qwen": "alibaba_cloud",
    "kimi": "moonshot_ai",
    "glm": "zhipu_ai",
}
"""Our dialect names -> the conventions' ``gen_ai.provider.name`` values
(unknown dialects are reported under their own name)."""
