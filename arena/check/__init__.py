"""`moon bot check`: the conformance check and the scripted bots it plays against."""
