"""End-to-end tests with a real model server (marker `e2e`)."""
