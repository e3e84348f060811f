"""bench/compare_htsim.py's dcsim side: htsim itself cannot be fetched in CI,
so these check the matched scenario and the script's handling of its inputs."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import dcsim

ROOT = Path(__file__).resolve().parent.parent


def _compare():
    spec = importlib.util.spec_from_file_location("compare_htsim", ROOT / "bench" / "compare_htsim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_matched_scenario_carries_the_given_permutation_and_seed():
    c = _compare()
    perm = [(i + 37) % c.HOSTS for i in range(c.HOSTS)]
    text = c.dcsim_scenario(perm, 3).replace('duration = "210ms"', 'duration = "2ms"')
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        r = dcsim.run(f.name)
    assert r.summary["seed"] == 3
    flows = r.flows.to_pylist()
    assert sorted((x["src"], x["dst"]) for x in flows) == list(enumerate(perm))
    # Every flow moves data within 2 ms, and none beyond what its 10 Gb/s link can carry.
    most = 10e9 * 0.002 / 8 * c.DCSIM_PAYLOAD_SHARE
    assert all(0 < x["delivered"] <= most for x in flows)
    # htsim's 9000 B packets are 9000 B frames: IP MTU + 14 B header + 4 B FCS.
    assert r.scenario["link"]["mtu"] + 18 == 9000
    assert r.scenario["tcp"]["initial_ssthresh"] == 15 and r.scenario["tcp"]["grow_in_cwr"]


def test_the_reno_variant_is_newreno_over_drop_tail():
    c = _compare()
    text = c.dcsim_scenario(list(range(1, c.HOSTS)) + [0], 1, "reno")
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
        f.write(text)
        f.flush()
        scenario, _ = dcsim.resolve(f.name)
    assert scenario["tcp"]["cc"] == "newreno" and scenario["switch"]["aqm"]["type"] == "droptail"


def test_the_script_rejects_what_it_cannot_use(tmp_path):
    script = ROOT / "bench" / "compare_htsim.py"
    for args, said in ((["--build-htsim", str(tmp_path)], "not a csg-htsim checkout"),
                       (["--htsim", str(tmp_path), "--variant", "reno"], "no htsim_tcp_permutation_seeded in"),
                       ([], "build it")):
        p = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
