"""PIAS (HSCC's baseline, seed 002 §5.2): hosts tag packets by the bytes of
their message already sent, switches serve classes in strict priority; and
the persistent connections seed 002's simulations use."""

from __future__ import annotations

import copy
import statistics
import struct

import dcsim

# Two long flows and Poisson 20 KB messages into host 0 at 10 Gb/s.
BASE = {
    "run": {"duration": "100ms", "seed": 3},
    "topology": {"type": "star", "hosts": 5, "link_rate": "10Gbps", "link_delay": "10us"},
    "switch": {"buffer": "100pkt", "aqm": {"type": "dctcp", "k": "65pkt"}},
    "tcp": {"cc": "dctcp", "min_rto": "10ms"},
    "workload": [
        {"type": "bulk", "src": "1..3", "dst": 0, "size": "inf"},
        {"type": "poisson", "pattern": "all_to_one", "target": 0, "load": 0.1, "load_reference": "host",
         "size": "20KB", "connections": "persistent", "start": "5ms", "stop": "80ms"},
    ],
}
PIAS_SWITCH = {"scheduler": {"type": "strict_priority", "classes": 2}}
PIAS_HOST = {"pias": {"thresholds": ["100KB"]}}


def _run(base=BASE, switch=None, host=None, output=None):
    s = copy.deepcopy(base)
    s["switch"].update(switch or {})
    s["host"] = host or {}
    s["output"] = output or {}
    return dcsim.run(s)


def _messages(r):
    return [f for f in r.flows.to_pylist() if f["workload"] == 1]


def test_pias_puts_short_messages_ahead_of_long_flows():
    fifo = _messages(_run())
    pias = _messages(_run(switch=PIAS_SWITCH, host=PIAS_HOST))
    assert all(f["fct"] is not None for f in fifo + pias)
    mean = lambda fs: statistics.mean(f["fct"] for f in fs)
    # Behind a DCTCP queue of ~65 packets (~80 us at 10 Gb/s) in FIFO; ahead of it with PIAS.
    assert mean(pias) < 0.6 * mean(fifo), (mean(pias), mean(fifo))
    assert max(f["fct"] for f in pias) < max(f["fct"] for f in fifo)


def test_hosts_write_the_class_into_the_dscp_bits():
    r = _run(switch=PIAS_SWITCH, host={"pias": {"thresholds": ["10KB"]}}, output={"pcap": [{"host": 1, "snaplen": 64}]})
    pcap, off, tos = r.pcaps["host1"], 24, []
    while off < len(pcap):
        incl = struct.unpack_from("<I", pcap, off + 8)[0]
        frame = pcap[off + 16: off + 16 + incl]
        payload = struct.unpack_from(">H", frame, 16)[0] - 20 - (frame[14 + 20 + 12] >> 4) * 4
        tos.append((frame[15] >> 2, payload))
        off += 16 + incl
    # Host 1 sends a long flow (class 1 after its first 10 KB) and 20 KB
    # messages (class 0, then class 1); its pure ACKs are class 0.
    assert {d for d, n in tos if n == 0} == {0}
    data = [d for d, n in tos if n > 0]
    assert data[0] == 0 and set(data) == {0, 1}
    assert data.count(1) > 10 * data.count(0), "the long flow's packets are class 1"


def test_push_out_protects_high_priority_packets_from_a_full_buffer():
    # Reno fills the 100-packet buffer with the long flows' class-1 packets.
    base = copy.deepcopy(BASE)
    base["switch"] = {"buffer": "100pkt"}
    base["tcp"] = {"cc": "newreno", "min_rto": "10ms"}
    drop = _messages(_run(base, switch=PIAS_SWITCH, host=PIAS_HOST))
    pushed = _run(base, switch={"scheduler": PIAS_SWITCH["scheduler"] | {"full": "push_out_lowest"}}, host=PIAS_HOST)
    push = _messages(pushed)
    # Every pushed-out packet is counted: created = delivered + dropped + in flight.
    s = pushed.summary
    assert s["packets_created"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    assert s["packets_dropped"] == sum(p["drops"] + p["link_losses"] for p in pushed.ports.to_pylist())
    # Dropping the arrival loses the messages' packets at a full buffer ...
    assert sum(f["timeouts"] for f in drop) > 10
    # ... pushing out a long flow's last packet never does.
    assert sum(f["retransmits"] for f in push) == 0
    assert all(f["fct"] is not None for f in push)


def test_persistent_connections_are_reused_and_count_per_flow():
    r = _run()
    msgs = _messages(r)
    conns = {}
    for f in msgs:
        conns.setdefault(f["conn"], []).append(f)
    # Four sources, each pair reusing a handful of connections for ~500 messages.
    assert len(msgs) > 300 and len(conns) < 40
    # A reused connection skips the handshake: the first flow on a
    # connection takes at least one RTT (40 us) longer than the median reuse.
    firsts = [fs[0]["fct"] for fs in conns.values()]
    reuses = sorted(f["fct"] for fs in conns.values() for f in fs[1:])
    assert statistics.median(firsts) > reuses[len(reuses) // 2] + 30e-6
    # Messages on one connection follow each other: none starts before the previous ended.
    for fs in conns.values():
        assert all(a["end"] <= b["start"] for a, b in zip(fs, fs[1:]))
