"""The real redis-server fixture the flow tests use."""

from flow.conftest import RedisServer, free_port, redis_server

__all__ = ["RedisServer", "free_port", "redis_server"]
