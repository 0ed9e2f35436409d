"""Tests for the HTTP Tools Agent integration."""
