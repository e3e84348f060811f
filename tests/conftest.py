from __future__ import annotations

import copy
from typing import Any

import pytest

STAR: dict[str, Any] = {
    "topology": {"type": "star", "hosts": 4, "link_rate": "10Gbps", "link_delay": "2us"},
    "switch": {"buffer": "100pkt", "aqm": {"type": "dctcp", "k": "20pkt"}},
    "tcp": {"cc": "dctcp", "min_rto": "1ms"},
    "workload": [
        {"type": "bulk", "src": [1, 2], "dst": 0, "size": "200KB"},
        {"type": "incast", "querier": 0, "responders": [1, 2, 3], "response_size": "30KB", "rounds": 5},
    ],
}


@pytest.fixture
def star() -> dict[str, Any]:
    return copy.deepcopy(STAR)
