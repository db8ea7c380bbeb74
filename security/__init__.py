"""Site-wide safety plumbing that pages, APIs and sockets share: which address a request comes
from (client.py), rate limits (throttles.py), what text may reach the database (inputs.py), the
response headers every page carries (headers.py) and checks a production start must pass
(checks.py). It imports no app: apps import it."""
