"""The paper catalogue: papers, their authors, their embedded passages, and ingest runs."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchQuery, SearchVectorField
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, models, transaction
from django.db.models import Exists, OuterRef, Q, Value
from django.db.models.functions import Cast
from pgvector.django import CosineDistance, HalfVectorField, HnswIndex, VectorField

from papers.embeddings import EmbeddingError, get_embedder
from papers.identifiers import matching_categories
from papers.text import author_key

MAX_AUTHOR_WORDS = 8  # words of an author name that a filter matches (see by_author)


class PaperQuerySet(models.QuerySet):
    def visible(self):
        return self.filter(hidden=False)

    def published_between(self, start=None, end=None):
        qs = self
        if start is not None:
            qs = qs.filter(published__gte=start)
        if end is not None:
            qs = qs.filter(published__lte=end)
        return qs

    def in_category(self, category: str):
        """Papers listing `category` ("cs.CL", any case), or for a bare archive ("cs",
        "quant-ph") itself or any category under it: see papers.identifiers."""
        return self.filter(categories__overlap=matching_categories([category]))

    def by_author(self, name: str):
        """Papers with one author whose name has every word of `name`, in any order, case,
        accents and punctuation ignored: "hinton", "HINTON, Geoffrey" find Geoffrey Hinton. A word
        matches a whole word ("Gao" is not "Gaoyuan"); a one-letter word is an initial ("G. Hinton"
        finds Geoffrey Hinton; "Geoffrey Hinton" does not find a "G. Hinton"). English stop words
        ("He", "An") count only beside another word: alone they find nothing."""
        # A name has a handful of words; each is a regex filter, so a pasted essay would be a
        # query of thousands (measured: 50,000 words ran 24 s, then failed). Names use the first few.
        words = author_key(name).split()[:MAX_AUTHOR_WORDS]
        if not words:
            return self.none()
        papers = self
        # One GIN lookup first: the paper's author words (weight C of search_vector, stemmed).
        if terms := " & ".join(f"{word}:C" for word in words if len(word) > 1):
            papers = papers.filter(
                search_vector=SearchQuery(terms, search_type="raw", config="english")
            )
        ends = {word: "" if len(word) == 1 else "( |$)" for word in words}  # an initial begins one
        one_author = [Q(author__key__regex=rf"(^| ){word}{ends[word]}") for word in words]
        return papers.filter(Exists(Authorship.objects.filter(*one_author, paper=OuterRef("pk"))))

    def embedded_with(self, model: str):
        """Papers that have at least one passage vector made by `model`."""
        return self.filter(
            Exists(Passage.objects.abstracts().filter(paper_id=OuterRef("pk"), model=model))
        )

    def not_embedded_with(self, model: str):
        return self.filter(
            ~Exists(Passage.objects.abstracts().filter(paper_id=OuterRef("pk"), model=model))
        )

    def without_sentences(self, model: str):
        """Papers embedded with `model` whose sentences are not (settings.SENTENCE_VECTORS)."""
        return self.embedded_with(model).filter(
            ~Exists(Passage.objects.sentences().filter(paper_id=OuterRef("pk"), model=model))
        )

    def similar_to(self, paper: "Paper", model: str, limit: int = 5) -> list["Paper"]:
        """Nearest papers to `paper`'s first passage among vectors of `model` (never mixing
        models), itself excluded; [] when the paper has no vector for that model yet."""
        anchor = (
            Passage.objects.abstracts()
            .filter(paper=paper, model=model)
            .order_by("position")
            .values_list("embedding", flat=True)
            .first()
        )
        if anchor is None:
            return []
        ranked = _nearest_papers(paper, model, anchor, limit, exact=False)
        if len(ranked) < limit:
            # The iterative scan gave up (hnsw.max_scan_tuples spent on other models' vectors
            # or on dead rows left by re-embedding) or the catalogue is small: the exact scan
            # tells which, as chat.retrieval.dense does.
            ranked = _nearest_papers(paper, model, anchor, limit, exact=True)
        found = self.filter(pk__in=ranked).in_bulk()
        return [found[pk] for pk in ranked if pk in found][:limit]


def _nearest_papers(paper: "Paper", model: str, anchor, limit: int, *, exact: bool) -> list[int]:
    """Ids of the papers nearest to `anchor` among `model`'s abstract vectors, `paper` excluded;
    by the HNSW index, or `exact`ly by a scan (an ORDER BY the index cannot serve)."""
    distance = CosineDistance("embedding", anchor)
    # Several passages of one paper can be near: over-fetch, keep each paper's best.
    query = (
        Passage.objects.abstracts()
        .filter(model=model)
        .exclude(paper_id=paper.pk)
        .annotate(distance=distance + Value(0.0) if exact else distance)
        .order_by("distance")
        .values_list("paper_id", "distance")[: limit * 4]
    )
    with transaction.atomic(), connection.cursor() as cursor:
        # The HNSW scan keeps going until enough rows qualify (as chat.retrieval.dense
        # does): otherwise vectors of other models and dead rows left by re-embedding use
        # up ef_search and the page shows no similar papers. Relaxed order: sorted below.
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        nearest = sorted(query, key=lambda row: row[1])
    return list(dict.fromkeys(paper_id for paper_id, _ in nearest))


def active_embedding_model() -> str | None:
    """Name of the active embedding model (what Passage.model holds for it), or None when no
    embedder can be loaded here."""
    try:
        return get_embedder().name
    except (ImproperlyConfigured, EmbeddingError, OSError):
        return None


class Author(models.Model):
    name = models.CharField(max_length=300)
    # Lower-cased, accent- and punctuation-folded name: "Hinton, G." and "G Hinton" stay apart,
    # but case and spacing variants of one spelling collapse to one author.
    key = models.CharField(max_length=300)

    class Meta:
        # Its unique index also serves author lookups by key (ingest, "papers by this author").
        constraints = [models.UniqueConstraint(fields=["key"], name="papers_unique_author_key")]

    def __str__(self):
        return self.name


class Paper(models.Model):
    class Withdrawn(models.TextChoices):
        NO = "", "No"
        WITHDRAWN = "withdrawn", "Withdrawn"

    arxiv_id = models.CharField(
        max_length=40, help_text="Without version: 2401.12345, hep-th/9901001"
    )
    version = models.PositiveIntegerField(default=1, help_text="Latest version seen")
    title = models.TextField()
    abstract = models.TextField(blank=True)
    authors = models.ManyToManyField(Author, through="Authorship", related_name="papers")
    # Denormalised "A. One, B. Two" for cards and for the full-text vector (no join at search time).
    authors_text = models.TextField(blank=True)
    primary_category = models.CharField(max_length=40, blank=True)
    categories = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    published = models.DateTimeField(help_text="Date of the first version")
    updated = models.DateTimeField(help_text="Date of the latest version")
    doi = models.CharField(max_length=200, blank=True)
    journal_ref = models.TextField(blank=True)
    comments = models.TextField(blank=True)
    license = models.CharField(max_length=200, blank=True)

    class Arrival(models.TextChoices):
        INGEST = "", "Ingest or import"
        LIVE_SEARCH = "live_search", "Live arXiv search"

    withdrawn = models.BooleanField(default=False)
    hidden = models.BooleanField(default=False, help_text="Hidden by staff: not shown or searched")
    # How the paper first came in: a live search fetches outside the nightly categories.
    arrived_via = models.CharField(
        max_length=20, choices=Arrival.choices, default="", db_default="", blank=True
    )
    # title (A) + abstract (B) + authors (C), TeX normalised; written by the ingest code.
    search_vector = SearchVectorField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)

    objects = PaperQuerySet.as_manager()

    class Meta:
        ordering = ["-published"]
        constraints = [
            models.UniqueConstraint(fields=["arxiv_id"], name="papers_unique_arxiv_id"),
        ]
        indexes = [
            # Full-text search: search page, hybrid retrieval.
            GinIndex(fields=["search_vector"], name="papers_paper_fts_idx"),
            # Date windows and "newest first" listings.
            models.Index(fields=["published"], name="papers_paper_published_idx"),
            # Category filters ("in cs.CL").
            GinIndex(fields=["categories"], name="papers_paper_categories_idx"),
        ]

    def __str__(self):
        return f"{self.arxiv_id}: {self.title[:80]}"

    @property
    def abs_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"

    @property
    def pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.arxiv_id}"


class Authorship(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="authorships")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="authorships")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "position"], name="papers_unique_authorship_position"
            ),
        ]

    def __str__(self):
        return f"{self.author} on {self.paper_id} (#{self.position})"


class PassageQuerySet(models.QuerySet):
    def abstracts(self):
        """Title-and-abstract passages: what paper-level search, similarity and "is it embedded"
        read. Full-text chunks are searched apart (their own partial HNSW index)."""
        return self.filter(kind=Passage.Kind.ABSTRACT)

    def chunks(self):
        return self.filter(kind=Passage.Kind.FULLTEXT)

    def sentences(self):
        return self.filter(kind=Passage.Kind.SENTENCE)


class Passage(models.Model):
    """One embedded piece of a paper: its title + abstract (split when longer than the model
    window), a chunk of its full text (kind "fulltext", read from the PDF, with its pages), or
    one sentence of its title + abstract (kind "sentence", with settings.SENTENCE_VECTORS:
    chat.retrieval.refine's "sentences" ranking; in no HNSW index, read by paper id)."""

    class Kind(models.TextChoices):
        ABSTRACT = "abstract", "Title and abstract"
        FULLTEXT = "fulltext", "Full text"
        SENTENCE = "sentence", "Sentence of the title and abstract"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="passages")
    model = models.CharField(max_length=100, help_text="Name of the model that made the vector")
    # db_default too: bulk COPY and raw INSERTs of abstract passages need not name it.
    kind = models.CharField(
        max_length=10, choices=Kind.choices, default=Kind.ABSTRACT, db_default=Kind.ABSTRACT
    )
    position = models.PositiveSmallIntegerField(default=0)
    # Character span in "title\n\nabstract" (abstract) or in FullText.text (fulltext), so the
    # text is never stored twice.
    start = models.PositiveIntegerField(default=0)
    end = models.PositiveIntegerField(default=0)
    # Full-text chunks only: 1-based PDF pages the span covers, and the section it sits in.
    page = models.PositiveSmallIntegerField(null=True, blank=True)
    page_end = models.PositiveSmallIntegerField(null=True, blank=True)
    section = models.CharField(max_length=200, blank=True, default="", db_default="")
    # Full-text chunks only: the chunk's words as the catalogue's BM25 tokenises them
    # (to_tsvector('english')), written with the chunk (papers.fulltext.read): what finds a
    # paper by a rare word of its body ("label smoothing") across all chunks.
    lexemes = SearchVectorField(null=True, editable=False)
    # Copied from the paper so filtered vector searches need no join.
    published = models.DateTimeField()
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PassageQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "model", "kind", "position"], name="papers_unique_passage"
            ),
        ]
        indexes = [
            # HNSW, cosine, abstracts only: dense retrieval for chat, search and similar papers.
            # Partial, so ~20 chunks per read paper never crowd papers out of the graph walk;
            # queries must say kind = 'abstract' literally for the planner to pick it.
            HnswIndex(
                name="papers_passage_hnsw_idx",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=Q(kind="abstract"),
            ),
            # HNSW, cosine, full-text chunks: the direct chunk search of doc-then-chunk retrieval.
            # Over the vectors at half precision (chat.retrieval.dense.DISTANCES): ~20 chunks a
            # read paper make this the largest index; halfvec halves it at the same recall
            # (1M chunks: docs/BENCHMARKS.md, "Full-text chunk vectors beside the papers").
            HnswIndex(
                OpClass(
                    Cast("embedding", HalfVectorField(dimensions=settings.EMBEDDING_DIMENSIONS)),
                    name="halfvec_cosine_ops",
                ),
                name="papers_chunk_hnsw_idx",
                m=16,
                ef_construction=64,
                condition=Q(kind="fulltext"),
            ),
            # "What lacks a vector for this model" (embed_papers) and per-model date filters.
            models.Index(fields=["model", "published"], name="papers_passage_model_pub_idx"),
            # B-tree, abstracts only: the exact scan of a window's abstracts (chat.retrieval.dense).
            # The index above also holds every chunk of the window, ~18 rows a read paper, each
            # fetched to be dropped for its kind: at 1M chunks a window's exact scan read ~19x
            # its rows (p50 221 -> 25 ms with this one; docs/BENCHMARKS.md, session 14).
            models.Index(
                fields=["model", "published"],
                name="papers_abstract_pub_idx",
                condition=Q(kind="abstract"),
            ),
            # GIN, full-text chunks: the lexical chunk search (chat.retrieval.chunks).
            GinIndex(
                fields=["lexemes"], name="papers_chunk_lexemes_idx", condition=Q(kind="fulltext")
            ),
        ]

    def __str__(self):
        return f"{self.paper_id}/{self.model}/{self.kind}#{self.position}"


