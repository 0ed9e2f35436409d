"""OpenAPI documents: reading them (`document`) and mapping their
operations to tool definitions (`mapping`)."""
