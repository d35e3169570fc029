"""What outline, find_symbol and find_references share: files found, read and shown."""
