"""Sign-up; log in, log out and password change are Django's own views (django.contrib.auth.urls)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters


@sensitive_post_parameters("password1", "password2")
def signup(request):
    if request.user.is_authenticated:
        return redirect("chat:index")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome to Flatuniverse, {user.username}.")
        return redirect("chat:index")
    return render(request, "registration/signup.html", {"form": form})
