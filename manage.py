#!/usr/bin/env python
"""Django's command-line utility for Flatuniverse."""

import os
import sys

# Commands that never touch the database skip the connection check.
OFFLINE_COMMANDS = {"help", "version", "makemigrations", "check", "collectstatic", "--help", "-h"}


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flatuniverse.settings")
    from django.conf import settings
    from django.core.management import execute_from_command_line

    from flatuniverse.settings.database import exit_if_unavailable

    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command not in OFFLINE_COMMANDS:
        # One clear line instead of a traceback when DATABASE_URL is wrong or lacks pgvector.
        exit_if_unavailable(settings.DATABASES["default"])
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
