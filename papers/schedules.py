"""Recurring jobs, defined in code and keyed by name (`manage.py setup_schedules` applies them)."""

from dataclasses import dataclass

from django.conf import settings

from papers.jobs import INGEST_JOB


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    func: str
    cron: str
    kwargs: dict


def wanted_schedules() -> list[ScheduleSpec]:
    hour, minute = (int(part) for part in settings.INGEST_SCHEDULE_TIME.split(":"))
    return [
        ScheduleSpec(
            name="nightly-arxiv-ingest",
            func=INGEST_JOB,
            cron=f"{minute} {hour} * * *",
            kwargs={"categories": list(settings.ARXIV_CATEGORIES)},
        ),
    ]


def apply_schedules() -> dict[str, list[str]]:
    """Create or update each wanted schedule by name; delete ours that are no longer wanted."""
    from django_q.models import Schedule

    wanted = wanted_schedules()
    changed = {"created": [], "updated": [], "unchanged": [], "removed": []}
    for spec in wanted:
        values = {
            "func": spec.func,
            "schedule_type": Schedule.CRON,
            "cron": spec.cron,
            # django-q2 keeps kwargs as the text of a dict literal; compare like with like.
            "kwargs": repr(spec.kwargs),
            "repeats": -1,
        }
        existing = Schedule.objects.filter(name=spec.name).first()
        if existing is None:
            Schedule.objects.create(name=spec.name, **values)
            changed["created"].append(spec.name)
        elif any(getattr(existing, key) != value for key, value in values.items()):
            for key, value in values.items():
                setattr(existing, key, value)
            existing.save()
            changed["updated"].append(spec.name)
        else:
            changed["unchanged"].append(spec.name)
    # Only schedules that point at our own jobs are ours to remove.
    stale = Schedule.objects.filter(func__startswith="papers.").exclude(
        name__in=[spec.name for spec in wanted]
    )
    changed["removed"] = list(stale.values_list("name", flat=True))
    stale.delete()
    return changed
