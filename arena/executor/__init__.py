"""Play games: the executor seam (a request in, a finished game out), the local pool, and
one game with its bot processes."""
