"""The host's listening address: :func:`parse_address` and :func:`bind`, apart from
:mod:`.run` so that `moon host run` can say a port in use before it imports the host."""

from __future__ import annotations

import errno
import socket

from ..errors import ConfigError


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair.

    Raises:
        ConfigError: not ``HOST:PORT`` with a port 0..65535.
    """
    hostname, sep, port = address.rpartition(":")
    if not sep or not hostname or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--address {address!r}: write HOST:PORT, e.g. 127.0.0.1:8000")
    return hostname.strip("[]"), int(port)


def bind(address: str) -> socket.socket:
    """A listening TCP socket on ``address`` (``HOST:PORT``; port 0: any free port), taken
    before the host opens its competition, so that a port in use is said at once, before
    anything is recovered.

    Raises:
        ConfigError: not ``HOST:PORT``, or the address cannot be bound (in use, not this
            machine's).
    """
    name, port = parse_address(address)
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
        family, kind, proto, _, where = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as e:
        raise ConfigError(f"--address {address}: {e.strerror or e}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(2048)
    except OSError as e:
        sock.close()
        why = ("in use (another host, or another server?): stop it or pass "
               "--address HOST:PORT with another port" if e.errno == errno.EADDRINUSE
               else f"cannot be bound: {e.strerror or e}")
        raise ConfigError(f"--address {address}: {why}") from None
    sock.set_inheritable(False)
    return sock
