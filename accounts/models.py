"""What a user chose for themselves (the preferences page, /accounts/preferences/)."""

from django.conf import settings
from django.db import models


class Preferences(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    # One e-mail a day listing what followed threads found ("New since you asked").
    watch_digest = models.BooleanField(default=False)
    # The day (UTC) the last digest went out: at most one a day.
    digest_sent_on = models.DateField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self):
        return f"preferences of {self.user_id}"

    @classmethod
    def of(cls, user) -> "Preferences":
        return cls.objects.get_or_create(user=user)[0]
