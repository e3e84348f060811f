"""CUBIC (RFC 9438) at the packet level; the curve itself is checked in
crates/dcsim/src/tcp/cc.rs."""

from __future__ import annotations

import dcsim


def test_cubic_fills_a_long_fat_pipe_faster_than_newreno():
    # One flow into 1 Gb/s with a ~10 ms RTT (BDP ~830 segments) and a
    # 300-packet buffer. Slow start overshoots into losses at ~1130 segments.
    # NewReno halves to ~565 and regains one segment per RTT: about 2.6 s
    # below the BDP, so ~85-90 % of the payload rate (954 Mb/s) over 3 s.
    # CUBIC keeps 0.7 x 1130 ~ 790 and its Reno-friendly estimate (0.53
    # segments per RTT) is back at the BDP within ~0.1 s.
    s = {
        "run": {"duration": "3s"},
        "topology": {"type": "dumbbell", "senders": 1, "receivers": 1, "access_rate": "10Gbps", "access_delay": "10us",
                     "bottleneck_rate": "1Gbps", "bottleneck_delay": "5ms"},
        "switch": {"buffer": "300pkt"},
        "tcp": {"rcv_buffer": "16MB", "min_rto": "200ms"},
        "workload": [{"type": "bulk", "src": 0, "dst": 1, "size": "inf"}],
    }
    got = {cc: dcsim.run(s, overrides={"tcp.cc": cc}).flows["delivered"].to_pylist()[0] * 8 / 3 / 1e6 for cc in ("newreno", "cubic")}
    assert got["cubic"] > 0.95 * 954 and got["newreno"] < 0.92 * 954, got
