"""The options flow and the forms of the config flow: tools, settings,
agents, the OpenAPI import."""
