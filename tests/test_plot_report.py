"""Figures and the HTML report."""

from __future__ import annotations

import subprocess
import sys

import dcsim
from dcsim import plot


def _result(star, tmp_path):
    star["workload"].append({"type": "bulk", "src": [1, 2], "dst": 3, "size": "inf"})
    star["run"] = {"duration": "10ms"}
    star["output"] = {"tcp_trace": True, "queue_sample_interval": "10us"}
    return dcsim.run(star, out=tmp_path / "out")


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


def test_report_and_plot_cli(star, tmp_path):
    _result(star, tmp_path)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "report", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 4 and "scenario hash" in page and '&quot;cc&quot;: &quot;dctcp&quot;' in page
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "plot", str(out), "queue"], capture_output=True, text=True)
    assert p.returncode == 0 and (out / "queue.png").exists()
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "report", str(tmp_path / "missing")], capture_output=True, text=True)
    assert p.returncode == 2 and "not a dcsim results directory" in p.stderr
