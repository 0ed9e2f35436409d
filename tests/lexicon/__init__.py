"""The lexicons against their corpora."""
