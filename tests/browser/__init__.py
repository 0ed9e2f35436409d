"""Browser test helpers (not collected by pytest: no test_*.py here)."""
