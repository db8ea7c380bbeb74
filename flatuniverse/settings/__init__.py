"""Flatuniverse settings: one module, every knob read from the environment with a default that
works offline on one machine. The README's configuration table lists them all."""

import os
import secrets
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from security.checks import production_problems

from .database import DatabaseUnavailable, database_config
from .env import envbool, envfloat, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(envstr("FLATUNIVERSE_DATA_DIR", str(BASE_DIR / ".data"))).resolve()
TESTING = "pytest" in sys.modules or envbool("FLATUNIVERSE_TESTING")


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated on first run and kept in DATA_DIR."""
    if key := envstr("SECRET_KEY"):
        return key
    path = DATA_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key)
    return key


SECRET_KEY = _secret_key()
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])
SITE_NAME = "Flatuniverse"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI files, so /api/docs/ needs no CDN
    "channels",
    "django_q",
    "papers",
    "chat",
    "accounts",
    "library",  # collections of saved papers
    "axes",  # log-in lockout; after the apps, as its docs ask
    "bench",  # development tools (the bench_* commands); nothing imports it
]

MIDDLEWARE = [
    # First: everything after it (throttles, django-axes, logs) sees the client's address.
    "security.client.ClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "security.headers.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The database down while a page or the API runs: the documented 503, not a 500.
    "security.errors.DatabaseUnavailableMiddleware",
    # Last: refuses log-ins while an account is locked out (AXES_* below).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "flatuniverse.urls"
ASGI_APPLICATION = "flatuniverse.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "library.context_processors.save_menu",
            ],
        },
    },
]

# --- Database: PostgreSQL + pgvector only -------------------------------------------------------
DATABASE_URL = envstr("DATABASE_URL")
try:
    _default_db, EMBEDDED_DATABASE = database_config(DATABASE_URL, DATA_DIR)
except DatabaseUnavailable as exc:
    print(f"flatuniverse: {exc}", file=sys.stderr)
    raise SystemExit(2) from None
# Each test run gets its own database, so runs in several terminals never collide.
_default_db["TEST"] = {"NAME": f"test_flatuniverse_{os.getpid()}"}
DATABASES = {"default": _default_db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Accounts -----------------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses the attempt of a locked-out username from that address
    # before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
SESSION_ENGINE = "django.contrib.sessions.backends.db"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:index"
LOGOUT_REDIRECT_URL = "home"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    # Hashing with the production hasher costs ~0.3 s per login; tests log in hundreds of times.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Log-in lockout (django-axes, docs/SECURITY.md): LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address lock that pair out for LOGIN_LOCKOUT_MINUTES; a right password
# before that resets the count. Locking by username alone would let anyone lock anyone out;
# by address alone, a whole office behind one NAT. Counted in the database (AccessAttempt).
AXES_ENABLED = envbool("LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = envfloat("LOGIN_LOCKOUT_MINUTES", 15.0) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "security.client.client_address"
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = True  # one WARNING line per failure and lockout, with the client address
# The address is logged; the username is masked (people type passwords into that box).
AXES_SENSITIVE_PARAMETERS = ["username"]
AXES_ENABLE_ACCESS_FAILURE_LOG = False
AXES_DISABLE_ACCESS_LOG = True  # successful log-ins are not recorded as rows
# Sign-ups and password-reset e-mails per client address per hour (0: no limit).
SIGNUP_RATE_LIMIT_PER_HOUR = envint("SIGNUP_RATE_LIMIT_PER_HOUR", 5)
PASSWORD_RESET_RATE_LIMIT_PER_HOUR = envint("PASSWORD_RESET_RATE_LIMIT_PER_HOUR", 5)

# E-mail (password resets): printed to the server log unless an SMTP server is configured.
EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "flatuniverse@localhost")
# The site's address for links in e-mails (the watch digest), e.g. https://flatuniverse.example.org
SITE_URL = envstr("SITE_URL", "")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request otherwise
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG or TESTING
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
# Serve static files straight from the app folders in one-machine mode, no collectstatic needed.
WHITENOISE_USE_FINDERS = True

# --- Channels: Redis across processes when REDIS_URL is set, in-memory otherwise -----------------
REDIS_URL = envstr("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Pub/Sub: each process reads every message meant for it over one subscription.
            # channels-redis' list-based RedisChannelLayer pops one message per round trip into
            # an inbox per process capped at 100 messages: at 200 concurrent answers it fell
            # seconds behind and silently dropped tokens and `done` events (bench_load,
            # docs/BENCHMARKS.md). Live token streams need no persistence; a client that misses
            # some resumes by offset.
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                # No socket timeout, as before redis-py 8 (its 5 s default cut blocking reads:
                # django/channels_redis#422). Any timeout also sends each command through
                # asyncio.wait_for, which on Python 3.11 swallows a task's cancellation
                # (python/cpython#86296): an answer's helper tasks then never stopped.
                # Keepalive still finds a dead Redis.
                "hosts": [{"address": REDIS_URL, "socket_timeout": None, "socket_keepalive": True}],
                "prefix": envstr("CHANNELS_PREFIX", "flatuniverse"),
            },
        }
    }
else:
    # One process: Channels' in-memory layer, scanning for expired messages once a second.
    CHANNEL_LAYERS = {"default": {"BACKEND": "chat.layers.ThrottledInMemoryChannelLayer"}}

# --- Cache (rate limits, throttles): shared by every process --------------------------------------
# Per-process memory would let each daphne process grant its own quota, so the default is a table
# in PostgreSQL (created by `createcachetable`, which `serve` and the test runner call).
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "flatuniverse_cache",
        }
    }

# --- Jobs: django-q2, ORM broker by default, Redis when configured ------------------------------
Q_CLUSTER = {
    # The queue's name in Redis: sites sharing one Redis need one each. django-q2 reads the same
    # variable itself, but then fails unless ALT_CLUSTERS is configured.
    "name": envstr("Q_CLUSTER_NAME", "flatuniverse"),
    "workers": envint("Q_WORKERS", 2),
    "recycle": 50,
    "timeout": envint("Q_TIMEOUT", 4 * 3600),
    "retry": envint("Q_TIMEOUT", 4 * 3600) + 60,
    "max_attempts": 1,
    "catch_up": False,
    "label": "Jobs",
    "poll": 1,
    "save_limit": 500,
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"

# --- REST API -----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Documents every operation's error responses (401/403/404/429...) from the view itself.
    "DEFAULT_SCHEMA_CLASS": "api.schema.ApiAutoSchema",
    # JSON in and out only: one media type to document, validate and fuzz.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JSONParser"],  # DRF's, deep nesting a 400
    # Every failure as {"error": {"code", "message"}}.
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    # Throttles read REMOTE_ADDR only, which security.client has set from TRUSTED_PROXIES;
    # DRF's default (None) believes any X-Forwarded-For.
    "NUM_PROXIES": 0,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Flatuniverse API",
    "DESCRIPTION": "Search arXiv with time-aware retrieval and ask grounded questions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The API's guide (auth, errors, streaming, limits) is written next to its code.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.describe_api",
    ],
    "COMPONENT_SPLIT_REQUEST": True,  # request bodies without the read-only fields
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "TAGS": [
        {"name": "papers", "description": "The arXiv catalogue."},
        {"name": "search", "description": "Time-aware hybrid search."},
        {"name": "threads", "description": "Your chat threads, their messages, and asking."},
        {"name": "library", "description": "Your collections of saved papers, with notes."},
        {"name": "ingest", "description": "Staff only: fetch new papers from arXiv."},
    ],
}

# --- Notion export of a thread (chat/notion.py): off unless both are set -------------------------
NOTION_API_KEY = envstr("NOTION_API_KEY", "")  # an internal integration's secret
NOTION_PARENT_PAGE_ID = envstr("NOTION_PARENT_PAGE_ID", "")  # pages are created under it
NOTION_API_URL = envstr("NOTION_API_URL", "https://api.notion.com")
NOTION_VERSION = envstr("NOTION_VERSION", "2022-06-28")  # the Notion-Version header
NOTION_TIMEOUT_SECONDS = envfloat("NOTION_TIMEOUT_SECONDS", 20.0)

# --- arXiv ingest -------------------------------------------------------------------------------
ARXIV_API_URL = envstr("ARXIV_API_URL", "https://export.arxiv.org/api/query")
ARXIV_CATEGORIES = envlist(
    "ARXIV_CATEGORIES", ["cs.AI", "cs.CL", "cs.CV", "cs.LG", "cs.IR", "stat.ML"]
)
ARXIV_PAGE_SIZE = envint("ARXIV_PAGE_SIZE", 100)
ARXIV_DELAY_SECONDS = envfloat("ARXIV_DELAY_SECONDS", 3.0)  # arXiv asks for >= 3 s between calls
ARXIV_MAX_RETRIES = envint("ARXIV_MAX_RETRIES", 5)
ARXIV_INITIAL_DAYS = envint("ARXIV_INITIAL_DAYS", 7)  # first ingest into an empty catalogue
# Live arXiv search (a question the catalogue cannot answer): papers fetched per search, and
# searches each user may start per hour.
ARXIV_LIVE_RESULTS = envint("ARXIV_LIVE_RESULTS", 20)
ARXIV_LIVE_SEARCHES_PER_HOUR = envint("ARXIV_LIVE_SEARCHES_PER_HOUR", 10)
INGEST_SCHEDULE_TIME = envstr("INGEST_SCHEDULE_TIME", "02:30")  # UTC, daily
INGEST_ON_EMPTY_START = envbool("INGEST_ON_EMPTY_START", True)

# --- Full text (papers/fulltext) ----------------------------------------------------------------
# Where a paper's PDF is read from; {arxiv_id} and {version} are the interface (tests point it at
# a local server). Requests share the API client's politeness (ARXIV_DELAY_SECONDS, one at a time
# across processes).
ARXIV_PDF_URL = envstr("ARXIV_PDF_URL", "https://arxiv.org/pdf/{arxiv_id}v{version}")
FULLTEXT_MAX_BYTES = envint("FULLTEXT_MAX_BYTES", 50_000_000)  # larger PDFs are not read
FULLTEXT_MAX_PAGES = envint("FULLTEXT_MAX_PAGES", 120)  # theses and proceedings are not read
FULLTEXT_TIMEOUT_SECONDS = envfloat("FULLTEXT_TIMEOUT_SECONDS", 60.0)  # connect / between bytes
FULLTEXT_CHUNK_TOKENS = envint("FULLTEXT_CHUNK_TOKENS", 300)  # capped by the embedder's window
# Categories whose new papers the nightly job reads in full (default none: a light install).
FULLTEXT_CATEGORIES = envlist("FULLTEXT_CATEGORIES", [])
# Papers whose chunks an older chunker cut are re-cut from their stored text by background jobs
# of this many papers each (one queues the next), so other jobs interleave.
FULLTEXT_RECUT_BATCH = envint("FULLTEXT_RECUT_BATCH", 25)

# --- Embeddings ---------------------------------------------------------------------------------
# Every backend produces vectors of EMBEDDING_DIMENSIONS (OpenAI's text-embedding-3 models are
# asked for that many), so one HNSW index serves them all; each vector records its model's name,
# and a search only ever compares vectors of the active model.
EMBEDDING_BACKEND = envstr("EMBEDDING_BACKEND", "openai" if envstr("OPENAI_API_KEY") else "minilm")
EMBEDDING_DIMENSIONS = 384
EMBEDDING_BATCH_SIZE = envint("EMBEDDING_BATCH_SIZE", 32)
EMBEDDING_THREADS = envint("EMBEDDING_THREADS", os.cpu_count() or 2)
OPENAI_EMBEDDING_MODEL = envstr("OPENAI_EMBEDDING_MODEL", "text-embedding-3-small")
# Query vectors kept per process, least recently used out (papers/embeddings/query_cache.py); 0: off.
QUERY_VECTOR_CACHE = envint("QUERY_VECTOR_CACHE", 1024)

# --- LLM ----------------------------------------------------------------------------------------
OPENAI_API_KEY = envstr("OPENAI_API_KEY")
OPENAI_BASE_URL = envstr("OPENAI_BASE_URL") or None
OPENAI_TIMEOUT = envfloat("OPENAI_TIMEOUT", 60.0)
OPENAI_MAX_RETRIES = envint("OPENAI_MAX_RETRIES", 3)
# The `openai` backend's HTTP client: "aiohttp" (reads a stream in about half the CPU of httpx:
# chat/llm/openai_backend.py) or "httpx" (the SDK's default).
OPENAI_HTTP_CLIENT = envstr("OPENAI_HTTP_CLIENT", "aiohttp")
LLM_BACKEND = envstr("LLM_BACKEND", "openai" if OPENAI_API_KEY else "extractive")
LLM_MODEL = envstr("LLM_MODEL", "gpt-4o-mini")
LLM_MODEL_PATH = envstr("LLM_MODEL_PATH")  # a GGUF file for the `local` backend
LLM_FALLBACK = envstr("LLM_FALLBACK", "extractive")
LLM_MAX_TOKENS = envint("LLM_MAX_TOKENS", 700)
# Sentences of each source a model reads (chat/pipeline/passages.py): the best-matching ones,
# not the whole abstract (the local model reads 3,200 tokens in 70 s). 0: whole passages.
LLM_PROMPT_SENTENCES = envint("LLM_PROMPT_SENTENCES", 3)
LLM_RETRY_MAX_WAIT = envfloat("LLM_RETRY_MAX_WAIT", 20.0)  # total backoff before the first token
LLM_LOCAL_CONTEXT = envint("LLM_LOCAL_CONTEXT", 4096)  # context window of the `local` model
# Leave a core to the web server and database: llama.cpp's threads spin-wait, and on busy cores
# generation collapsed from 14 to 1 token/s with 2 threads on 2 cores (measured). 0: llama.cpp picks.
LLM_LOCAL_THREADS = envint("LLM_LOCAL_THREADS", max(1, (os.cpu_count() or 2) - 1))

# --- Retrieval knobs ----------------------------------------------------------------------------
SEARCH_CANDIDATES = envint("SEARCH_CANDIDATES", 100)  # per retriever, before fusion
SEARCH_RESULTS = envint("SEARCH_RESULTS", 10)  # papers shown on the search page
CHAT_SOURCES = envint("CHAT_SOURCES", 8)  # sources given to the LLM per answer
# Followed threads (chat.watch): how many one user may follow (and the nightly re-run reads),
# and the most new papers one "New since you asked" update names.
WATCH_MAX_FOLLOWED_PER_USER = envint("WATCH_MAX_FOLLOWED_PER_USER", 20)
WATCH_MAX_NEW_PAPERS = envint("WATCH_MAX_NEW_PAPERS", 5)
RRF_K = envint("RRF_K", 60)  # reciprocal rank fusion constant
RECENCY_HALF_LIFE_DAYS = envfloat("RECENCY_HALF_LIFE_DAYS", 365.0)
HNSW_EF_SEARCH = envint("HNSW_EF_SEARCH", 100)
RERANKER = envstr("RERANKER", "fusion")
# Retrieval internals (chat/retrieval): measured in docs/BENCHMARKS.md.
SEARCH_FUSION = envstr("SEARCH_FUSION", "convex")  # dense + BM25 lists: convex | rrf
DENSE_EXACT_MAX = envint("DENSE_EXACT_MAX", 5000)  # filtered dense: exact scan up to >= N papers
# A partial HNSW index per publication year once it holds this many abstracts (windows answered
# year by year: papers/indexing/periods.py); 0: none. Below it, scanning the year exactly is cheap.
DENSE_YEAR_INDEX_MIN = envint("DENSE_YEAR_INDEX_MIN", 20000)
# Price an exact scan's rows by how the passages lie on disk (date order or none: pg_stats
# correlation; chat/retrieval/dense.py exact_row_cost); off: 1 a row whatever the order, as before.
DENSE_ROW_COST_BY_ORDER = envbool("DENSE_ROW_COST_BY_ORDER", True)
# BM25 (chat/retrieval/fulltext.py): terms read whole while their papers sum to at most the cap;
# common terms are read from their champions, WALK_DEPTH papers each first (x4 until the bound
# proves the first EXACT_HEAD results equal exhaustive BM25's).
LEXICAL_CANDIDATE_CAP = envint("LEXICAL_CANDIDATE_CAP", 5000)
LEXICAL_WALK_DEPTH = envint("LEXICAL_WALK_DEPTH", 100)
LEXICAL_EXACT_HEAD = envint("LEXICAL_EXACT_HEAD", 10)
# Walk each term's champions down to its floor per publication year (LexicalTermYear); off: the
# global floors alone, as before them (for comparison: docs/BENCHMARKS.md).
LEXICAL_YEAR_FLOORS = envbool("LEXICAL_YEAR_FLOORS", True)
# MaxScore's last read takes the papers holding one of the smallest sets of terms that can still
# reach the head (an intersection); off: every paper with one essential term (a union), as before.
LEXICAL_NEEDED_SETS = envbool("LEXICAL_NEEDED_SETS", True)
# A GIN index of the BM25 lexicon per publication year (papers/indexing/periods.py), and
# MaxScore's last read in a window through them; off: the catalogue-wide GIN index alone.
LEXICAL_YEAR_INDEXES = envbool("LEXICAL_YEAR_INDEXES", True)
# PostgreSQL work_mem for BM25's reads of whole terms (their bitmaps stay exact, not lossy).
LEXICAL_WORK_MEM = envstr("LEXICAL_WORK_MEM", "64MB")
SEARCH_MULTI_QUERY = envbool("SEARCH_MULTI_QUERY", False)  # LLM query reformulations, fused
# Ranking refinements, comma-separated (chat/retrieval/refine.py); none by default. "sentences"
# (+0.0085 nDCG@10 on SciFact, docs/BENCHMARKS.md session 15) and "learned" (+0.012 held out,
# 1.10x the search time, session 17) won but need SENTENCE_VECTORS, whose embedding costs more
# than that gain is worth on a small machine: opt in with both.
SEARCH_REFINE = envstr("SEARCH_REFINE", "")
# A vector per sentence of each title + abstract too (Passage kind "sentence"), embedded by the
# indexing job after the abstracts: what SEARCH_REFINE "sentences" and "learned" read. Costs
# ~0.8x the abstracts' embedding again and ~5x their vector rows (~10 a paper, ~23 KB on disk;
# docs/BENCHMARKS.md, session 15). Off by default: on two cores the embedder (~20 passages/s)
# is what makes new papers findable, and this nearly doubles its work for +0.0085 nDCG@10.
# Off, "sentences" and "learned" change nothing.
SENTENCE_VECTORS = envbool("SENTENCE_VECTORS", False)
SEARCH_DB_THREADS = envint("SEARCH_DB_THREADS", 4)  # pooled connections: BM25 beside dense
# How full-text chunks join the search (chat/retrieval/chunks.py): fused | papers_first | direct
# | off; measured with `manage.py bench_fulltext` (docs/BENCHMARKS.md).
FULLTEXT_RETRIEVAL = envstr("FULLTEXT_RETRIEVAL", "fused")
# Papers the direct chunk search adds (fused, direct; at least a page): its cost grows with the
# chunk rows it walks, ~4.6 a paper at 100 papers over 1M chunks. 15 against 30: the whole search
# 0.91x at 1M chunks, 98% of the page's papers the same, bench_fulltext unchanged
# (bench_search --chunks, docs/BENCHMARKS.md, session 13).
FULLTEXT_CHUNK_CANDIDATES = envint("FULLTEXT_CHUNK_CANDIDATES", 15)
# How a paper's chunks are ranked for a question: rrf (cosine and BM25 over the candidate chunks,
# fused by reciprocal rank) | mix (cosine and ts_rank_cd, min-max mixed); bench_fulltext.
FULLTEXT_CHUNK_RANKING = envstr("FULLTEXT_CHUNK_RANKING", "rrf")
# With "fused" or "direct": BM25 over every chunk's words (GIN on the chunks) as one more list of
# papers, so a paper is found by a rare word of its body ("label smoothing"); bench_fulltext.
FULLTEXT_CHUNK_WORDS = envbool("FULLTEXT_CHUNK_WORDS", True)
# What that list scores: body (each read paper's full text as one BM25 document, through the
# abstracts' exact bounded search: papers.indexing.lexical.BODIES) | chunk (a paper by its best
# chunk's BM25, over every chunk: 4-9x the CPU at 1M chunks; bench_search --chunks).
FULLTEXT_WORD_UNIT = envstr("FULLTEXT_WORD_UNIT", "body")
# The chunk word search reads a common word from its best chunks (papers/indexing/chunkwords.py,
# built by `manage.py index_chunk_words`) rather than level by level (bench_search --chunks).
FULLTEXT_CHUNK_CHAMPIONS = envbool("FULLTEXT_CHUNK_CHAMPIONS", True)

# --- Chat limits --------------------------------------------------------------------------------
CHAT_MAX_QUESTION_CHARS = envint("CHAT_MAX_QUESTION_CHARS", 4000)
CHAT_RATE_LIMIT_PER_MINUTE = envint("CHAT_RATE_LIMIT_PER_MINUTE", 20)
# Searches (page and API) per user per minute, and per anonymous client address on the search
# page (counted in the shared cache, so across processes; security/throttles.py).
SEARCH_RATE_LIMIT_PER_MINUTE = envint("SEARCH_RATE_LIMIT_PER_MINUTE", 60)
SEARCH_ANON_RATE_LIMIT_PER_MINUTE = envint("SEARCH_ANON_RATE_LIMIT_PER_MINUTE", 20)

# --- Client address -------------------------------------------------------------------------------
# Addresses or CIDR ranges of the reverse proxies in front of daphne: X-Forwarded-For is believed
# (and X-Forwarded-Proto) only from them (security/client.py). Empty: the TCP peer is the client.
# In production mode the default is a proxy on the same machine (docs/DEPLOYMENT.md).
TRUSTED_PROXIES = envlist(
    "TRUSTED_PROXIES",
    ["127.0.0.1", "::1"] if envbool("FLATUNIVERSE_PRODUCTION", False) else [],
)

# --- Chat sockets (chat/consumers.py, docs/WEBSOCKET.md) --------------------------------------------
# Open thread sockets per user, counted per daphne process (each process allows this many).
WS_MAX_SOCKETS_PER_USER = envint("WS_MAX_SOCKETS_PER_USER", 20)
# `sync`, `stop` and `ping` frames per socket: a bucket of WS_CONTROL_BURST frames, refilled at
# WS_CONTROL_PER_SECOND; frames beyond it get a `rate_limited` error and touch no database.
WS_CONTROL_BURST = envint("WS_CONTROL_BURST", 10)
WS_CONTROL_PER_SECOND = envfloat("WS_CONTROL_PER_SECOND", 1.0)

# --- Logging: one structured line per event -----------------------------------------------------
LOG_LEVEL = envstr("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "kv": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "kv"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "flatuniverse": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        "papers": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        "chat": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        "api": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        "django_q": {"level": "WARNING", "handlers": ["console"], "propagate": False},
        # Log-in failures (INFO) and lockouts (WARNING), with username and client address.
        "axes": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
    },
}

# --- Production: FLATUNIVERSE_PRODUCTION=true turns on the HTTPS-only defaults ----------------
# behind a TLS-terminating proxy (docs/DEPLOYMENT.md); each can still be set on its own.
PRODUCTION = envbool("FLATUNIVERSE_PRODUCTION", False)
if PRODUCTION and (
    _problems := production_problems(
        secret_key=envstr("SECRET_KEY"),
        email_backend=EMAIL_BACKEND,
        console_email_allowed=envbool("EMAIL_CONSOLE_IN_PRODUCTION", False),
    )
):
    raise ImproperlyConfigured("; ".join(_problems))
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if PRODUCTION:
    # Serve what `collectstatic` wrote (with its .gz files), not the app folders: the finders'
    # copies took precedence and static files went out uncompressed.
    WHITENOISE_USE_FINDERS = False
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", PRODUCTION)
# Health probes (the proxy's, an orchestrator's) reach a process over plain HTTP: answer them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", PRODUCTION)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31536000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", PRODUCTION)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# security/headers.py: scripts from our origin only (no inline script or handler, no eval).
CONTENT_SECURITY_POLICY = envstr(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)
