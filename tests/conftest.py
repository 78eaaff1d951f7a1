"""Shared test configuration: hypothesis profile sized for 2-core CI machines."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "course", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("course")
