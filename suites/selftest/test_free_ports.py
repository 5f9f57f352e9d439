"""Ports ktc hands to the brokers and Spark processes it starts, no broker.

A KRaft broker refuses a configuration whose broker and controller listeners share a port
(``If you have two listeners on the same port then one needs to be IPv4 and the other IPv6``),
which two separate ``free_port()`` calls can produce when the kernel reuses a just-freed port.
"""

from __future__ import annotations

import socket

from hypothesis import given, settings
from hypothesis import strategies as st

from ktc.kafka.processes.broker import free_ports


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 8))
def test_ports_picked_together_are_distinct_and_bindable(count):
    ports = free_ports(count)
    assert len(set(ports)) == count
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))
