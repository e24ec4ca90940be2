"""What operators watch: Prometheus metrics, health and readiness (``metrics``), and
OpenTelemetry traces (``tracing``, the SDK imported only when tracing is turned on).

A layer of its own below every host: it imports only ``wire`` (and
``prometheus_client``), and hosts call its hooks.
"""
