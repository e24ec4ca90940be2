"""What operators watch: Prometheus metrics, health and readiness (``metrics``).

A layer of its own below every host: it imports only ``wire`` (and
``prometheus_client``), and hosts call its hooks.
"""
