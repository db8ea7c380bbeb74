"""Schedules are defined in code and applied by name, idempotently."""

import ast

import pytest
from django_q.models import Schedule

from papers.schedules import apply_schedules


@pytest.mark.django_db
def test_applying_twice_changes_nothing_the_second_time():
    first = apply_schedules()
    second = apply_schedules()
    assert first["created"] == ["nightly-arxiv-ingest"]
    assert second["unchanged"] == ["nightly-arxiv-ingest"]
    assert second["updated"] == [] and second["created"] == []
    assert Schedule.objects.filter(name="nightly-arxiv-ingest").count() == 1


@pytest.mark.django_db
def test_a_changed_time_updates_the_schedule_and_stale_ones_are_removed(settings):
    apply_schedules()
    Schedule.objects.create(
        name="old-ingest", func="papers.jobs.ingest_recent_job", schedule_type=Schedule.DAILY
    )
    Schedule.objects.create(
        name="someone-elses", func="othersite.jobs.cleanup", schedule_type=Schedule.DAILY
    )
    settings.INGEST_SCHEDULE_TIME = "04:15"
    changed = apply_schedules()
    assert changed["updated"] == ["nightly-arxiv-ingest"]
    assert changed["removed"] == ["old-ingest"]
    assert Schedule.objects.get(name="nightly-arxiv-ingest").cron == "15 4 * * *"
    assert Schedule.objects.filter(name="someone-elses").exists()


@pytest.mark.django_db
def test_the_job_receives_the_categories_as_keyword_arguments(settings):
    # django-q2's scheduler reads kwargs with ast.literal_eval, as here.
    settings.ARXIV_CATEGORIES = ["cs.CL", "cs.IR"]
    apply_schedules()
    schedule = Schedule.objects.get(name="nightly-arxiv-ingest")
    assert ast.literal_eval(schedule.kwargs) == {"categories": ["cs.CL", "cs.IR"]}
