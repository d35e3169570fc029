"""Ignore files (.gitignore, .lanternignore): read, compiled and evaluated the way git does."""
