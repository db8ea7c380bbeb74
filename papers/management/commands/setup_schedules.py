from django.core.management.base import BaseCommand

from papers.schedules import apply_schedules


class Command(BaseCommand):
    help = "Create or update the recurring jobs defined in papers/schedules.py; remove stale ones."

    def handle(self, *args, **options):
        changed = apply_schedules()
        summary = ", ".join(f"{key} {len(names)}" for key, names in changed.items())
        self.stdout.write(f"flatuniverse: schedules {summary}")
