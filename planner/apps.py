from django.apps import AppConfig


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planner"

    def ready(self) -> None:
        # The Celery app is attached here (not in planner/__init__.py) so that every Django
        # process, web or worker, has it, while the pure engine stays importable on its own.
        import config.celery  # noqa: F401

        from . import checks, signals  # noqa: F401
