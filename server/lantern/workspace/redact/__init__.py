"""Secret redaction: every rule that takes a secret out of text before the model sees it."""
