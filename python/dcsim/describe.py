"""What a run was and what it found, in a few lines: the terminal summary
after `dcsim run`, the top of `dcsim report` and a Result's notebook view
all say it the same way, every number with its unit."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from . import analysis, units

# Resolved-scenario keys that say nothing a reader needs in a one-line
# description (they are all in the report's full scenario listing).
_QUIET = {"type", "dscp", "stagger", "start_jitter", "pairing", "connections_per_responder"}


def _value(v: Any) -> str:
    if isinstance(v, list):
        if len(v) > 4 and all(isinstance(x, int) for x in v) and v == list(range(v[0], v[0] + len(v))):
            return f"{v[0]}..{v[-1] + 1} ({len(v)})"
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        if "points" in v:  # a flow-size CDF: its name, not its table
            return f"{v['cdf']} CDF" if v.get("cdf") else f"a CDF of {len(v['points'])} points"
        return "{" + ", ".join(f"{k} {_value(x)}" for k, x in sorted(v.items()) if x is not None) + "}"
    return units.as_read(v) if isinstance(v, str) else str(v)


def _unset(v: Any) -> bool:
    """Nothing to say: absent, off, empty, or a zero quantity (a start at 0 s)."""
    return v is None or v is False or v == [] or v == {} or (isinstance(v, str) and units.as_read(v).startswith("0 "))


def _items(table: dict[str, Any]) -> str:
    """The keys that are set, in name order (as scenario.json has them)."""
    return ", ".join(f"{k} {_value(v)}" for k, v in sorted(table.items()) if k not in _QUIET and not _unset(v))


def what_ran(scenario: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    """One line each: topology, switches, transport, workloads, and the run."""
    lines = []
    topo = scenario.get("topology", {})
    if topo:
        lines.append(f"topology: {topo.get('type', '?')}: {_items(topo)}")
    switch = scenario.get("switch", {})
    if switch:
        lines.append(f"switches: {_items(switch)}")
    tcp = scenario.get("tcp", {})
    if tcp:
        lines.append(f"transport: TCP {tcp.get('cc', '?')}, min RTO {_value(tcp.get('min_rto', '?'))}, "
                     f"RTT clock {tcp.get('rtt_clock', '?')} (G {_value(tcp.get('rtt_granularity', '?'))}), RTO {tcp.get('rto_formula', '?')}, SACK {'on' if tcp.get('sack') else 'off'}")
    for i, w in enumerate(scenario.get("workload", [])):
        lines.append(f"workload[{i}]: {w.get('type', '?')}: {_items(w)}")
    lines.append(f"run: {units.time(summary['sim_seconds'])} simulated (stopped by {summary['stopped_by']}), "
                 f"seed {summary['seed']}, {units.count(summary['events'])} events in {units.time(summary['wall_seconds'])}, "
                 f"dcsim {summary['dcsim_version']}, scenario hash {summary['scenario_hash'][:12]}")
    return lines


def findings(result: Any) -> list[tuple[str, str]]:
    """(what, value) rows: flow completion, goodput and fairness, incast
    rounds, losses and recovery, the busiest switch port."""
    s = result.summary
    rows: list[tuple[str, str]] = []
    flows = result.flows
    done = flows.filter(pc.is_valid(flows["fct"]))
    if flows.num_rows:
        rows.append(("flows", f"{units.count(flows.num_rows)} ({units.count(done.num_rows)} completed)"))
    if done.num_rows:
        fct = sorted(done["fct"].to_pylist())
        rows.append(("FCT p50 / p99", f"{units.time(analysis.percentile(fct, 50))} / {units.time(analysis.percentile(fct, 99))}"))
        sd = sorted(x for x in done["slowdown"].to_pylist() if x is not None)
        if sd:
            rows.append(("slowdown p50 / p99", f"{units.ratio(analysis.percentile(sd, 50))} / {units.ratio(analysis.percentile(sd, 99))}"))
    long_lived = flows.filter(pc.and_(pc.equal(flows["kind"], "bulk"), pc.is_null(flows["bytes"])))
    if long_lived.num_rows and s["sim_seconds"] > 0:
        bps = [d * 8 / s["sim_seconds"] for d in long_lived["delivered"].to_pylist()]
        rows.append(("long-lived goodput", f"{units.rate(sum(bps))} in all, {units.rate(min(bps))} to {units.rate(max(bps))} per flow, "
                     f"Jain's index {units.ratio(analysis.jain(bps))}"))
    q = result.queries
    if q.num_rows:
        qc = analysis.query_completion(result)
        rows.append(("incast rounds", f"{units.count(qc['rounds'])}, completion p50 {units.time(qc['p50'])}, p99 {units.time(qc['p99'])}, "
                     f"{units.count(qc['rounds_with_rto'])} with a timeout"))
    if flows.num_rows:
        rtx = sum(flows["retransmits"].to_pylist())
        rto = sum(flows["timeouts"].to_pylist())
        rows.append(("retransmissions", f"{units.count(rtx)} segments, {units.count(rto)} timeouts"))
    ports = analysis.port_stats(result)
    if ports:
        busiest = ports[0]
        deepest = max(ports, key=lambda p: (p["max_queue_bytes"], -p["port"]))
        rows.append(("busiest switch port", f"{busiest['name']}, {units.percent(busiest['utilisation'])} utilised"))
        rows.append(("largest queue", f"{units.size(deepest['max_queue_bytes'])} ({units.count(deepest['max_queue_packets'])} packets) at {deepest['name']}"))
        rows.append(("switch drops / ECN marks", f"{units.count(sum(p['drops'] for p in ports))} / {units.count(sum(p['ecn_marks'] for p in ports))}"))
    return rows
