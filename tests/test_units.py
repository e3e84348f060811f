"""Every quantity printed with its unit, the unit chosen by magnitude."""

from __future__ import annotations

import math

import pytest

from dcsim import units


@pytest.mark.parametrize("seconds, text", [
    (0.00123175, "1.232 ms"), (18.994917, "18.99 s"), (2e-5, "20 µs"), (1.5e-9, "1.5 ns"),
    (5e-10, "500 ps"), (0, "0 s"), (0.000999999, "1 ms"), (3600, "3,600 s"), (1.0, "1 s"),
])
def test_times(seconds, text):
    assert units.time(seconds) == text


def test_sizes_rates_ratios_counts():
    assert units.size(64000) == "64 KB" and units.size(1460) == "1.46 KB" and units.size(335478) == "335.5 KB"
    assert units.size(10e6) == "10 MB" and units.size(512) == "512 B"
    assert units.rate(9.41e9) == "9.41 Gb/s" and units.rate(600e6) == "600 Mb/s" and units.rate(10e9) == "10 Gb/s"
    assert units.ratio(18.994917) == "18.99" and units.ratio(0.93) == "0.93"
    assert units.percent(0.4216) == "42.2 %" and units.count(68510) == "68,510"
    assert units.number(1251.0) == units.number(1251) == "1,251"
    assert units.percent(1.0, 2) == "100 %" and units.number(999.6, 3) == "1,000" and units.number(123.4, 2) == "123"


def test_missing_values_are_a_dash():
    for fmt in (units.time, units.size, units.rate, units.ratio, units.percent, units.count):
        assert fmt(None) == units.MISSING and fmt(math.nan) == units.MISSING


def test_ports_are_named_by_their_endpoints():
    assert units.port_name("leaf3", "spine1") == "leaf3 → spine1"


def test_a_scenario_quantity_as_a_reader_reads_it():
    assert units.as_read("10Gbps") == "10 Gb/s"
    assert units.as_read("2.5us") == "2.5 µs" and units.as_read("200000B") == "200 KB" and units.as_read("1500us") == "1.5 ms"
    assert units.as_read("100pkt") == "100 packets"
    assert units.as_read("single") == "single" and units.as_read("10 apples") == "10 apples"
