"""Flow-size distributions shipped with dcsim, and loading CDF files.

File formats (as in the public simulators these files come from):
* two columns ``size cdf`` with cdf in [0, 1] or in percent (0..100; detected
  when the largest value exceeds 1);
* ns-2 ``RandomVariable/Empirical`` tables, three columns ``size 1 cdf``.
Sizes are bytes, or packets when ``packet_bytes`` is given (PIAS's files are in
1460-byte packets). See data/workloads/README.md for where each file comes from.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DATA = Path(str(resources.files("dcsim") / "data" / "workloads"))

# name -> (file, bytes per packet or None, description)
NAMED: dict[str, tuple[str, int | None, str]] = {
    "websearch": ("websearch_ns3ecnsharp_DCTCP_CDF.txt", None, "web search (DCTCP paper), bytes; mean 1,711,250 B"),
    "websearch_pias": ("websearch_pias_CDF_dctcp.tcl", 1460, "web search in 1460 B packets (PIAS ns-2); mean 1,665,831 B"),
    "websearch_tracks": ("websearch_tracks_CDF_websearch.tcl", None, "web search, HSCC author's ns-2 framework; mean 1,712,000 B"),
    "datamining_vl2": ("datamining_ns3ecnsharp_VL2_CDF.txt", None, "data mining (VL2), 13 points in bytes with a 1 GB tail; mean 12,658,199 B"),
    "datamining_pias": ("datamining_pias_CDF_vl2.tcl", 1460, "data mining (VL2) as PIAS ships it: 9 points in 1460 B packets; mean 7,470,236 B"),
    "datamining_tracks": ("datamining_tracks_CDF_datamining.tcl", None, "data mining, HSCC author's framework; mean 12,658,208 B"),
    "fb_hadoop": ("hpcc_FbHdp_distribution.txt", None, "Facebook Hadoop (HPCC); mean 120,421 B"),
    "ali_storage": ("hpcc_AliStorage2019.txt", None, "Alibaba storage 2019 (HPCC); mean 40,870 B"),
    "google_rpc": ("hpcc_GoogleRPC2008.txt", None, "Google RPC 2008 (HPCC); mean 2,892 B"),
    "homa_w1": ("homa_W1_FacebookKeyValue.txt", None, "Homa's W1, Facebook memcached (key-value); mean 188 B"),
    "homa_w2": ("homa_W2_GoogleSearchRPC.txt", None, "Homa's W2, Google search RPC; mean 441 B"),
    "homa_w3": ("homa_W3_GoogleAllRPC.txt", None, "Homa's W3, Google, all applications; mean 2,927 B"),
    "homa_w4": ("homa_W4_FacebookHadoop.txt", None, "Homa's W4, Facebook Hadoop; mean 127,797 B"),
    "homa_w5": ("homa_W5_DCTCP_WebSearch.txt", None, "Homa's W5, DCTCP web search (1470 B packets); mean 2,564,715 B"),
}


class CdfError(ValueError):
    pass


def load_cdf(path: str | Path, packet_bytes: int | None = None) -> list[list[float]]:
    """Read a CDF file into points [[bytes, probability in [0, 1]], ...]."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CdfError(f"cannot read CDF file {str(path)!r}: {e.strerror or e}") from None
    rows: list[tuple[float, float]] = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        try:
            if len(parts) == 2:
                rows.append((float(parts[0]), float(parts[1])))
            elif len(parts) == 3:
                rows.append((float(parts[0]), float(parts[2])))
            else:
                raise ValueError
        except ValueError:
            raise CdfError(f"{path.name} line {n}: expected 'size cdf' or 'size 1 cdf', got {line.strip()!r}") from None
    if len(rows) < 2:
        raise CdfError(f"{path.name}: a CDF needs at least two rows")
    scale = 100.0 if max(p for _, p in rows) > 1.0 + 1e-9 else 1.0
    unit = float(packet_bytes or 1)
    return [[x * unit, p / scale] for x, p in rows]


def resolve_size(spec: dict, base: Path, where: str) -> dict:
    """Fill `points` of a size table from `cdf` (a packaged name) or `cdf_file`."""
    spec = dict(spec)
    if "points" in spec:
        return spec
    name, file = spec.get("cdf"), spec.get("cdf_file")
    if (name is None) == (file is None):
        raise CdfError(f"{where}: give `cdf` (one of {', '.join(sorted(NAMED))}) or `cdf_file`")
    if name is not None:
        if not isinstance(name, str) or name not in NAMED:
            raise CdfError(f"{where}.cdf: unknown distribution {name!r}: expected one of {', '.join(sorted(NAMED))}")
        fname, pkt, _ = NAMED[name]
        spec["points"] = load_cdf(DATA / fname, pkt)
    elif not isinstance(file, str):
        raise CdfError(f"{where}.cdf_file: expected a file path, got {file!r}")
    else:
        spec["points"] = load_cdf(base / file, spec.get("packet_bytes"))
    return spec
