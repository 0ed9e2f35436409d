"""The entry's HTTP tools: the configured and active ones, per-agent tools,
the HTTP Tools LLM API, the REST view and the OpenAPI import."""
