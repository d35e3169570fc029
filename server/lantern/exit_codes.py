"""The exit statuses of the `lantern` command, one list for every subcommand.

Scripts branch on these numbers, so each keeps its meaning across commands:
`doctor` exits `MODEL` when the endpoint cannot be reached, as `ask` does
when the model fails.
"""

from __future__ import annotations

OK = 0
NO_SHUTDOWN = 1  # `lantern serve`: input ended (or broke) without a `shutdown` request
USAGE = 2  # bad flags or configuration; the message says how to fix it
MODEL = 3  # the model or its endpoint failed (or, for doctor, a check failed)
LIMIT = 4  # stopped by a limit: max steps, the tool output budget, the time limit, or
# the model's output limit (an answer cut off: `truncated`)
FILTERED = 5  # the provider's content filter stopped the answer (`filtered`)
INTERRUPTED = 130  # Ctrl-C or SIGTERM, as a shell reports a SIGINT
