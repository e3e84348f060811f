"""Reports as a reader sees them: opened in headless Chromium (Debian's
chromium and chromium-driver, driven by selenium), with no console errors,
every figure drawn, nothing fetched from the network, every table cell a
quantity with its unit, and sorting that works.

Chromium is installed with apt-get when it is missing (CI's clean machine);
where that is impossible the test fails and says why: a report nobody has
opened is not tested."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import reproduce_quick

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

# ---------------------------------------------------------------- units check

NUMBER = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]\d+)?"
UNITS = {
    "time": r"ps|ns|µs|ms|s",
    "size": r"B|KB|MB|GB|TB",
    "rate": r"b/s|Kb/s|Mb/s|Gb/s|Tb/s",
}
# What a column holds, by its heading.
KINDS = [
    ("time", re.compile(r"\b(FCT|completion|start|RTT|delay|deadline|duration)\b", re.I)),
    ("ratio", re.compile(r"slowdown|utilisation|utilization|Jain", re.I)),
    ("size", re.compile(r"^size$|^sent$|^largest queue$", re.I)),
    ("rate", re.compile(r"\brate\b", re.I)),
    ("count", re.compile(r"^(flows|rounds|drops|ECN marks|retransmits|timeouts|rounds with a timeout|largest queue \(packets\))$", re.I)),
]


def _significant_digits(text: str) -> int:
    digits = re.sub(r"\D", "", text.split("e")[0])
    return len(digits.lstrip("0"))


def unit_problems(headings: list[str], rows: list[list[str]]) -> list[str]:
    """Cells of a table that show a quantity without its unit, a unit on a
    ratio, or a raw number no one would print for a reader."""
    problems = []
    kinds = [next((kind for kind, pattern in KINDS if pattern.search(h)), None) for h in headings]
    for row in rows:
        for heading, kind, text in zip(headings, kinds, row):
            text = text.strip()
            if text in ("", "–"):
                continue
            bare = re.fullmatch(NUMBER, text) is not None
            if kind in UNITS:
                ok = re.fullmatch(rf"{NUMBER} ({UNITS[kind]})", text) is not None
                want = f"a {kind} with its unit"
            elif kind == "ratio":
                ok, want = bare or re.fullmatch(rf"{NUMBER} %", text) is not None, "a plain ratio, no unit"
            elif kind == "count":
                ok, want = re.fullmatch(r"\d{1,3}(,\d{3})*", text) is not None, "a whole number"
            else:  # a column of mixed quantities: only what is never right
                ok = not (bare and "." in text and _significant_digits(text) > 4)
                want = "at most 4 significant digits, or a unit"
            if not ok:
                problems.append(f"{heading!r}: {text!r} is not {want}")
    return problems


def test_unit_problems_finds_bare_times_units_on_ratios_and_raw_floats():
    headings = ["size", "FCT p99", "slowdown p99", "drops", "dcsim"]
    good = [["1.5 KB", "1.23 ms", "19", "1,204", "322.5 µs"], ["–", "850 µs", "69.5 %", "0", "0.2641"]]
    assert unit_problems(headings, good) == []
    bad = [["1500", "0.00123175", "18994.917ms", "1.5", "0.00123175"]]
    assert unit_problems(headings, bad) == [
        "'size': '1500' is not a size with its unit",
        "'FCT p99': '0.00123175' is not a time with its unit",
        "'slowdown p99': '18994.917ms' is not a plain ratio, no unit",
        "'drops': '1.5' is not a whole number",
        "'dcsim': '0.00123175' is not at most 4 significant digits, or a unit",
    ]


# ---------------------------------------------------------------- the browser

def _install_chromium() -> None:
    """Debian's chromium and its driver, as CI's clean machine needs them."""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} and {CHROMEDRIVER} are missing and cannot be installed here "
                    "(needs root and apt-get): apt-get install chromium chromium-driver")
    packages = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium", "chromium-driver"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print("installing chromium and chromium-driver with apt-get", file=sys.stderr)
    if subprocess.run(packages, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
        p = subprocess.run(packages, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            pytest.fail(f"apt-get could not install chromium: {p.stderr[-2000:]}")


@pytest.fixture(scope="module")
def browser():
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        _install_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


# Resources the page loads: each must be inline (a data: URL), since the
# report is one file that works offline.
RESOURCES = """
return Array.from(document.querySelectorAll('img[src], script[src], link[href], iframe[src], source[src]'))
  .map(e => e.getAttribute('src') || e.getAttribute('href'))
  .filter(u => !u.startsWith('data:') && !u.startsWith('#'));
