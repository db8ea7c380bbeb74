from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from chat import jobs
        from chat.signed_in import connect_signals

        connect_signals()
        jobs.connect_signals()  # followed threads re-run after the catalogue grows
