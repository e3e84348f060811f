"""HSCC (seed 002): the switch's hysteresis, the ACK window rewrite, the
end-host shim's reserved bits and the control-packet reserve."""

from __future__ import annotations

import json
import statistics
import struct

import pytest
from conftest import reproduce_quick

import dcsim

# Twelve long flows into one 1 Gb/s port with a 100-packet buffer.
BASE = {
    "run": {"duration": "300ms"},
    "topology": {"type": "star", "hosts": 13, "link_rate": "1Gbps", "link_delay": "25us"},
    "switch": {"buffer": "100pkt"},
    "tcp": {"min_rto": "200ms"},
    "workload": [{"type": "bulk", "src": "1..13", "dst": 0, "size": "inf"}],
    "output": {"queue_sample_interval": "100us"},
}


def _port_to(r, host):
    return next(p for p in r.ports.to_pylist() if p["node_kind"] == "switch" and p["peer"] == host)


def _tcp_headers(pcap: bytes):
    """(reserved bits, window field, flags) of every TCP segment in a pcap."""
    out, off = [], 24
    while off < len(pcap):
        incl = struct.unpack_from("<I", pcap, off + 8)[0]
        frame = pcap[off + 16: off + 16 + incl]
        tcp = frame[14 + 20:]
        out.append((tcp[12] & 0x0F, struct.unpack_from(">H", tcp, 14)[0], tcp[13]))
        off += 16 + incl
    return out


def test_hscc_enters_cbr_mode_rewrites_acks_and_cuts_losses():
    plain = dcsim.run(BASE)
    hscc = dcsim.run(BASE | {"switch": BASE["switch"] | {"hscc": {}}})
    p, h = _port_to(plain, 0), _port_to(hscc, 0)
    assert p["hscc_cbr_entries"] == p["hscc_rewrites"] == 0
    assert h["hscc_cbr_entries"] > 10 and 0 < h["hscc_cbr_time"] < 0.3
    # The ACKs of these flows arrive on the client's port, which is the one in CBR mode.
    assert h["hscc_rewrites"] > 1000
    assert sum(x["hscc_rewrites"] for x in hscc.ports.to_pylist()) == h["hscc_rewrites"]
    # At least a third fewer drops. (Until 2026-11-25 the bound was 0.6, set
    # when recovery ended at min(ssthresh, FlightSize + SMSS): 310 against
    # 726. Ending it at ssthresh, as BSD Reno, ns-2 and Linux do, gives 369
    # against 611; the bound was loosened after that run, see issue 26.)
    assert h["drops"] < 2 / 3 * p["drops"], (h["drops"], p["drops"])
    # The relay holds the queue between the thresholds while in CBR mode: it
    # never builds far above alpha2 = 50 packets the way drop-tail TCP does.
    q = [n for t, port, n in zip(hscc.queues["time"].to_pylist(), hscc.queues["port"].to_pylist(), hscc.queues["packets"].to_pylist()) if port == h["port"]]
    assert sum(q) / len(q) < sum(_samples(plain, p["port"])) / len(_samples(plain, p["port"]))


def _samples(r, port):
    return [n for t, p, n in zip(r.queues["time"].to_pylist(), r.queues["port"].to_pylist(), r.queues["packets"].to_pylist()) if p == port]


def test_the_shim_carries_the_window_scale_to_the_switch_which_writes_one_mss():
    s = BASE | {"switch": BASE["switch"] | {"hscc": {}}, "output": {"pcap": [{"host": 0, "snaplen": 80}, {"host": 1, "snaplen": 80}]}}
    r = dcsim.run(s)
    scale = 5  # 1 MiB receive buffer
    at_receiver = _tcp_headers(r.pcaps["host0"])
    at_sender = _tcp_headers(r.pcaps["host1"])
    SYN = 0x02
    # Non-SYN segments leave every host with the scale in the reserved bits ...
    sent_by_0 = [x for x in at_receiver if x[0] != 0]
    assert sent_by_0 and all(res == scale for res, _, flags in sent_by_0)
    # ... and reach a host with them cleared (the last hop clears them).
    received_by_1 = [x for x in at_sender if x[1] < 2000]  # ACKs with a rewritten window
    assert received_by_1 and all(res == 0 for res, _, _ in received_by_1)
    # A rewritten window is one MSS (1460 B) in the sender's units, rounded down.
    assert {w for _, w, _ in received_by_1} == {1460 >> scale}
    assert all(not (flags & SYN) for _, _, flags in received_by_1)
    # Without the shim the switch assumes no scaling and writes 1460 itself.
    no_shim = dcsim.run(s | {"switch": BASE["switch"] | {"hscc": {"shim": False}}})
    windows = {w for res, w, _ in _tcp_headers(no_shim.pcaps["host1"]) if w < 2000}
    assert windows == {1460}


