"""Lantern's settings: what they are (`model`), where their values come from and which
one wins (`sources`), and what a workspace folder may change (`trust`: only narrow)."""
