"""The documentation runs: every `sh` and `python` block of docs/tutorial.md
and of the README's "Using it" section is executed, in order, in one empty
directory, by one Python process (shell blocks through bash with -e, Python
blocks in one shared namespace), with the `dcsim` command as installed.
A block that fails, or prints a traceback, fails the test with its number
and text."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Commands run in a cheaper form than written, each with its reason. Nothing
# else is changed.
CHEAPER = {
    # The whole benchmark set takes minutes; test_commands runs `bench` on
    # one scenario and test_cli its JSON lines.
    "dcsim bench": "dcsim bench --only incast-16",
}

RUNNER = r"""
import json, subprocess, sys, traceback
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__"}
for i, (lang, code) in enumerate(blocks, 1):
    print(f"--- block {i} ({lang})", flush=True)
    if lang == "sh":
        p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            print(f"BLOCK {i} FAILED: exit {p.returncode}", flush=True)
            sys.exit(1)
    else:
        try:
            exec(compile(code, f"<block {i}>", "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"BLOCK {i} FAILED", flush=True)
            sys.exit(1)
"""


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block tagged sh or python."""
    return [(lang, code) for lang, code in re.findall(r"^```(\w*)\n(.*?)^```", markdown, flags=re.S | re.M) if lang in ("sh", "python")]


def _run_blocks(blocks: list[tuple[str, str]], work: Path) -> str:
    cheaper = []
    for lang, code in blocks:
        if lang == "sh":
            code = "\n".join(CHEAPER.get(line.split("#")[0].strip(), line) for line in code.splitlines())
        cheaper.append((lang, code))
    (work / ".blocks.json").write_text(json.dumps(cheaper))
    p = subprocess.run([sys.executable, "-c", RUNNER, ".blocks.json"], cwd=work, capture_output=True, text=True, timeout=1800,
                       env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    said = p.stdout + p.stderr
    assert p.returncode == 0 and "Traceback" not in said, said[-6000:]
    return p.stdout


def test_the_tutorial_runs(tmp_path):
    blocks = code_blocks((ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 15
    out = _run_blocks(blocks, tmp_path)
    # What the tutorial tells the reader to look at exists and says what it claims.
    for path in ("dcsim-out/report.html", "k30/flows.parquet", "dctcp/queries.parquet", "newreno/queries.parquet",
                 "buffers/queries", "newreno-queue.png", "incast-rounds.png", "repro/clues-rtt/report.html"):
        assert (tmp_path / path).exists(), path
    assert "switch → host0" in out and "NewReno's:" in out
    assert len(list((tmp_path / "buffers" / "runs").glob("*.parquet"))) == 12, "4 buffer sizes x 3 seeds"


def test_the_readme_commands_run(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    using = readme.split("## Using it", 1)[1].split("\n## ", 1)[0]
    blocks = code_blocks(using)
    assert [lang for lang, _ in blocks] == ["sh", "python"], "the README's usage: commands, then the Python API"
    _run_blocks(blocks, tmp_path)
    assert (tmp_path / "results" / "report.html").exists() and (tmp_path / "repro").is_dir()


def test_the_developer_commands_in_the_docs_exist_and_parse():
    # The heavy ones (ns-3 builds, whole benchmark sets) are not run here:
    # each script must exist and accept its documented arguments. The
    # install and test commands are what CI and test_wheel run.
    blocks = [code for md in sorted((ROOT / "docs").rglob("*.md")) if md.name != "tutorial.md"
              for lang, code in code_blocks(md.read_text(encoding="utf-8")) if lang == "sh"]
    lines = [line.split("#")[0].split() for code in blocks for line in code.splitlines()]
    checked = 0
    for words in filter(None, lines):
        if words[0] == "python":
            script = ROOT / words[1]
            assert script.is_file(), f"{words[1]} (in the docs) does not exist"
            args = [*words[2:], "--dry-run"] if words[1] == "bench/compare_ns3.py" else ["--help"]
            p = subprocess.run([sys.executable, str(script), *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, f"{' '.join(words)}: {p.stderr[-2000:]}"
            checked += 1
        elif words[0] == "pytest":
            assert (ROOT / words[1]).is_file(), words[1]
        else:
            assert words[:2] == ["pip", "install"], f"a command the docs' test does not know: {' '.join(words)}"
    assert checked >= 4
