"""Answering questions: the pipeline (``pipeline.py``) and its stages, one module each.

``answer_question`` turns a question into an ``Answer``; ``search_passages`` lists the best
passages; ``passages_for`` gives an answer's cited passages.
"""

from ..ranking import TUNING, Tuning
from .compose import passages_for
from .pipeline import answer_question, search_passages

__all__ = ["TUNING", "Tuning", "answer_question", "passages_for", "search_passages"]
