"""The streamed /metrics parser (issue 29 item 7) gives the samples prometheus-client's parsers
give, for the names specwatch reads, however the page is cut into chunks; it keeps only those
names, bounds what it keeps (with the message), and tells a page that is no Prometheus text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _prom_util import FakeLlamacpp, FakeSglang, FakeTrtllm, FakeVllm, llamacpp_text, reference_exposition

from tui.core.formats import registry
from tui.core.sources.prom.exposition import START
from tui.core.sources.prom.sample_stream import PageError, SampleStream

PREFIXES = tuple(p for f in registry.FORMATS for p in f.metric_prefixes)
REF = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "real_logs"
    / "vllm_prom_vllm-project-vllm_24049.txt"
)

EDGES = r"""# HELP vllm:help_only a help line first
vllm:help_only{a="1"} 2
# TYPE vllm:plain counter
vllm:plain 3
# TYPE vllm:c_total counter
vllm:c_total{engine="0",model_name="m \"q\" \\ x\ny",} 4 1700000000000
vllm:c_created{engine="0"} 1.7e9
other_metric{x="1"} 5
vllm:after_other 6
# TYPE vllm:h histogram
vllm:h_bucket{le="+Inf"} 7
vllm:h_sum 8.5
vllm:h_count 7
# TYPE vllm:g gauge
vllm:g NaN
vllm:g{x="}{,="} -Inf
  sglang:spec_accept_length{tp_rank="0"}   2.5
process_start_time_seconds 1.7e9
process_start_time_seconds_extra 1
vllm:untyped_thing +Inf
"""

OPENMETRICS = """# TYPE vllm:c counter
# HELP vllm:c counts
vllm:c_total{engine="0"} 4 # {trace_id="abc"} 1.0 1700000000
vllm:c_created{engine="0"} 1.7e9
# TYPE vllm:g gauge
vllm:g 2
# EOF
"""


def _reference(text: str, openmetrics: bool = False) -> list[tuple]:
    if openmetrics:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    out = []
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name.startswith(PREFIXES) or s.name == START:
                out.append((s.name, s.labels, float(s.value), fam.type))
    return out


def _streamed(text: str, cuts: int = 0, seed: int = 0, **kw) -> list[tuple]:
    data = text.encode()
    page = SampleStream(PREFIXES, (START,), **kw)
    at = sorted(random.Random(seed).sample(range(len(data)), min(cuts, len(data))))
    for a, b in zip([0, *at], [*at, len(data)]):
        page.feed(data[a:b])
    return page.close()


def _same(a: list[tuple], b: list[tuple]) -> None:
    norm = lambda rows: [(n, lab, "nan" if v != v else v, t) for n, lab, v, t in rows]  # noqa: E731
    assert norm(a) == norm(b)


def _pages() -> list[str]:
    vllm, sgl, trt, lcpp = FakeVllm(engines=2, k=3), FakeSglang(dp=2), FakeTrtllm(k=4), FakeLlamacpp()
    vllm.step(0, 10, [8, 6, 4])
    sgl.decode(0, 2.5, 0.5, 100.5)
    lcpp.request([(4, 2), (4, 3)])
    return [
        vllm.text(),
        sgl.text(),
        trt.text(),
        lcpp.text(),
        llamacpp_text({"n_drafted_total": 3}, [1, 2], 1, typed=False),
        reference_exposition(REF),
        EDGES,
    ]


@pytest.mark.parametrize("cuts", [0, 7, 300])
def test_the_same_samples_as_prometheus_client(cuts):
    for i, text in enumerate(_pages()):
        _same(_streamed(text, cuts, seed=i), _reference(text))


def test_openmetrics_pages_as_its_parser_reads_them():
    _same(_streamed(OPENMETRICS, 5, openmetrics=True), _reference(OPENMETRICS, openmetrics=True))


def test_only_the_families_read_are_kept_and_a_flood_is_capped():
    flood = "".join(f'vllm:request_latency_bucket{{request_id="{i}",le="1"}} 1\n' for i in range(300))
    other = "".join(f'http_requests_total{{path="/{i}"}} 1\n' for i in range(1000))
    spec = 'vllm:spec_decode_num_drafts_total{engine="0"} 10\n'
    page = SampleStream(PREFIXES, (START,), max_per_name=100, max_series=150)
    page.feed((other + flood + spec).encode())
    got = page.close()
    names = [n for n, *_ in got]
    assert (
        names.count("vllm:request_latency_bucket") == 100 and names[-1] == "vllm:spec_decode_num_drafts_total"
    )
    assert "http_requests_total" not in names
    assert page.dropped == {"vllm:request_latency_bucket": 200}
    assert "200 series" in page.capped() and "vllm:request_latency_bucket (200 more)" in page.capped()
    assert SampleStream(PREFIXES).capped() == ""


@pytest.mark.parametrize(
    "bad",
    [
        "<html>this is not prometheus{</html>\n",
        'vllm:spec_decode_num_drafts_total{engine="0" 12\n',
        "vllm:x{a=1} 2\n",
        "vllm:x one\n",
        "vllm:x\n",
        'vllm:x{a="open} 1\n',
    ],
)
def test_a_page_that_is_no_prometheus_text(bad):
    with pytest.raises(PageError, match="not Prometheus text"):
        _streamed(bad)


def test_a_json_page_is_flagged_not_parsed():
    page = SampleStream(PREFIXES)
    page.feed(b"  \n")
    page.feed(b'[{"iter": 1}]\n')
    assert page.json
    with pytest.raises(PageError, match="JSON"):
        page.close()