class FullText(models.Model):
    """The text of a paper's PDF, read from arXiv: kept with a hash of the file and the offset of
    each page, never the PDF itself. One per paper; a newer version replaces it."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        FETCHING = "fetching", "Reading"
        OK = "ok", "Read"
        FAILED = "failed", "Failed"

    paper = models.OneToOneField(Paper, on_delete=models.CASCADE, related_name="fulltext")
    version = models.PositiveIntegerField(default=1, help_text="arXiv version that was read")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    reason = models.TextField(blank=True, help_text="Why reading failed, for people")
    text = models.TextField(blank=True)
    # Offset in `text` where each page begins (page n starts at page_starts[n - 1]).
    page_starts = ArrayField(models.PositiveIntegerField(), default=list, blank=True)
    # Headings recognised in reading order: [{"title": "3 Method", "start": 10234}, ...].
    sections = models.JSONField(default=list, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Of the PDF that was read")
    pages = models.PositiveIntegerField(default=0)
    bytes = models.PositiveIntegerField(default=0)
    parser = models.CharField(max_length=100, blank=True, help_text="Library and version")
    # papers.fulltext.chunk.chunker_signature of the chunks kept, "" for chunks cut before it
    # was recorded: a paper whose signature is not the current one is re-cut from `text`.
    # db_default too: raw INSERTs and COPY (bench_search --chunks) need not name them.
    chunker = models.CharField(
        max_length=40,
        blank=True,
        default="",
        db_default="",
        help_text="Chunker version/chunk tokens that cut its chunks",
    )
    # The signature whose re-cut failed, and why: the older chunks stay, and the nightly re-cut
    # does not try it again under that signature.
    recut_failed = models.CharField(max_length=40, blank=True, default="", db_default="")
    recut_reason = models.TextField(
        blank=True, default="", db_default="", help_text="Why re-cutting the chunks failed"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # The nightly and on-demand jobs pick what is queued, oldest request first.
            models.Index(fields=["status", "requested_at"], name="papers_fulltext_status_idx"),
        ]

    def __str__(self):
        return f"{self.paper_id} v{self.version} ({self.status})"


class IngestRun(models.Model):
    class Source(models.TextChoices):
        ARXIV_API = "arxiv_api", "arXiv API"
        SNAPSHOT = "snapshot", "Snapshot file"
        EMBED = "embed", "Embedding"
        LIVE_SEARCH = "live_search", "Live arXiv search"
        FULLTEXT = "fulltext", "Full text"
        RECHUNK = "rechunk", "Full text re-cut"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        PARTIAL = "partial", "Finished with errors"

    source = models.CharField(max_length=20, choices=Source.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    params = models.JSONField(default=dict, blank=True, help_text="Categories, path, options")
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    # Where to pick up after a failure (e.g. the category and offset reached).
    cursor = models.JSONField(default=dict, blank=True)
    new = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    # Seconds spent per stage ({"parse": 1.2, "write": 3.4, "total": 4.9}) and the rate reached.
    timings = models.JSONField(default=dict, blank=True)
    # While running: how far it got, for pages and /healthz ({"done": 1240, "total": 2998,
    # "per_second": 3.4, "stage": "vectors"}; an API backfill: requests made of planned).
    progress = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # The permission (Meta.permissions) to start one: admin button and POST /api/ingest/.
    START_PERMISSION = "papers.start_ingest"

    class Meta:
        ordering = ["-started_at"]
        # Fetching from arXiv is more than viewing runs: staff with view permission may read
        # them, only those given this permission (and superusers) may start one.
        permissions = [("start_ingest", "Can start an ingest from arXiv")]
        indexes = [
            # "Window since the last successful run" for the nightly ingest.
            models.Index(fields=["source", "status", "-started_at"], name="papers_ingest_last_idx"),
        ]

    def __str__(self):
        return f"{self.get_source_display()} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


# --- BM25 index (written by papers/indexing/lexical.py, read by chat/retrieval/fulltext.py) ---
# PostgreSQL's ts_rank is not BM25 (0.56 vs 0.70 nDCG@10 on SciFact), so each paper also carries
# its BM25 term weights as a pgvector sparse vector; a query's IDF weights form a second sparse
# vector and their inner product is the BM25 score. Terms are the lexemes of Paper.search_vector,
# so the tokenizer is PostgreSQL's 'english' configuration on both sides.

from pgvector.django import SparseVectorField  # noqa: E402 (kept with the models using it)


class LexiconTerm(models.Model):
    """One lexeme of a BM25 index; its id is its dimension in the sparse vectors."""

    id = models.AutoField(primary_key=True)  # int4: sparse vector dimensions are 32-bit
    lexeme = models.TextField()
    df = models.PositiveIntegerField(default=0, help_text="Papers containing the lexeme")
    # Common lexemes only: the champions hold every posting whose weight is >= this floor.
    champion_floor = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self):
        return f"{self.lexeme} ({self.df})"


class LexicalTerm(LexiconTerm):
    """One lexeme of the abstracts' BM25 index."""

    class Meta:
        constraints = [
            # Lexeme -> id and df when a query is turned into its IDF vector.
            models.UniqueConstraint(fields=["lexeme"], name="papers_unique_lexical_term"),
        ]


