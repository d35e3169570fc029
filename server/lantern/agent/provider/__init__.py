"""Talking to a model endpoint: the client, its HTTP and SSE, the dialects, and its failures."""