def test_syn_ack_rewrite_clamps_connections_opened_into_a_port_in_cbr_mode():
    # 40 short flows open from host 13 while 12 bulk flows keep host 0's port
    # cycling in and out of CBR mode. The NetFPGA (hscc_main.v) rewrites
    # their SYN-ACKs too (syn_ack = true): those that meet CBR mode carry one
    # MSS, unscaled as every SYN's window (RFC 7323 §2.2). The paper's rule
    # leaves SYN-ACKs alone.
    late = [{"src": 13, "dst": 0, "size": "10KB", "start": f"{50 + 5 * k}ms"} for k in range(40)]
    s = BASE | {"topology": BASE["topology"] | {"hosts": 14}, "workload": BASE["workload"] + [{"type": "flows", "flows": late}],
                "output": {"pcap": [{"host": 13, "snaplen": 80}]}}
    SYN_ACK = 0x12
    windows, fct = {}, {}
    for on in (False, True):
        r = dcsim.run(s | {"switch": BASE["switch"] | {"hscc": {"syn_ack": on}}})
        windows[on] = [w for _, w, f in _tcp_headers(r.pcaps["host13"]) if f & SYN_ACK == SYN_ACK]
        done = [f["fct"] for f in r.flows.to_pylist() if f["src"] == 13 and f["fct"] is not None]
        assert len(done) >= 35  # one or two do not finish within the run
        fct[on] = statistics.median(done)
    assert len(windows[False]) == len(windows[True]) == 40
    assert set(windows[False]) == {65535}
    assert set(windows[True]) == {1460, 65535} and windows[True].count(1460) >= 5, windows[True]
    assert fct[True] > 1.5 * fct[False], fct


def test_hscc_runs_only_at_the_switches_named():
    # A dumbbell whose only congested port is the left switch's egress onto
    # the bottleneck. HSCC at "right" alone rewrites nothing and changes
    # nothing; at "left" alone it is the run with HSCC everywhere.
    s = {"run": {"duration": "100ms"},
         "topology": {"type": "dumbbell", "senders": 8, "receivers": 1, "access_rate": "10Gbps", "access_delay": "5us",
                      "bottleneck_rate": "1Gbps", "bottleneck_delay": "20us"},
         "switch": {"buffer": "100pkt"}, "tcp": {"min_rto": "200ms"},
         "workload": [{"type": "bulk", "src": "0..8", "dst": 8, "size": "inf"}]}

    def run(hscc):
        r = dcsim.run(s | {"switch": s["switch"] | ({"hscc": hscc} if hscc is not None else {})})
        ports = r.ports.to_pylist()
        return [(p["drops"], p["hscc_rewrites"]) for p in ports], r.flows["delivered"].to_pylist()

    plain, everywhere = run(None), run({})
    assert sum(w for _, w in everywhere[0]) > 100
    assert run({"switches": ["right"]}) == plain
    assert run({"switches": ["left"]}) == everywhere


def test_control_reserve_keeps_the_top_of_the_buffer_for_control_packets():
    r = dcsim.run(BASE | {"switch": BASE["switch"] | {"hscc": {"control_reserve": 0.3}}})
    # Data may use only 70 of the 100 packets (the client's port carries only data).
    assert _port_to(r, 0)["max_queue_packets"] == 70
    assert _port_to(dcsim.run(BASE), 0)["max_queue_packets"] == 100


def test_fair_share_window_divides_the_buffer_by_the_flows_through_the_port():
    s = BASE | {"switch": BASE["switch"] | {"hscc": {"window": "fair_share"}, "buffer": "100pkt"}, "output": {"pcap": [{"host": 1, "snaplen": 80}]}}
    r = dcsim.run(s)
    # 12 SYNs towards host 0's port: (100 - 25) x 1518 B / 12 = 9487 B, shifted by the scale 5.
    share = (100 * 1518 - 25 * 1518) // 12
    windows = {w for _, w, _ in _tcp_headers(r.pcaps["host1"]) if w < 2000}
    assert windows == {share >> 5}



def test_cbr_plus_a_loss_while_the_window_is_clamped_still_halves_cwnd():
    """Seed 002 §4's third state: a loss while rwnd is clamped to one MSS
    cuts TCP's own window too (not a switch action: the sender's reaction)."""
    r = dcsim.run(BASE | {"switch": BASE["switch"] | {"hscc": {}}, "output": {"tcp_trace": True}})
    t = r.tcp_trace
    rows = zip(t["conn"].to_pylist(), t["side"].to_pylist(), t["ssthresh"].to_pylist(), t["snd_wnd"].to_pylist())
    last, cbr_plus, clamped = {}, 0, 0
    for conn, side, ssthresh, wnd in rows:
        if side != 0:
            continue
        clamped += wnd <= 1460
        if conn in last and ssthresh < last[conn] and wnd <= 1460:
            cbr_plus += 1  # a multiplicative decrease taken on an ACK carrying the CBR window
        last[conn] = ssthresh
    assert clamped > 1000
    assert cbr_plus > 0
    # Without HSCC no ACK ever carries a window that small.
    plain = dcsim.run(BASE | {"output": {"tcp_trace": True}})
    assert min(plain.tcp_trace["snd_wnd"].to_pylist()) > 1460