class LexiconEntry(models.Model):
    """A paper's BM25 document weights in one index, with the columns lexical search filters on."""

    # Copied from the paper so windowed lexical searches need no join.
    published = models.DateTimeField()
    length = models.FloatField(help_text="Weighted number of terms (title counts double)")
    # Term ids present in the paper: the GIN candidate generator (`terms && query ids`).
    terms = ArrayField(models.IntegerField())
    # BM25 weight per term id: tf*(k1+1) / (tf + k1*(1 - b + b*length/avg_length)).
    weights = SparseVectorField()
    indexed_at = models.DateTimeField()
    # The paper row this entry was built from: a different version or modification time means
    # the entry is stale (compared by value, so it also holds within one transaction).
    source_version = models.PositiveIntegerField(default=0)
    source_modified = models.DateTimeField(null=True)

    class Meta:
        abstract = True

    def __str__(self):
        return f"lexicon of {self.paper_id}"


class PaperLexicon(LexiconEntry):
    """A paper's BM25 document weights over its title, abstract and authors."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="lexicon"
    )

    class Meta:
        indexes = [
            # Lexical candidates: papers containing any of the query's terms.
            GinIndex(fields=["terms"], name="papers_lexicon_terms_idx"),
            # Date windows inside lexical search.
            models.Index(fields=["published"], name="papers_lexicon_published_idx"),
        ]


class PaperName(models.Model):
    """A name the paper introduces ("Transformer", "Fusion-in-Decoder", "DPR"), derived from its
    own title, abstract and full text by papers.indexing.names, rewritten whenever the lexical
    index (re)indexes the paper or its full text is read. chat.retrieval.named looks a
    question's words up here to find the paper a question names."""

    class Strength(models.IntegerChoices):
        BODY = 1, "introduced in the body"
        PROPOSED = 2, "introduced in the abstract, or an acronym of the title"
        TITLE = 3, "the title's 'NAME: …'"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="names")
    key = models.CharField(max_length=200, help_text="Lower case, hyphens as spaces")
    name = models.CharField(max_length=200, help_text="As the paper writes it")
    strength = models.PositiveSmallIntegerField(choices=Strength.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["paper", "key"], name="papers_unique_paper_name"),
        ]
        indexes = [
            # A question's words -> the papers that introduce them (chat.retrieval.named).
            models.Index(fields=["key"], name="papers_papername_key_idx"),
        ]

    def __str__(self):
        return f"{self.name} ({self.paper_id})"


