"""dcsim reproduce: the framework and its first full example, clues-rtt."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

from dcsim.reproduce import metric_formatter, metric_unit, quick_spec


def test_a_metric_names_its_unit():
    assert metric_unit("small_fct_mean_us") == "µs" and metric_unit("large_fct_p99_ms") == "ms"
    assert metric_unit("goodput_gbps") == "Gb/s" and metric_unit("min_rtt_ns") == "ns"
    # Ratios, fractions and counts have none, whatever they measure.
    assert metric_unit("small_fct_mean_ms_reduction") == metric_unit("all_fct_mean_vs_default") == ""
    assert metric_unit("timeouts") == metric_unit("jain") == metric_unit("rto_pairs_shorter_fraction") == ""
    assert metric_formatter("small_fct_mean_us")(141.7) == "141.7 µs"
    # The unit the magnitude calls for, not the one in the name.
    assert metric_formatter("switch_latency_p99_us")(2284.4) == "2.284 ms"
    assert metric_formatter("goodput_gbps")(0.6) == "600 Mb/s" and metric_formatter("buffer_pkts")(120) == "120 packets"
    assert metric_formatter("timeouts")(3) == "3" and metric_formatter("x_us")(None) == "–"
    assert metric_formatter("senders")([8, 16]) == "[8, 16]", "a parameter that is a list"


def test_list_and_quick_reproduction(tmp_path):
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and "clues-rtt" in p.stdout and "Fig. 21" in p.stdout
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "clues-rtt", "--quick", "--seeds", "3", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "clues-rtt"
    with (out / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["experiment", "metric", "condition", "paper", "dcsim", "ratio", "tolerance", "holds", "note", "source",
                             "seeds", "dcsim_lo", "dcsim_hi", "verdict"]
    # clues-rtt takes no random input: the second seed repeats the first, and one run is exact.
    assert all(r["seeds"] == "1" and r["dcsim_lo"] == r["dcsim"] == r["dcsim_hi"] for r in rows)
    assert "one run (deterministic: a second seed repeated the first)" in p.stdout
    assert all(r["source"] for r in rows), "every row names the paper's figure, table or text it comes from"
    # The quick version is the full one (it takes a second): every row.
    assert len(rows) == 18
    assert all(r["holds"] == "True" and r["verdict"] == "holds" for r in rows), rows
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "18 of 18" in page and "Quick version" in page and "Fig. 21" in page
    # Values carry a unit chosen by their magnitude: the 1 ms clock's RTO case.
    assert "1.251 ms" in page and "1.189 ms" in page
    assert "paper 1.251 ms, dcsim 1.189 ms" in p.stdout
    assert (out / "figures" / "clues-rtt.png").stat().st_size > 1000
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown experiment 'nope'" in p.stderr
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", "clues-rtt", "--seeds", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and "--seeds: '0': expected a whole number of seeds from 1 to 100" in p.stderr


def test_seeds_give_intervals_on_an_experiment_with_random_input(tmp_path):
    # hull-static's flows start at random times: three seeds give three
    # different runs, and every row carries an interval around its mean (a
    # point where every seed agrees, e.g. a ratio of 0 with no queue, or
    # goodput at line rate).
    name = "hull-static"
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", name, "--quick", "--seeds", "3",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    with (tmp_path / name / "comparison.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["seeds"] == "3" for r in rows)
    assert all(float(r["dcsim_lo"]) <= float(r["dcsim"]) <= float(r["dcsim_hi"]) for r in rows)
    # The queueing latencies at 2 and 3 flows on 5 us links differ between seeds.
    varying = [r for r in rows if '"delay": "5us", "flows": 3' in r["condition"]]
    assert len(varying) == 3 and all(float(r["dcsim_lo"]) < float(r["dcsim_hi"]) for r in varying), varying
    assert all((r["holds"] == "True") == (r["verdict"] == "holds") for r in rows)
    assert "over 3 seeds" not in p.stdout and ", 3 seeds;" in p.stdout
    measured = json.loads((tmp_path / name / "measurements.json").read_text())
    assert {r["seed"] for r in measured} == {1, 2, 3}
    # The seeds ran side by side on one pool; the first, run alone (and with
    # another hash seed), measures the same rows in the same order.
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "reproduce", name, "--quick", "--seeds", "1", "--out", str(tmp_path / "alone")],
                       capture_output=True, text=True, timeout=600, env=os.environ | {"PYTHONHASHSEED": "7"})
    assert p.returncode == 0, p.stderr
    alone = json.loads((tmp_path / "alone" / name / "measurements.json").read_text())
    assert alone == [r for r in measured if r["seed"] == 1]


def test_the_quick_spec_replaces_keys_at_every_level():
    spec = {"stop": "1s", "quick_stop": "100ms", "loads": [0.3, 0.6], "reference": [{"paper": 1}],
            "case": {"a": {"stop": "160s", "quick_stop": "32s", "background": False}, "b": {"stop": "16s"}}}
    assert quick_spec(spec) == {"stop": "100ms", "loads": [0.3, 0.6], "reference": [{"paper": 1}],
                                "case": {"a": {"stop": "32s", "background": False}, "b": {"stop": "16s"}}}


def test_an_experiment_file_may_ask_for_more_seeds_and_the_command_line_overrides_it():
    import tomllib

    from dcsim.experiments import ROOT
    from dcsim.reproduce import SEEDS, available, replicas_wanted

    specs = {n: tomllib.loads((ROOT / n / "experiment.toml").read_text(encoding="utf-8")) for n in available()}
    static = specs["hull-static"]
    assert replicas_wanted(static, None) == 20 and replicas_wanted(quick_spec(static), None) == 5
    assert replicas_wanted(static, 3) == replicas_wanted(quick_spec(static), 3) == 3
    # A quick version that runs the full version's runs runs its seeds too,
    # but where 20 seeds would not fit quick mode's 15 minutes (hscc-incast's
    # take 4: docs/reproduce.md, "Seeds and verdicts").
    queue = specs["ecnsharp-queue"]
    assert replicas_wanted(queue, None) == replicas_wanted(quick_spec(queue), None) == 20
    too_dear_for_quick = {"hscc-incast"}
    for name, spec in specs.items():
        same_runs = {k: v for k, v in quick_spec(spec).items() if k != "seeds"} == {k: v for k, v in spec.items() if k not in ("seeds", "quick_seeds")}
        same_seeds = replicas_wanted(quick_spec(spec), None) == replicas_wanted(spec, None)
        assert not same_runs or same_seeds == (name not in too_dear_for_quick), name
    assert replicas_wanted(specs["hull-dynamic"], None) == replicas_wanted(quick_spec(specs["hull-dynamic"]), None) == SEEDS
    # More seeds never shrink a quick version below the three.
    assert all(replicas_wanted(quick_spec(s), None) >= 3 and replicas_wanted(s, None) >= SEEDS for s in specs.values())


def test_every_variant_resolves_and_one_written_once_is_shared():
    import tomllib

    from dcsim.experiments import ROOT
    from dcsim.reproduce import available, variants

    for name in available():
        for label, v in variants(name).items():
            assert v["name"] == label and v["why"] and ("spec" in v or "set" in v), (name, label)
    # hull-search takes hull-dynamic's ns2-pacer (`like`) rather than repeating it.
    written = tomllib.loads((ROOT / "hull-search" / "experiment.toml").read_text(encoding="utf-8"))["variant"]
    assert {"name": "ns2-pacer", "like": "hull-dynamic"} in written
    assert variants("hull-search")["ns2-pacer"] == variants("hull-dynamic")["ns2-pacer"]


def test_interval_and_verdict_over_seeds():
    from dcsim.reproduce import compare, interval, verdict

    # Seeds that agree give a point; otherwise a Student-t interval of the mean
    # (t(0.975, 2) = 4.303 for three seeds).
    assert interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    mean, lo, hi = interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and abs(hi - 2.0 - 4.3027 / 3 ** 0.5) < 1e-3 and abs((2.0 - lo) - (hi - 2.0)) < 1e-12
    # Ratios on a log scale: a ratio and its inverse get mirrored intervals.
    m, lo, hi = interval([0.5, 1.0, 2.0], log=True)
    assert abs(m - 1.0) < 1e-12 and abs(lo * hi - 1.0) < 1e-9
    assert verdict(0.9, 1.1, 0.8, 1.2) == "holds"
    assert verdict(1.3, 1.4, 0.8, 1.2) == "misses" and verdict(0.5, 0.7, 0.8, None) == "misses"
    assert verdict(1.1, 1.3, 0.8, 1.2) == "inconclusive", "an interval across the tolerance edge is never a hold"

    spec = {"reference": [{"metric": "x_us", "condition": {"k": 1}, "paper": 100.0, "tolerance": 0.1}],
            "claim": [{"metric": "x_us", "left": {"k": 1}, "right": {"k": 2}, "below": 1.0, "text": "1 beats 2"}]}

    def seeds(*pairs):
        return [[{"metric": "x_us", "k": 1, "value": a}, {"metric": "x_us", "k": 2, "value": b}] for a, b in pairs]

    ref, claim = compare("t", spec, seeds((98, 120), (101, 125), (100, 118)))
    assert ref["verdict"] == "holds" and ref["holds"] and ref["seeds"] == 3 and ref["dcsim_lo"] < 99.67 < ref["dcsim_hi"]
    assert claim["verdict"] == "holds", "paired: 1 is below 2 in every seed"
    ref, claim = compare("t", spec, seeds((80, 70), (120, 130), (100, 95)))
    assert ref["verdict"] == "inconclusive" and not ref["holds"]
    assert claim["verdict"] == "inconclusive"
    ref, claim = compare("t", spec, seeds((150, 100), (151, 100), (149, 100)))
    assert ref["verdict"] == claim["verdict"] == "misses"
    # A seed without the measurement cannot hold.
    ref, _ = compare("t", spec, [seeds((100, 120))[0], [{"metric": "x_us", "k": 1, "value": None}, {"metric": "x_us", "k": 2, "value": 1}]])
    assert ref["verdict"] == "misses"
    # A count of zero in one seed (no timeouts) leaves no logarithm: the ratio
    # of the means, judged by the paired differences' interval. One seed's
    # 0-against-2 does not outvote four seeds of fewer on the left...
    _, claim = compare("t", spec, seeds((10, 20), (8, 18), (2, 0), (9, 19), (10, 21)))
    assert abs(claim["dcsim"] - 0.5) < 1e-12 and claim["dcsim_lo"] < 0.5 < claim["dcsim_hi"] < 1
    assert claim["verdict"] == "holds"
    # ...nor does a zero on the left make a claim hold by itself.
    _, claim = compare("t", spec, seeds((0, 20), (8, 18), (2, 0), (19, 9), (10, 21)))
    assert claim["verdict"] == "inconclusive"
    # Zero on the right in every seed: no ratio, and the claim misses.
    _, claim = compare("t", spec, seeds((0, 0), (1, 0), (0, 0)))
    assert claim["dcsim"] is None and claim["verdict"] == "misses"


def test_all_runs_every_experiment_resumably_and_writes_a_summary(tmp_path, monkeypatch, capsys):
    from dcsim import reproduce

    # Two fast experiments stand in for the whole list.
    monkeypatch.setattr(reproduce, "available", lambda: ["clues-nagle", "clues-rtt"])
    assert reproduce.main(None, tmp_path, True, False, None, every=True) == 0
    with (tmp_path / "summary.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["experiment"] for r in table] == ["clues-nagle", "clues-rtt", "(all)", "(all)"]
    assert [r["family"] for r in table[2:]] == ["CLUES", "all"]
    total = table[-1]
    assert int(total["rows"]) == int(table[0]["rows"]) + int(table[1]["rows"]) == 20
    assert int(total["holds"]) + int(total["misses"]) + int(total["inconclusive"]) == int(total["rows"])
    page = (tmp_path / "index.html").read_text()
    assert 'href="clues-rtt/report.html"' in page and 'href="clues-nagle/report.html"' in page
    # Resumed: both are kept, unless what they depend on or how they ran changed.
    before = (tmp_path / "clues-rtt" / "run.json").read_text()
    capsys.readouterr()
    reproduce.main(None, tmp_path, True, False, None, every=True)
    assert capsys.readouterr().err.count("finished before, kept") == 2
    assert (tmp_path / "clues-rtt" / "run.json").read_text() == before
    reproduce.main(None, tmp_path, True, False, 2, every=True)
    assert "finished before" not in capsys.readouterr().err, "other seeds: run again"
    assert reproduce.main("clues-rtt", tmp_path, True, False, None, every=True) == 2


def test_a_variant_with_a_bad_key_is_a_scenario_error_naming_the_run(tmp_path, monkeypatch, capsys):
    # The worker's ScenarioError crosses the process pool as itself: exit 2, one line.
    from dcsim import cli, reproduce

    variant = {"name": "huge-dupthresh", "why": "fast retransmit off", "set": {"tcp.dupthresh": 100000}}
    monkeypatch.setattr(reproduce, "variants", lambda name: {"huge-dupthresh": variant})
    assert cli.main(["reproduce", "clues-nagle", "--quick", "--variant", "huge-dupthresh", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dcsim: error: the run with ") and "\n" not in err, err
    assert "tcp.dupthresh: 100000 is out of range: allowed 1..=1000" in err, err
    assert not (tmp_path / "clues-nagle--huge-dupthresh").exists()


def test_a_variant_sets_its_keys_in_every_run_and_is_reported_apart(tmp_path, monkeypatch):
    from dcsim import reproduce

    # clues-nagle over 1 us links in place of the thesis' 134 ns: every
    # transaction takes longer, so the variant's numbers must differ.
    variant = {"name": "long-links", "why": "1 us links", "set": {"topology.link_delay": "1us"}}
    monkeypatch.setattr(reproduce, "available", lambda: ["clues-nagle"])
    monkeypatch.setattr(reproduce, "variants", lambda name: {"long-links": variant} if name == "clues-nagle" else {})
    assert reproduce.main(None, tmp_path, False, False, None, every=True) == 0
    with (tmp_path / "summary.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [(r["family"], r["experiment"]) for r in table] == [
        ("CLUES", "clues-nagle"), ("CLUES variants", "clues-nagle--long-links"),
        ("CLUES", "(all)"), ("CLUES variants", "(all)"), ("all", "(all)")]
    # The quick set leaves the variants (full-mode diagnoses) out.
    assert reproduce.main(None, tmp_path / "quick", True, False, None, every=True) == 0
    with (tmp_path / "quick" / "summary.csv").open() as f:
        assert [r["family"] for r in csv.DictReader(f)] == ["CLUES", "CLUES", "all"]
    assert table[-1]["rows"] == table[0]["rows"], "variants do not count toward the totals"
    rows = {}
    for label in ("clues-nagle", "clues-nagle--long-links"):
        with (tmp_path / label / "comparison.csv").open() as f:
            rows[label] = list(csv.DictReader(f))
        assert {r["experiment"] for r in rows[label]} == {label}
    assert [r["dcsim"] for r in rows["clues-nagle"]] != [r["dcsim"] for r in rows["clues-nagle--long-links"]]
    assert "variant long-links: 1 us links" in (tmp_path / "clues-nagle--long-links" / "report.html").read_text()
