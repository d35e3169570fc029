"""`python -m lantern.cli`: the same as the `lantern` command."""

import sys

from lantern.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
