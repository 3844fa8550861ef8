"""Shared test configuration: pytester for the plugin tests (nothing heavy here)."""

pytest_plugins = "pytester"
