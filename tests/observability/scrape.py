"""Scraping a policyc host over real HTTP and reading samples with prometheus_client's parser."""

from __future__ import annotations

import httpx2
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(base: str) -> Samples:
    """``(sample name, sorted labels) -> value`` from ``base``/metrics."""
    response = httpx2.get(f"{base}/metrics", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def label_values(samples: Samples, label: str) -> set[str]:
    return {dict(key)[label] for _, key in samples if label in dict(key)}


def status(url: str) -> tuple[int, str]:
    response = httpx2.get(url, timeout=30)
    return response.status_code, response.text
