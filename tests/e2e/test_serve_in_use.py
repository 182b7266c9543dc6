"""`moon serve` on an address it cannot listen on: one line saying what is wrong (the
port in use, by a running referee or any program; an address not of this machine) and
what to do; exit 1; no gRPC log line, no traceback; the referee already there keeps
serving."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from e2e_support import moon_serve

MOON = [sys.executable, "-m", "arena.cli"]
TOKEN = "in-use-test-token"
"""The admin token every `moon serve` here is started with (it needs one)."""


def serve(address: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # a run registry of its own: what another test's killed arena left is not its to
    # clean up (and say so) at its start
    env = {**os.environ, "MOON_RUN_DIR": str(cwd / "runs"), "MOON_CGROUP": "off"}
    return subprocess.run([*MOON, "serve", "--address", address, "--records", "rec",
                           "--admin-token", TOKEN],
                          cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, out.stderr          # nothing of gRPC's own log, no traceback
    assert lines[0].startswith("Error: ")
    return lines[0]


@pytest.fixture
def running_referee(tmp_path):
    with moon_serve(tmp_path, "--admin-token", TOKEN, log_name="first.log") as served:
        yield served.address, served.proc


def test_a_second_referee_on_the_same_port_says_so_in_one_line(running_referee, tmp_path):
    address, first = running_referee
    port = address.rsplit(":", 1)[1]
    line = one_line_error(serve(address, tmp_path))
    assert f"port {port} is already in use" in line
    assert "choose another port" in line and "--address" in line   # what to do
    assert first.poll() is None                                     # the first one serves on
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)


def test_a_port_any_program_holds_is_in_use_too(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = one_line_error(serve(f"127.0.0.1:{port}", tmp_path))
    assert f"port {port} is already in use" in line


def test_an_address_not_of_this_machine_says_so(tmp_path):
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine
    line = one_line_error(serve("192.0.2.7:50051", tmp_path))
    assert "192.0.2.7 is not an address of this machine" in line
    assert "127.0.0.1" in line
