"""Custom components package (lets tests import the integration)."""