def test_leafspine_websearch_quick_hscc_beats_red_ecn_at_60_percent(tmp_path):
    # The acceptance claims at load 0.6: small-flow mean and max FCT,
    # timeouts and the all-flow mean FCT, each below TCP-RED-ECN's.
    rows = [r for r in reproduce_quick("hscc-leafspine-websearch", tmp_path) if r["metric"] == "claim"]
    pairs = [json.loads(r["condition"]) for r in rows]
    accept = [r for r, c in zip(rows, pairs) if c["left"] == {"load": 0.6, "scheme": "HSCC"} and c["right"] == {"load": 0.6, "scheme": "TCP-RED-ECN"}]
    # Over the five quick seeds the small-flow mean, the timeouts and the
    # all-flow mean hold. The small-flow max is one 200 ms timeout or none:
    # TCP-RED-ECN's is one in every seed, HSCC's in two of five (a few ms in
    # the others), so its interval spans 1 although its mean ratio is 0.13.
    assert len(accept) == 4 and all(float(r["dcsim"]) < 1 for r in accept), accept
    assert [r["verdict"] for r in accept] == ["holds", "inconclusive", "holds", "holds"], accept


@pytest.mark.parametrize("name", ["hscc-dumbbell", "hscc-leafspine-datamining", "hscc-thresholds", "hscc-incast", "hscc-one-to-all"])
def test_other_hscc_reproductions_run_quick(name, tmp_path):
    rows = reproduce_quick(name, tmp_path)
    measured = json.loads((tmp_path / name / "measurements.json").read_text())
    assert rows and measured
    # Every comparison has a value, except a ratio (a reduction 1 - X_HSCC / X,
    # or a claim on two values) whose baseline is zero: a short run can miss
    # no deadline at all. (A measurement may be None, e.g. no loss cycle.)
    zero_cases = {m["case"] for m in measured if "case" in m and m["value"] == 0}
    for r in rows:
        if r["dcsim"] in ("", None):
            cond = json.loads(r["condition"])
            assert r["metric"].endswith("_reduction") or r["metric"] == "claim", r
            assert cond.get("case", cond.get("left", {}).get("case")) in zero_cases, r

def test_a_variants_hscc_keys_reach_only_the_schemes_that_run_hscc(tmp_path):
    # `hscc_set` (variant fair-share) must not switch HSCC on for a baseline.
    from pathlib import Path

    from dcsim.experiments.hscc import _leafspine_jobs

    spec = {"scenario": "scenario.toml", "stop": "1ms", "duration": "2ms", "loads": [0.5], "cdf": "websearch",
            "hscc_set": {"window": "fair_share"}}
    schemes = [("HSCC", "HSCC", {}), ("DCTCP", "DCTCP", {}), ("0.5-0.875", "HSCC", {"switch.hscc.low": 0.5}),
               ("Reno", "Reno", {}), ("Reno-HSCC", "Reno-HSCC", {})]
    jobs = {cond["scheme"]: ov for cond, _, _, ov in _leafspine_jobs(spec, Path(tmp_path), schemes)}
    assert [s for s, ov in jobs.items() if ov.get("switch.hscc.window") == "fair_share"] == ["HSCC", "0.5-0.875", "Reno-HSCC"]
    assert jobs["0.5-0.875"]["switch.hscc.low"] == 0.5


def test_dumbbell_senders_started_together_lock_out_and_hscc_frees_them():
    # docs/reproduce.md, hscc-dumbbell: twelve NewReno senders without SACK
    # started in the same picosecond at a 100-packet drop-tail port. One
    # starves through repeated timeouts (the seed's node 6); with HSCC every
    # sender gets at least a third of its fair share (none starves: in 2 s
    # the smallest is 0.50 of it). At the scenario's 84 packets
    # nobody starves: the lockout moves with the buffer.
    from pathlib import Path

    scenario = Path(dcsim.__file__).parent / "experiments" / "hscc-dumbbell" / "scenario.toml"

    def goodputs(preset, buffer):
        o = {"run.duration": "2s", "switch.buffer": buffer, "workload[0].start_jitter": "0s"}
        f = dcsim.run(scenario, preset=preset, overrides=o).flows
        return [b * 8 / 2.0 / 1e9 for b in f.column("delivered").to_pylist()], sum(f.column("timeouts").to_pylist())

    (plain, timeouts), (hscc, _) = goodputs("hscc/Reno", "100pkt"), goodputs("hscc/Reno-HSCC", "100pkt")
    fair = sum(plain) / len(plain)
    assert min(plain) < 0.1 * fair and timeouts >= 3, (plain, timeouts)
    assert min(hscc) > sum(hscc) / len(hscc) / 3, hscc
    assert min(goodputs("hscc/Reno", "84pkt")[0]) > 0.9 * fair
