"""A person at the table: a seat played by a person, in the terminal or a browser, through
the referee's protocol like any bot (:mod:`.seat`), so every rule, fault and record is the
same as for a bot. The person sees only what the seat's turns and the public events say.
"""

HUMAN = "human"
"""The word for a person's seat on `moon play`'s command line, and the seat's name."""
HUMAN_DECISION_MS = 300_000
"""A person's time per decision unless configured: 5 minutes."""
HUMAN_BANK_MS = 1_800_000
"""A person's time bank for the game unless configured: 30 minutes."""