class LexiconTermYear(models.Model):
    """A lower champion floor for one common lexeme in one publication year (UTC).

    A term's global floor keeps its best papers of the whole catalogue; in a year where the term
    is weak (another field's era) few or none of its papers reach it, and a window on that year
    could only bound unread papers by the global floor. This floor is set near the year's own
    best `papers.indexing.lexical.CHAMPION_SHARE`, and kept only when below the global one."""

    term_id = models.IntegerField()
    year = models.SmallIntegerField()
    champion_floor = models.FloatField()

    class Meta:
        abstract = True

    def __str__(self):
        return f"term {self.term_id} in {self.year}: floor {self.champion_floor:.3f}"


class LexicalTermYear(LexiconTermYear):
    pk = models.CompositePrimaryKey("term_id", "year")


class LexiconChampion(models.Model):
    """A high-impact posting of a common lexeme: (term, paper) with its BM25 document weight.

    For each lexeme with a `champion_floor`, the champions hold *every* paper whose weight for
    it is at least its floor for the paper's year: the lower of the term's floor and its year
    floor (about `papers.indexing.lexical.CHAMPION_SHARE` of its papers, and of each year's), so
    lexical search can read a common term's best papers in weight order and bound what the
    papers it did not read can score, in any window (chat/retrieval/fulltext.py)."""

    term_id = models.IntegerField()
    weight = models.FloatField()
    # Copied from the paper so a windowed walk reads the index alone.
    published = models.DateTimeField()

    class Meta:
        abstract = True

    def __str__(self):
        return f"term {self.term_id} in paper {self.paper_id}: {self.weight:.3f}"


