"""The entry's HTTP tools: the configured and active ones, per-agent tools,
the HTTP Tools LLM API, what became of a call, and the OpenAPI import."""
