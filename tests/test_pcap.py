"""pcap traces checked by tshark: no malformed packets, no checksum errors,
and tshark's own TCP analysis agrees with dcsim's counters at the same
capture point.

tshark (Debian package) is installed by this test when it is missing and the
machine allows it (root with apt-get); otherwise the tests are skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import dcsim

FIELDS = [
    "ip.checksum.status",
    "tcp.checksum.status",
    "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission",
    "tcp.analysis.spurious_retransmission",
    "tcp.analysis.out_of_order",
    "tcp.analysis.duplicate_ack",
    "ip.dsfield.ecn",
    "tcp.flags.ece",
    "tcp.flags.cwr",
    "_ws.malformed",
    "frame.time_epoch",
]


@pytest.fixture(scope="session")
def tshark() -> str:
    path = shutil.which("tshark")
    if path is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-qq", "tshark"], env=env, capture_output=True, timeout=1200)
        path = shutil.which("tshark")
    if path is None:
        pytest.skip("tshark is not installed and cannot be installed here (needs root and apt-get)")
    return path


def analyse(tshark: str, pcap: Path) -> dict[str, int]:
    p = subprocess.run(
        [tshark, "-n", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
         "-o", "tcp.analyze_sequence_numbers:TRUE", "-T", "fields", "-E", "separator=;", *sum((["-e", f] for f in FIELDS), [])],
        capture_output=True, text=True, timeout=600, check=True,
    )
    truthy = {"1", "True", "true"}
    counts = dict.fromkeys(["frames", "ip_bad", "ip_good", "tcp_bad", "tcp_good", "retransmissions", "duplicate_acks", "ce", "ece", "cwr", "malformed"], 0)
    last_time = 0.0
    for line in p.stdout.splitlines():
        f = dict(zip(FIELDS, line.split(";")))
        counts["frames"] += 1
        counts["ip_bad"] += f["ip.checksum.status"] == "0"
        counts["ip_good"] += f["ip.checksum.status"] == "1"
        counts["tcp_bad"] += f["tcp.checksum.status"] == "0"
        counts["tcp_good"] += f["tcp.checksum.status"] == "1"
        counts["retransmissions"] += any(f[k] for k in FIELDS[2:6])
        counts["duplicate_acks"] += bool(f["tcp.analysis.duplicate_ack"])
        counts["ce"] += f["ip.dsfield.ecn"] == "3"
        counts["ece"] += f["tcp.flags.ece"] in truthy
        counts["cwr"] += f["tcp.flags.cwr"] in truthy
        counts["malformed"] += bool(f["_ws.malformed"])
        t = float(f["frame.time_epoch"])
        assert t >= last_time, "capture timestamps go backwards"
        last_time = t
    return counts


def dcsim_counts(result: dcsim.Result, name: str) -> dict[str, int]:
    rows = [r for r in result.captures.to_pylist() if r["name"] == name]
    assert len(rows) == 1
    return rows[0]


INCAST = {
    "topology": {"type": "star", "hosts": 9, "link_rate": "10Gbps", "link_delay": "2us"},
    "switch": {"buffer": "40pkt"},
    "tcp": {"min_rto": "1ms", "rtt_granularity": "1us"},
    "workload": [{"type": "incast", "querier": 0, "responders": "1..9", "response_size": "64KB", "rounds": 5}],
    "output": {"pcap": [{"host": 0, "name": "querier"}, {"host": 1, "name": "responder1"}, {"host": 5, "name": "responder5"},
                        {"port": 1, "name": "switch_to_querier", "snaplen": 65535}]},
}

DUMBBELL = {
    "run": {"duration": "20ms"},
    "topology": {"type": "dumbbell", "senders": 8, "receivers": 1, "access_rate": "10Gbps", "access_delay": "2us",
                 "bottleneck_rate": "10Gbps", "bottleneck_delay": "2us"},
    "switch": {"buffer": "250pkt", "aqm": {"type": "dctcp", "k": "65pkt"}},
    "tcp": {"cc": "dctcp", "min_rto": "1ms"},
    "workload": [{"type": "bulk", "src": "0..8", "dst": 8, "size": "inf"}],
    "output": {"pcap": [{"host": 8, "name": "receiver"}, {"host": 0, "name": "sender0"}, {"host": 3, "name": "flow3", "flow": 3}]},
}

# Where every original data segment passes, a dissector sees every
# retransmission; downstream of a drop it cannot tell a retransmitted tail
# segment from new data, so retransmissions are compared at senders only.
CASES = [
    ("incast", INCAST, {"responder1": True, "responder5": True, "querier": False, "switch_to_querier": False}),
    ("dctcp", DUMBBELL, {"receiver": False, "sender0": True, "flow3": True}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_tshark_agrees_with_dcsim(tshark, tmp_path, case):
    _, scenario, captures = case
    r = dcsim.run(scenario, out=tmp_path / "out")
    if scenario is INCAST:
        assert sum(r.ports["drops"].to_pylist()) > 0, "the incast case must have losses"
        assert r.queries["retransmits"].to_pylist() != [0] * 5
    else:
        assert sum(r.ports["ecn_marks"].to_pylist()) > 0
    for name, at_sender in captures.items():
        pcap = tmp_path / "out" / f"{name}.pcap"
        t = analyse(tshark, pcap)
        d = dcsim_counts(r, name)
        assert t["frames"] == d["frames"] > 0, name
        assert t["malformed"] == 0, name
        assert t["ip_bad"] == 0 and t["tcp_bad"] == 0, (name, t)
        assert t["ip_good"] == t["frames"], (name, t)
        assert t["tcp_good"] > 0, (name, t)  # fully captured segments were verified
        for key in ("duplicate_acks", "ce", "ece", "cwr"):
            assert t[key] == d[key], (name, key, t[key], d[key])
        if at_sender:
            assert t["retransmissions"] == d["retransmissions"], (name, t["retransmissions"], d["retransmissions"])
    if scenario is INCAST:
        assert dcsim_counts(r, "responder1")["retransmissions"] > 0
        assert dcsim_counts(r, "querier")["duplicate_acks"] > 0
    else:
        assert dcsim_counts(r, "receiver")["ce"] > 0 and dcsim_counts(r, "receiver")["ece"] > 0
        assert dcsim_counts(r, "sender0")["cwr"] > 0


def test_headers_only_snaplen_and_flow_filter(tmp_path):
    r = dcsim.run(DUMBBELL, out=tmp_path / "out", run__duration="2ms")
    data = (tmp_path / "out" / "receiver.pcap").read_bytes()
    assert data[:4] == bytes.fromhex("4d3cb2a1"), "nanosecond pcap magic"
    assert int.from_bytes(data[16:20], "little") == 128, "snap length"
    flow3 = dcsim_counts(r, "flow3")
    sender3 = r.ports.to_pylist()[3 * 2]  # host 3's NIC is its first port
    assert 0 < flow3["frames"] < sender3["tx_packets"] * 2 + 10


def test_tcp_segments_agree_with_tshark(tshark, tmp_path):
    """dcsim.analysis.tcp_segments (what the CLUES sequence diagrams use)
    reads the same time, ports, sequence numbers and lengths as tshark."""
    from dcsim.analysis import tcp_segments

    r = dcsim.run(INCAST, overrides={"output.pcap": [{"host": 0, "name": "q"}]})
    pcap = tmp_path / "q.pcap"
    pcap.write_bytes(r.pcaps["q"])
    out = subprocess.run([tshark, "-r", str(pcap), "-T", "fields", "-E", "separator=;", "-e", "frame.time_epoch", "-e", "tcp.srcport",
                          "-e", "tcp.seq_raw", "-e", "tcp.ack_raw", "-e", "tcp.len", "-e", "tcp.flags"], capture_output=True, text=True, check=True).stdout
    theirs = [line.split(";") for line in out.splitlines()]
    ours = tcp_segments(r.pcaps["q"])
    assert len(ours) == len(theirs) > 50
    for s, (t, sport, seq, ack, length, flags) in zip(ours, theirs):
        assert abs(s["time"] - float(t)) < 1e-9 and s["src"].endswith(f":{sport}")
        assert (s["seq"], s["payload"], s["flags"]) == (int(seq), int(length), int(flags, 16))
        assert s["ack"] == (int(ack) if ack else 0)
