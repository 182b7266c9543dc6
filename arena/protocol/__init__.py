"""The protocol's messages to and from the arena's own values."""