class LexicalChampion(LexiconChampion):
    pk = models.CompositePrimaryKey("paper_id", "term_id")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")

    class Meta:
        indexes = [
            # The walk: a term's postings by descending weight, window checked in the index.
            models.Index(
                fields=["term_id", "-weight"],
                include=["paper", "published"],
                name="papers_champion_walk_idx",
            ),
        ]


class LexiconStats(models.Model):
    """A BM25 index's collection statistics: one row (id=1), locked while the index is written."""

    documents = models.PositiveIntegerField(default=0)
    total_length = models.FloatField(default=0.0)

    class Meta:
        abstract = True

    def __str__(self):
        return f"{self.documents} papers, {self.total_length:.0f} terms"


class LexicalStats(LexiconStats):
    pass


# --- The bodies' BM25 index (papers.indexing.lexical.BODIES, read by chat/retrieval/fulltext.py
# through the search's body word list): each read paper's full text scored as one document, in
# tables of the abstracts' index's shape, so the same exact, bounded search runs over them. A
# paper whose body, not its abstract, holds the query's words is found over 57k rows rather than
# the 1M chunks a chunk-level BM25 must read (docs/BENCHMARKS.md, "1M chunks").


class BodyTerm(LexiconTerm):
    """One lexeme of the bodies' BM25 index."""

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme"], name="papers_unique_body_term"),
        ]


