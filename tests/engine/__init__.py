"""Tests of the pure engine package (no Home Assistant needed)."""
