"""Constants for the HTTP Tools Agent integration."""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "http_tools_agent"
LOGGER = logging.getLogger(__package__)

# Entry data: the OpenAI-compatible server.
CONF_BASE_URL: Final = "base_url"
DEFAULT_BASE_URL: Final = "http://127.0.0.1:8080/v1"
# Servers without auth still need a non-empty key for the openai SDK.
PLACEHOLDER_API_KEY: Final = "sk-no-key-required"

# Entry options: the tools and how they run.
CONF_TOOLS: Final = "tools"
CONF_TOOLS_FILE: Final = "tools_file"
CONF_TOOLS_ENABLED: Final = "tools_enabled"
CONF_MAX_TOOL_ITERATIONS: Final = "max_tool_iterations"
CONF_TOOL_TIMEOUT: Final = "tool_timeout"
CONF_TOOL_RESULT_MAX_CHARS: Final = "tool_result_max_chars"
# Named values that tools reference as `{secret:name}`: never shown back.
CONF_SECRETS: Final = "secrets"
# Hosts tool requests may reach (empty: any).
CONF_ALLOWED_HOSTS: Final = "allowed_hosts"
# Document URLs tools were imported from, to refresh them (engine/openapi/refresh.py).
CONF_OPENAPI_SOURCES: Final = "openapi_sources"

TOOLS_ENABLED_AUTO: Final = "auto"
TOOLS_ENABLED_ON: Final = "on"
TOOLS_ENABLED_OFF: Final = "off"
TOOLS_ENABLED_CHOICES: Final = (TOOLS_ENABLED_AUTO, TOOLS_ENABLED_ON, TOOLS_ENABLED_OFF)

DEFAULT_MAX_TOOL_ITERATIONS: Final = 4
DEFAULT_TOOL_TIMEOUT: Final = 15.0
DEFAULT_TOOL_RESULT_MAX_CHARS: Final = 2000

# Subentry `conversation`: one agent each.
SUBENTRY_CONVERSATION: Final = "conversation"
# An AI Task entity, as core's integrations name the subentry type.
SUBENTRY_AI_TASK: Final = "ai_task_data"
CONF_MODEL: Final = "model"
CONF_TEMPERATURE: Final = "temperature"
CONF_MAX_TOKENS: Final = "max_tokens"
CONF_TOOL_CHOICE: Final = "tool_choice"
CONF_STREAM: Final = "stream"
# The names of this server's HTTP tools the agent offers (absent or empty: all).
CONF_AGENT_TOOLS: Final = "http_tools"
# Which loop the agent runs: `capable` (the plain tool loop), `small` (it
# plus the rules for small models, `small/rules.py`), `auto` (by the model's
# size: `server/profiles.py`).
CONF_PROFILE: Final = "profile"
PROFILE_CHOICES: Final = ("auto", "small", "capable")
DEFAULT_PROFILE: Final = "auto"

# Settings for small local models (the agent form's "advanced" section).
CONF_ADVANCED: Final = "advanced"
CONF_THINKING: Final = "thinking"
CONF_EXTRA_BODY: Final = "extra_body"
CONF_MAX_CALLS_PER_TURN: Final = "max_calls_per_turn"
CONF_CHAIN_CALLS: Final = "chain_calls"
CONF_EXAMPLES: Final = "examples"
# What the model is sent of earlier turns (`turn/request.py`).
CONF_HISTORY: Final = "history"
CONF_HISTORY_TURNS: Final = "history_turns"
CONF_CUSTOM_EXAMPLES: Final = "custom_examples"
# Whether the prompt's start is sent ahead of the first question (`server/warm_up.py`).
CONF_WARM_UP: Final = "warm_up"
# Ask before Assist's intents unlock, open a garage door or gate, or touch
# an alarm panel (`turn/sensitive.py`).
CONF_CONFIRM_INTENTS: Final = "confirm_intents"
# Whether an image a tool answers goes to the model as a picture
# (`turn/request.py`).
CONF_VISION: Final = "vision"
# Which calls of other LLM APIs' tools (an MCP server's) wait for the
# user's yes, by their annotations (`engine/confirm.py` `AskOthers`).
CONF_CONFIRM_OTHER_TOOLS: Final = "confirm_other_tools"
# How an agent with many HTTP tools shows them (`turn/tool_search.py`).
CONF_TOOL_SEARCH: Final = "tool_search"

TOOL_CHOICES: Final = ("auto", "required", "none")
THINKING_CHOICES: Final = ("auto", "off", "on")
DEFAULT_THINKING: Final = "auto"
DEFAULT_MAX_CALLS_PER_TURN: Final = 8
# Whether the model may call tools after their results: as its profile says
# (capable: yes; small: the request after results asks for the answer), or
# always / never.
CHAIN_CALLS_PROFILE: Final = "profile"
CHAIN_CALLS_CHOICES: Final = (CHAIN_CALLS_PROFILE, "on", "off")
DEFAULT_CHAIN_CALLS: Final = CHAIN_CALLS_PROFILE
EXAMPLES_NONE: Final = "none"
EXAMPLES_GENERATED: Final = "generated"
EXAMPLES_CUSTOM: Final = "custom"
EXAMPLES_CHOICES: Final = (EXAMPLES_NONE, EXAMPLES_GENERATED, EXAMPLES_CUSTOM)
DEFAULT_EXAMPLES: Final = EXAMPLES_NONE
HISTORY_PROFILE: Final = "profile"
HISTORY_CHOICES: Final = (HISTORY_PROFILE, "all", "text", "recent", "none")
DEFAULT_HISTORY_TURNS: Final = 3
# `auto`: for servers on this machine or the local network, never a hosted API.
WARM_UP_CHOICES: Final = ("auto", "on", "off")
DEFAULT_WARM_UP: Final = "auto"
# `auto`: when the server reports that the model reads images.
VISION_CHOICES: Final = ("auto", "on", "off")
DEFAULT_VISION: Final = "auto"
# `auto`: as measured best for the profile (`turn/tool_search.py`).
TOOL_SEARCH_CHOICES: Final = ("auto", "off", "search", "preselect")
DEFAULT_TOOL_SEARCH: Final = "auto"
DEFAULT_TOOL_CHOICE: Final = "auto"
DEFAULT_TEMPERATURE: Final = 0.7
DEFAULT_MAX_TOKENS: Final = 1024
DEFAULT_STREAM: Final = True
DEFAULT_MODEL: Final = "local-model"
DEFAULT_CONVERSATION_NAME: Final = "HTTP Tools Agent"
DEFAULT_AI_TASK_NAME: Final = "HTTP Tools AI Task"

# Seconds for listing models when checking a server.
SERVER_CHECK_TIMEOUT: Final = 10.0
# Seconds an agent's form waits for the model list: a server answers it at
# once unless it is busy generating (the form then offers the list it gave
# before).
FORM_MODEL_LIST_TIMEOUT: Final = 3.0

EVENT_TOOL_CALL: Final = "http_tools_agent_tool_call"

SOURCE_REQUEST: Final = "request"
SOURCE_FILE: Final = "file"
SOURCE_OPTIONS: Final = "options"
SOURCE_NONE: Final = "none"

# A sign-in (a config entry of its own): an OAuth2 account whose access
# token tools send (`auth: {"type": "oauth2", "sign_in": name}`).
CONF_SIGN_IN: Final = "sign_in"
CONF_AUTHORIZE_URL: Final = "authorize_url"
CONF_TOKEN_URL: Final = "token_url"  # noqa: S105  (a key, not a token)
CONF_SCOPES: Final = "scopes"
