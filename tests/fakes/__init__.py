"""Test doubles (fake servers and helpers) shared by the test suites."""
