"""lsp package."""
