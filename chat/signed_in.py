"""Whether a socket's user is still signed in, and telling a user's sockets when they may not be.

A socket is authenticated once, at its handshake (Channels' AuthMiddleware). So that logging out,
a password change (which changes the hash every session must carry) or a deactivation does not
leave open sockets working, the consumer checks again before each frame that reads or changes
data (`still_signed_in`: the check Django makes on every HTTP request, on the session as stored
now), and the signals below tell the user's sockets at once: a log-out names the session it
ends, whose sockets close; after a password change or a deactivation every socket checks again.
"""

import asyncio
import hashlib
import logging
from importlib import import_module

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.db import transaction
from django.utils.crypto import constant_time_compare

from chat import events

logger = logging.getLogger(__name__)

# A save of the user that can end sessions; any other (last_login at each log-in) cannot.
SESSION_FIELDS = {"password", "is_active"}


def fingerprint(session_key: str | None) -> str:
    """What names a session on the channel layer: never the key itself, a credential."""
    return hashlib.sha256((session_key or "").encode()).hexdigest()[:32]


def still_signed_in(session_key: str | None, user_id: int) -> bool:
    """Whether the session `session_key` still signs in the active user `user_id` (sync ORM).

    django.contrib.auth.get_user's check, without its side effects: it would flush a session
    whose hash is stale, and this runs while the user's own password change may be rotating it.
    """
    if not session_key:
        return False
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    try:
        session_user = get_user_model()._meta.pk.to_python(session[SESSION_KEY])
        backend_path = session[BACKEND_SESSION_KEY]
    except KeyError:  # the session was flushed (log-out) or expired
        return False
    if session_user != user_id or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return False
    user = load_backend(backend_path).get_user(user_id)  # None for an inactive user
    if user is None or not user.is_active:
        return False
    session_hash = session.get(HASH_SESSION_KEY)
    if not session_hash:
        return False
    valid = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    return any(constant_time_compare(session_hash, known) for known in valid)


def tell_sockets(user_id: int, ended_session: str | None = None) -> None:
    """Tell the user's open sockets once the change is committed (a socket checking before the
    commit would still see the old rows)."""
    transaction.on_commit(lambda: _send(user_id, ended_session))


def _send(user_id: int, ended_session: str | None) -> None:
    try:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a sync view or command: the usual case
            async_to_sync(events.account_changed)(user_id, ended_session)
        else:  # async code saved the user on the event loop's own thread
            loop.create_task(events.account_changed(user_id, ended_session))
    except Exception:  # the channel layer is down: each socket still checks on its next frame
        logger.warning("sockets_not_told user=%s", user_id, exc_info=True)


def on_logged_out(sender, request, user, **kwargs) -> None:
    # Sent before the session is flushed: the sockets are told which session ended rather than
    # left to find out (they could look before the flush).
    if user is not None:
        tell_sockets(user.pk, ended_session=fingerprint(request.session.session_key))


def on_user_saved(sender, instance, created, update_fields=None, **kwargs) -> None:
    if created or (update_fields is not None and not SESSION_FIELDS & set(update_fields)):
        return
    tell_sockets(instance.pk)


def on_user_deleted(sender, instance, **kwargs) -> None:
    tell_sockets(instance.pk)


def connect_signals() -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.signals import user_logged_out
    from django.db.models.signals import post_delete, post_save

    user_model = get_user_model()
    user_logged_out.connect(on_logged_out, dispatch_uid="chat.signed_in.logged_out")
    post_save.connect(on_user_saved, sender=user_model, dispatch_uid="chat.signed_in.saved")
    post_delete.connect(on_user_deleted, sender=user_model, dispatch_uid="chat.signed_in.deleted")
