"""Celery tasks for pricing. Thin: the scheduled refresh hands off to the same service as `manage.py refresh_prices`.

Scheduled with Celery beat when PLANNER_PRICE_REFRESH_EVERY_H is set (see CELERY_BEAT_SCHEDULE in settings).
"""

from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="pricing.refresh_prices")
def refresh_prices_task(regions: list[str] | None = None, instance_types: list[str] | None = None) -> dict:
    """Fetch live AWS prices into a new snapshot; on failure store nothing and keep the last good snapshot."""
    from botocore.exceptions import BotoCoreError, ClientError

    from pricing.aws.fetch import aws_clients_from_default_chain
    from pricing.aws.instances import DEFAULT_INSTANCE_TYPES, DEFAULT_REGIONS
    from pricing.services import PriceRefreshError, price_snapshot_refresh_live

    regions = list(dict.fromkeys(regions or DEFAULT_REGIONS))
    instance_types = list(dict.fromkeys(instance_types or DEFAULT_INSTANCE_TYPES))
    try:
        snapshot = price_snapshot_refresh_live(
            regions=regions, instance_types=instance_types, clients=aws_clients_from_default_chain(regions)
        )
    except (BotoCoreError, ClientError, PriceRefreshError) as error:
        logger.warning(
            "scheduled price refresh failed (%s: %s); the last good snapshot stays in use", type(error).__name__, error
        )
        return {"stored": False, "error": f"{type(error).__name__}: {error}"}
    logger.info("scheduled price refresh stored snapshot #%s", snapshot.pk)
    return {"stored": True, "snapshot": snapshot.pk}
