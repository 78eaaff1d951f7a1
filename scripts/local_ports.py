"""Ports for the servers the tests, the benchmarks and the one-node Slurm start on this machine.

A port found free by binding port 0 comes from Linux's ephemeral range (32768-60999,
``/proc/sys/net/ipv4/ip_local_port_range``), the range every outgoing connection and every other
server bound to port 0 also draws from: when tests run side by side (pytest-xdist), a browser or a
test's HTTP server on the other worker can take such a port between the check and the moment the
hub, formgrader or ``slurmctld`` binds it. :func:`port_block` picks below that range instead, where
nothing takes a port unless it names it, and checks every port of the block.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: the lowest port :func:`port_block` picks (above the well-known and most registered services' ports)
LOWEST = 20000
#: Linux's default start of the ephemeral range, where the kernel's file is unreadable
EPHEMERAL_START = 32768


def ephemeral_start() -> int:
    """The first port of this machine's ephemeral range (the kernel's setting, else Linux's default)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return EPHEMERAL_START


def _bindable(port: int) -> bool:
    """Whether a TCP server could bind ``port`` on every interface now (so on 127.0.0.1 too)."""
    with socket.socket() as s:
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def port_block(size: int = 1, *, tries: int = 200) -> int:
    """The first of ``size`` consecutive TCP ports below the ephemeral range, each free now.

    Parameters
    ----------
    size : int
        How many consecutive ports the caller's servers need (the hub takes its port and the next
        ones, :class:`autograder.hub.layout.HubLayout`).
    tries : int
        How many random blocks to try before giving up.

    Returns
    -------
    int
        The block's first port.
    """
    high = min(ephemeral_start(), 65536) - size
    if high <= LOWEST:
        raise RuntimeError(f"no room for {size} ports between {LOWEST} and the ephemeral range")
    pick = random.SystemRandom()
    for _ in range(tries):
        first = pick.randrange(LOWEST, high)
        if all(_bindable(first + k) for k in range(size)):
            return first
    raise RuntimeError(f"no {size} free consecutive ports between {LOWEST} and {high + size} after {tries} tries")
