"""Following a thread (chat.watch): the button on the thread page."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from chat import watch
from chat.models import Follow, Thread


@login_required
@require_POST
def follow_thread(request, pk):
    thread = get_object_or_404(Thread, pk=pk, owner=request.user)
    if request.POST.get("action") == "unfollow":
        Follow.objects.filter(thread=thread).delete()
        messages.success(request, "No longer following this thread.")
    else:
        try:
            watch.follow(thread)
        except watch.CannotFollow as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request, "Following: new papers on this question will appear here after each "
                "nightly ingest.")
    return redirect("chat:thread", pk=thread.pk)
