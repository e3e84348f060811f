"""Figures and the HTML report."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import dcsim
from dcsim import plot

TIME_TICK = re.compile(r"^\d[\d.,]* (ps|ns|µs|ms|s)$")


def _result(star, tmp_path):
    # Two congested receivers (host0 and host3), so two switch ports mark.
    star["workload"].append({"type": "bulk", "src": [1, 2], "dst": 3, "size": "inf"})
    star["run"] = {"duration": "10ms"}
    star["output"] = {"tcp_trace": True, "queue_sample_interval": "10us"}
    return dcsim.run(star, out=tmp_path / "out")


def _tick_labels(axis) -> list[str]:
    axis.figure.canvas.draw()
    return [t.get_text() for t in axis.get_ticklabels(which="both") if t.get_text() and t.get_visible()]


def test_every_figure_draws(star, tmp_path):
    r = _result(star, tmp_path)
    for kind, fn in plot.KINDS.items():
        fig = fn(r)
        assert fig.axes and fig.axes[0].has_data(), kind
        assert plot.save(fig, tmp_path / f"{kind}.png").stat().st_size > 1000
    fig = plot.percentile_vs_load({"a": {0.2: r, 0.5: r}, "b": {0.2: r}}, metric="slowdown_p99", bucket="all")
    assert len(fig.axes[0].lines) == 2
    fig = plot.fct_cdf({"one": r, "two": r})
    assert len(fig.axes[0].get_legend().get_texts()) == 2


def test_axes_carry_units_and_ports_their_endpoints(star, tmp_path):
    r = _result(star, tmp_path)
    labels = _tick_labels(plot.fct_cdf(r).axes[0].xaxis)  # a log axis
    assert labels and all(TIME_TICK.match(t) for t in labels), labels
    assert not any("×" in t or "10^" in t for t in labels)
    for fig in (plot.query_cdf(r), plot.queue_over_time(r), plot.throughput_over_time(r)):
        labels = _tick_labels(fig.axes[0].xaxis)
        assert labels and all(TIME_TICK.match(t) for t in labels), labels
    rates = _tick_labels(plot.throughput_over_time(r).axes[0].yaxis)
    assert all(re.match(r"^\d[\d.,]* (b/s|Kb/s|Mb/s|Gb/s)$", t) for t in rates), rates
    sizes = _tick_labels(plot.slowdown_vs_size(r).axes[0].xaxis)
    assert sizes and all(re.match(r"^\d[\d.,]* (B|KB|MB|GB)$", t) for t in sizes), sizes
    legend = [t.get_text() for t in plot.queue_over_time(r).axes[0].get_legend().get_texts()]
    assert "switch → host0" in legend and "switch → host3" in legend
    bars = _tick_labels(plot.drops_and_marks(r).axes[0].yaxis)
    assert set(bars) >= {"switch → host0", "switch → host3"}


def test_a_figure_with_nothing_to_draw_says_why(star, tmp_path):
    star["output"] = {"queue_sample_interval": "0s"}
    r = dcsim.run(star)
    with pytest.raises(plot.NoData, match="tcp_trace"):
        plot.throughput_over_time(r)
    with pytest.raises(plot.NoData, match="queue_sample_interval"):
        plot.queue_over_time(r)
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "plot", str(_write(r, tmp_path)), "throughput"], capture_output=True, text=True)
    assert p.returncode == 2 and "output.tcp_trace = true" in p.stderr and "Traceback" not in p.stderr


def _write(r, tmp_path):
    return r.write(tmp_path / "written")


def test_report_and_plot_cli(star, tmp_path):
    _result(star, tmp_path)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "report", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    page = (out / "report.html").read_text()
    # Summary first, then the figures: slowdown against size, the CDFs,
    # queues, utilisation, drops and marks, goodput.
    assert page.index("What ran") < page.index("What it found") < page.index("<h2>Figures")
    assert page.count("data:image/png;base64,") == 7 and "Not drawn" not in page
    assert "scenario hash" in page and "&#34;cc&#34;: &#34;dctcp&#34;" in page
    assert "switch → host0" in page and "<table class=\"sortable" in page
    fct_rows = re.findall(r"<tr><td>\(0,100KB\]</td>(.*?)</tr>", page)
    assert fct_rows and re.search(r">[\d.]+ (µs|ms)</td>", fct_rows[0]), "FCTs with their unit"
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "plot", str(out), "queue"], capture_output=True, text=True)
    assert p.returncode == 0 and (out / "queue.png").exists()
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "report", str(tmp_path / "missing")], capture_output=True, text=True)
    assert p.returncode == 2 and "not a dcsim results directory" in p.stderr
