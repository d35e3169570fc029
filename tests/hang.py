"""How long a test waits before it calls something hung.

A test never asserts how fast something is: speed is measured in benchmarks/. A test
only bounds a wait, so that a hang fails the test instead of blocking the run. The
bound is far above the normal time (those waits take milliseconds to a few seconds),
so it holds on a busy 2-core machine with other work beside it, and still fails well
inside pytest-timeout's 120 s per test (pyproject.toml).
"""

from __future__ import annotations

#: Seconds to wait for something that normally takes well under 6 s.
HANG_S = 60.0
