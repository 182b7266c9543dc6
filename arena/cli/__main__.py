"""`python -m arena.cli` is `moon`."""

from . import main

main()
