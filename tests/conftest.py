"""Settings for the whole test suite."""

from __future__ import annotations

import signal

# Tests press Ctrl-C on the processes they start (SIGINT) and expect what a user sees. A shell
# that starts a job in the background without job control (`.ci/run &`, nohup) makes it
# ignore SIGINT, and every process it starts inherits that: a Python child would then never
# see the Ctrl-C. Taking SIGINT back in the test process gives its children the default.
signal.signal(signal.SIGINT, signal.default_int_handler)
