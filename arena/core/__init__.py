"""Values of the arena: results, time controls, clocks, names, text and labels. No I/O, no
protobuf, nothing of the arena above it."""
