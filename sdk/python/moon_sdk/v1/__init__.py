"""The generated code of protocol version 1 (proto package ``moon.v1``, files
``proto/moon/v1/*.proto``): ``game_pb2``, ``bot_pb2``, ``match_pb2`` and their ``*_grpc``
services. Regenerate with ``make proto`` (tools/gen_python.py); never edit by hand."""