"""
BROKEN_IMAGES = "return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt);"
TABLES = """
return Array.from(document.querySelectorAll('table')).map(t => ({
  headings: Array.from(t.querySelectorAll('thead th')).map(h => h.innerText.replace(/\\s*[⇅▲▼]$/, '')),
  rows: Array.from(t.tBodies[0].rows).map(r => Array.from(r.cells).map(c => c.innerText)),
}));
"""


def open_report(driver, path: Path, screenshot: Path) -> list[dict]:
    """Load the report, check what any report must satisfy, save a
    full-page screenshot; return its tables."""
    driver.get(path.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"console errors in {path.name}: {errors}"
    assert driver.execute_script(RESOURCES) == [], "the report must not load anything from outside itself"
    assert driver.execute_script(BROKEN_IMAGES) == [], "figures that did not draw"
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(height + 100, 16000))
    driver.save_screenshot(str(screenshot))
    driver.set_window_size(1400, 1000)
    tables = driver.execute_script(TABLES)
    problems = [p for t in tables for p in unit_problems(t["headings"], t["rows"])]
    assert not problems, "\n".join(problems[:30])
    return tables


def test_a_run_report_in_chromium(browser, tmp_path, star):
    from selenium.webdriver.common.by import By

    import dcsim

    star["workload"].append({"type": "poisson", "size": {"cdf": "websearch"}, "load": 0.3, "load_reference": "host", "pattern": "all_to_all",
                             "stop": "20ms"})
    star["run"] = {"duration": "30ms"}
    dcsim.run(star, out=tmp_path / "res")
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "report", str(tmp_path / "res")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    tables = open_report(browser, tmp_path / "res" / "report.html", tmp_path / "run.png")

    text = browser.find_element(By.TAG_NAME, "body").text
    assert "What ran" in text and "What it found" in text
    headings = [t["headings"] for t in tables]
    assert ["flow size", "flows", "FCT mean", "FCT p50", "FCT p99", "FCT p99.9",
            "slowdown mean", "slowdown p50", "slowdown p99"] in headings
    ports = next(t for t in tables if t["headings"][:1] == ["port"])
    assert all(" → " in row[0] for row in ports["rows"]), "ports are named by their endpoints"
    assert browser.execute_script("return document.images.length") >= 5

    # Sorting the flow table by FCT orders it by the value, not by the text.
    flows = browser.find_element(By.XPATH, "//table[contains(@class, 'sortable')][.//th[normalize-space()='flow']]")
    column = [th.text.rstrip(" ⇅▲▼") for th in flows.find_elements(By.CSS_SELECTOR, "thead th")].index("FCT")
    flows.find_elements(By.CSS_SELECTOR, "thead th")[column].click()
    values = browser.execute_script(
        "return Array.from(arguments[0].tBodies[0].rows).map(r => r.cells[arguments[1]].dataset.v)", flows, column)
    finished = [float(v) for v in values if v != ""]
    assert len(finished) > 10 and finished == sorted(finished)
    assert all(v == "" for v in values[len(finished):]), "unfinished flows sort last"


def test_a_reproduction_report_in_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By

    reproduce_quick("clues-rtt", tmp_path)
    tables = open_report(browser, tmp_path / "clues-rtt" / "report.html", tmp_path / "reproduction.png")
    comparison = next(t for t in tables if "verdict" in t["headings"] and "source" in t["headings"])
    verdicts = {row[comparison["headings"].index("verdict")] for row in comparison["rows"]}
    assert verdicts <= {"holds", "misses"} and "holds" in verdicts
    sources = [row[comparison["headings"].index("source")] for row in comparison["rows"]]
    assert all(re.search(r"Fig\.|§|Table|dcsim", s) for s in sources), sources
    # dcsim's figure sits beside the paper's numbers.
    assert browser.find_elements(By.CSS_SELECTOR, "figure img")
