"""The benchmark harness (rocpy/bench/harness.py): statistics, interleaving, output.

A fake clock makes every timing exact; nothing here depends on real time.
"""
from __future__ import annotations

import gc
import json
import statistics
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocpy.bench import Case, Progress, Stats, run_cases
from rocpy.bench.harness import SCHEMA, balanced_orders, machine_info, percentile


class FakeClock:
    """A nanosecond clock that only moves when a variant says it took time."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now

    def variant(self, *durations_ns: int, log: list | None = None, name: str = ""):
        """A variant taking each duration in turn (cycling)."""
        state = {"i": 0}

        def run() -> None:
            self.now += durations_ns[state["i"] % len(durations_ns)]
            state["i"] += 1
            if log is not None:
                log.append(name)
        return run


def run(cases, **kw):
    kw.setdefault("meta", {"backend": "test"})
    return run_cases(cases, **kw)


def test_percentiles_interpolate_linearly():
    v = [1.0, 2.0, 3.0, 4.0]
    assert percentile(v, 50) == 2.5
    assert percentile(v, 10) == pytest.approx(1.3)
    assert percentile(v, 90) == pytest.approx(3.7)
    assert percentile(v, 0) == 1.0 and percentile(v, 100) == 4.0
    assert percentile([7.0], 90) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=60))
def test_stats_agree_with_the_statistics_module(samples):
    s = Stats.of(samples, ops=1, unit="ns")
    assert s.median == pytest.approx(statistics.median(samples))
    assert s.mean == pytest.approx(statistics.fmean(samples))
    assert s.min == min(samples) and s.max == max(samples)
    assert s.min <= s.p10 <= s.q1 <= s.median <= s.q3 <= s.p90 <= s.max
    if len(samples) > 1:
        deciles = statistics.quantiles(samples, n=10, method="inclusive")
        assert (s.p10, s.p90) == pytest.approx((deciles[0], deciles[-1]))


def test_stats_are_per_operation_in_the_case_unit():
    s = Stats.of([10_000, 20_000, 30_000], ops=10, unit="us")
    assert (s.min, s.median, s.max) == pytest.approx((1.0, 2.0, 3.0))
    assert s.n == 3


def test_variants_interleave_in_balanced_orders_and_warmup_is_dropped():
    clock, log = FakeClock(), []
    case = Case("c", {n: clock.variant(1, log=log, name=n) for n in "abc"})
    res = run([case], repeat=6, warmup=1, clock=clock)
    # the Williams orders of three, then their reverses, the first again after six
    assert log == list("abc" "bca" "cab" "cba" "acb" "bac" "abc")
    assert {n: len(v.samples_ns) for n, v in res.cases[0].variants.items()} == {
        "a": 6, "b": 6, "c": 6}


@pytest.mark.parametrize("n", range(1, 10))
def test_balanced_orders_put_each_variant_after_each_other_equally_often(n):
    orders = balanced_orders(n)
    assert len(orders) == (2 * n if n % 2 and n > 1 else n)
    assert all(sorted(order) == list(range(n)) for order in orders)
    for position in range(n):              # each variant in each position equally often
        column = Counter(order[position] for order in orders)
        assert set(column.values()) == {len(orders) // n}
    follows = Counter((a, b) for order in orders for a, b in zip(order, order[1:]))
    if n > 1:                              # each ordered pair adjacent equally often
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1


def test_balanced_orders_refuse_no_variants():
    with pytest.raises(ValueError, match="at least one variant"):
        balanced_orders(0)


def test_settle_runs_after_every_timed_call_and_is_not_timed():
    clock, log = FakeClock(), []

    def settle() -> None:       # a synchronize that takes long: never in the samples
        clock.now += 1_000_000
        log.append("settle")
    case = Case("c", {n: clock.variant(7, log=log, name=n) for n in "ab"}, settle=settle)
    res = run([case], repeat=2, warmup=1, clock=clock).cases[0]
    assert log == ["a", "settle", "b", "settle", "b", "settle", "a", "settle",
                   "a", "settle", "b", "settle"]
    assert {n: v.samples_ns for n, v in res.variants.items()} == {"a": [7, 7], "b": [7, 7]}


def test_medians_ratios_and_bandwidth_from_exact_timings():
    clock = FakeClock()
    case = Case("copy", {"raw": clock.variant(1000, 3000, 2000),
                         "rocpy": clock.variant(1500, 2500, 3500)},
                reference="raw", ops=2, unit="ns", bytes_per_op=2000)
    res = run([case], repeat=3, warmup=0, clock=clock).cases[0]
    raw, rocpy = res.variants["raw"], res.variants["rocpy"]
    assert raw.samples_ns == [1000, 3000, 2000]
    assert (raw.stats.median, rocpy.stats.median) == (1000.0, 1250.0)  # per op: ops=2
    assert (raw.ratio, rocpy.ratio) == (1.0, 1.25)
    assert raw.gbps == pytest.approx(2.0) and rocpy.gbps == pytest.approx(1.6)


def test_a_zero_reference_gives_no_ratio():
    clock = FakeClock()
    res = run([Case("c", {"zero": clock.variant(0), "x": clock.variant(5)})], repeat=2,
              warmup=0, clock=clock)
    assert res.cases[0].variants["x"].ratio is None
    assert res.table().splitlines()[3].split()[-1] == "-"


def test_reference_defaults_to_the_first_variant():
    case = Case("c", {"x": lambda: None, "y": lambda: None})
    assert case.reference == "x"


@pytest.mark.parametrize("kwargs, message", [
    ({"variants": {}}, "no variants"),
    ({"reference": "nope"}, "not a variant"),
    ({"ops": 0}, "ops"),
    ({"unit": "fortnights"}, "unit"),
])
def test_case_validation(kwargs, message):
    args = {"name": "c", "variants": {"a": lambda: None}, **kwargs}
    with pytest.raises(ValueError, match=message):
        Case(**args)


def test_progress_reports_every_repetition_of_every_case():
    seen: list[Progress] = []
    cases = [Case("one", {"a": lambda: None}), Case("two", {"a": lambda: None})]
    run(cases, repeat=2, warmup=1, progress=seen.append)
    assert [(p.case, p.case_index, p.cases, p.done, p.total) for p in seen] == [
        ("one", 0, 2, 1, 3), ("one", 0, 2, 2, 3), ("one", 0, 2, 3, 3),
        ("two", 1, 2, 1, 3), ("two", 1, 2, 2, 3), ("two", 1, 2, 3, 3)]


def test_collector_is_off_while_timing_and_restored_after():
    states = []
    assert gc.isenabled()
    run([Case("c", {"a": lambda: states.append(gc.isenabled())})], repeat=2, warmup=0)
    assert states == [False, False] and gc.isenabled()


def test_json_has_the_schema_keys_and_round_trips(tmp_path):
    clock = FakeClock()
    case = Case("copy", {"raw": clock.variant(10), "rocpy": clock.variant(20)},
                bytes_per_op=64, unit="ns")
    res = run([case], repeat=4, warmup=1, clock=clock, meta={"backend": "stub", "note": "x"})
    doc = res.to_json()
    assert doc["schema"] == SCHEMA
    assert {"date", "python", "platform", "machine", "cpu", "rocpy_version", "backend"} <= set(doc["meta"])
    assert doc["meta"]["backend"] == "stub" and doc["meta"]["note"] == "x"
    assert "hostname" not in doc["meta"]
    assert doc["config"]["repeat"] == 4 and doc["config"]["warmup"] == 1
    (c,) = doc["cases"]
    assert {"name", "unit", "ops", "bytes_per_op", "reference", "variants"} <= set(c)
    v = c["variants"]["rocpy"]
    assert {"median", "mean", "min", "max", "p10", "p90", "q1", "q3", "n", "ratio", "gbps",
            "samples_ns"} <= set(v)
    assert v["samples_ns"] == [20, 20, 20, 20] and v["ratio"] == 2.0
    path = tmp_path / "out" / "bench.json"
    res.save(path)
    assert json.loads(path.read_text()) == json.loads(json.dumps(doc))


def test_machine_info_dates_in_iso_and_hostname_on_request():
    info = machine_info(hostname=True, backend=False)
    assert "T" in info["date"] and info["date"].endswith("+00:00")
    assert info["hostname"] and "backend" not in info


def test_table_lists_each_variant_with_its_ratio_and_bandwidth():
    clock = FakeClock()
    cases = [Case("launch", {"raw": clock.variant(1000), "rocpy": clock.variant(1500)}),
             Case("copy", {"rocpy": clock.variant(4000)}, bytes_per_op=8000, unit="ns")]
    text = run(cases, repeat=2, warmup=0, clock=clock).table()
    lines = text.splitlines()
    assert lines[0].split() == ["case", "variant", "median", "p10", "p90", "min", "ratio", "GB/s"]
    assert set(lines[1]) == {"-"}
    assert lines[2].split()[:7] == ["launch", "(us/op)", "raw", "*", "1.000", "1.000", "1.000"]
    assert lines[2].split()[-1] == "1.00x"
    assert lines[3].split() == ["rocpy", "1.500", "1.500", "1.500", "1.500", "1.50x"]
    assert lines[4].split()[-2:] == ["1.00x", "2.000"]
    assert lines[-1].startswith("* reference")
