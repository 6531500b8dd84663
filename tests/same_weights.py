"""One check shared by the reproduction tests: two runs saved the same network."""

from __future__ import annotations

from pathlib import Path

import torch

from agents.checkpoint import load_network


def assert_same_weights(first: Path, second: Path) -> dict:
    """Every tensor of the two runs' ``latest/`` networks is equal; returns the first's meta."""
    (net_a, meta), (net_b, _) = load_network(first / "latest"), load_network(second / "latest")
    a, b = net_a.state_dict(), net_b.state_dict()
    assert a.keys() == b.keys()
    for name, tensor in a.items():
        assert torch.equal(tensor, b[name]), name
    return meta
