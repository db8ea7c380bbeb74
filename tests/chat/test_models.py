"""What the database itself guarantees about threads and messages."""

import pytest
from django.db import IntegrityError, transaction

from chat.models import Message, Thread

pytestmark = pytest.mark.django_db


def test_a_thread_holds_at_most_one_streaming_answer(owner):
    thread = Thread.objects.create(owner=owner)
    Message.objects.create(thread=thread, role="assistant", status="streaming")
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(thread=thread, role="assistant", status="streaming")
    # Finished answers are not limited, and another thread may stream at the same time.
    Message.objects.create(thread=thread, role="assistant", status="complete")
    Message.objects.create(thread=Thread.objects.create(owner=owner), status="streaming")


def test_title_from_question_is_one_line_cut_at_a_word():
    assert Thread.title_from_question("  What is\n new   in RAG? ") == "What is new in RAG?"
    title = Thread.title_from_question("word " * 40)
    assert len(title) <= 80 and title.endswith("…") and not title.endswith(" …")
