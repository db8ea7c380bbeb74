"""Rate limits, counted in the shared cache (PostgreSQL or Redis), so every server process
shares one budget. The API uses these as DRF throttles; pages call `retry_after()`.

Users are counted by account, anonymous visitors by client address (security.client: the
address only believed from TRUSTED_PROXIES). Each limit is a setting; 0 turns it off. Asks have
their own limit, counted in the database (chat.turns): it must survive deleting threads.
"""

import logging
import math

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from security.client import client_address

logger = logging.getLogger("flatuniverse.security")


class SettingRateThrottle(SimpleRateThrottle):
    """A throttle whose rate is the setting `setting` per `period` ("min" or "hour")."""

    setting = ""
    period = "min"

    def get_rate(self):
        limit = getattr(settings, self.setting)
        return f"{limit}/{self.period}" if limit > 0 else None

    def get_ident(self, request):
        return client_address(request)

    def wait(self):
        wait = super().wait()
        return None if wait is None else max(1, math.ceil(wait))


class SearchUserThrottle(SettingRateThrottle):
    """Searches per signed-in user, page and API together: SEARCH_RATE_LIMIT_PER_MINUTE."""

    scope = "search"
    setting = "SEARCH_RATE_LIMIT_PER_MINUTE"

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": user.pk}


class SearchAnonThrottle(SettingRateThrottle):
    """Searches per anonymous client address: SEARCH_ANON_RATE_LIMIT_PER_MINUTE."""

    scope = "search_anon"
    setting = "SEARCH_ANON_RATE_LIMIT_PER_MINUTE"

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AddressThrottle(SettingRateThrottle):
    """Counted per client address, whoever is signed in."""

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class SignupThrottle(AddressThrottle):
    scope = "signup"
    setting = "SIGNUP_RATE_LIMIT_PER_HOUR"
    period = "hour"


class PasswordResetThrottle(AddressThrottle):
    scope = "password_reset"
    setting = "PASSWORD_RESET_RATE_LIMIT_PER_HOUR"
    period = "hour"


def retry_after(request, *throttles: type[SettingRateThrottle]) -> int | None:
    """None when every throttle allows the request (each counts it), else the seconds to wait.
    For pages; DRF views list the same classes in `throttle_classes`."""
    for throttle_class in throttles:
        throttle = throttle_class()
        if not throttle.allow_request(request, None):
            wait = throttle.wait() or 60
            logger.warning(
                "throttled scope=%s client=%s path=%s retry_after=%s",
                throttle.scope,
                client_address(request),
                request.path,
                wait,
            )
            return wait
    return None
