"""`lantern serve`: the language server (built in the language-server issue)."""

from __future__ import annotations

import sys


def serve() -> int:
    print("lantern: the language server is not built yet", file=sys.stderr)
    return 2
