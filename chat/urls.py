from django.urls import path

from chat.views import threads

app_name = "chat"

urlpatterns = [
    path("", threads.index, name="index"),
]
