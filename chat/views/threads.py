from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from chat.models import Thread


@login_required
def index(request):
    threads = Thread.objects.owned_by(request.user)[:100]
    return render(request, "chat/index.html", {"threads": threads})