class BodyLexicon(LexiconEntry):
    """A read paper's BM25 document weights over its full text (FullText.text)."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="body_lexicon"
    )

    class Meta:
        indexes = [
            # Body word candidates: papers whose full text holds any of the query's terms.
            GinIndex(fields=["terms"], name="papers_body_terms_idx"),
            # Date windows inside the body word search.
            models.Index(fields=["published"], name="papers_body_published_idx"),
        ]


class BodyTermYear(LexiconTermYear):
    pk = models.CompositePrimaryKey("term_id", "year")


class BodyChampion(LexiconChampion):
    pk = models.CompositePrimaryKey("paper_id", "term_id")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")

    class Meta:
        indexes = [
            # The walk: a term's postings by descending weight, window checked in the index.
            models.Index(
                fields=["term_id", "-weight"],
                include=["paper", "published"],
                name="papers_body_champion_walk_idx",
            ),
        ]


class BodyStats(LexiconStats):
    pass


# --- Chunk word champions (written by papers/indexing/chunkwords.py, read by
# chat/retrieval/chunks.py): the chunks' analogue of LexicalChampion. A word in thousands of
# chunks cannot be read whole on every search (1M chunks: "model" is in ~360k); its best chunks,
# in weight order, are what the chunk word search reads of it.


class ChunkWord(models.Model):
    """A word common among the full-text chunks, with the floor of its champion list: every
    chunk whose BM25 document weight for the word reaches it is a ChunkChampion."""

    id = models.AutoField(primary_key=True)
    lexeme = models.TextField(unique=True)
    floor = models.FloatField()
    df = models.PositiveIntegerField(help_text="Chunks holding the word when its floor was set")

    def __str__(self):
        return f"{self.lexeme} (floor {self.floor:.3f})"


class ChunkChampion(models.Model):
    """A chunk among a common word's best (weight >= ChunkWord.floor), with its weight:
    tf*(k1+1) / (tf + k1*(1 - b + b*length/ChunkWordStats.average_length))."""

    pk = models.CompositePrimaryKey("paper_id", "word_id", "passage_id")
    # (The primary key leads with the paper: a paper's postings are replaced when it is re-read.)
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+", db_index=False)
    word_id = models.IntegerField()
    # Not a foreign key: a re-cut paper's old chunks are gone with its postings (same paper).
    passage_id = models.BigIntegerField()
    weight = models.FloatField()
    # Copied from the paper so a windowed walk reads the index alone.
    published = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(
                fields=["word_id", "-weight"],
                include=["passage_id", "published"],
                name="papers_chunk_champion_walk_idx",
            ),
        ]

    def __str__(self):
        return f"word {self.word_id} in chunk {self.passage_id}: {self.weight:.3f}"


class ChunkWordStats(models.Model):
    """When the chunk word champions were built (one row, id=1): the average chunk length
    (distinct words) their weights use, and the chunks counted."""

    chunks = models.PositiveIntegerField(default=0)
    average_length = models.FloatField()
    built_at = models.DateTimeField()

    def __str__(self):
        return f"{self.chunks} chunks, average length {self.average_length:.1f}"
