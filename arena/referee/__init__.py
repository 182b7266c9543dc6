"""The referee: seats, matches, the gRPC server bots join, probes, the health check."""
