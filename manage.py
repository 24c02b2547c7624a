#!/usr/bin/env python
"""Django's command-line utility."""

import os
import sys


def main() -> None:
    from config.permissions import restrict_umask

    restrict_umask()  # var/ files (database, secret key, broker messages) owner-only
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
