"""Answering questions: the pipeline (``pipeline.py``) and its stages, one module each.

``answer_question`` turns a question into an ``Answer``; ``search_passages`` lists the best
passages; ``passages_for`` gives an answer's cited passages.
"""

from retrieval.answering.compose import passages_for
from retrieval.answering.pipeline import answer_question, search_passages
from retrieval.ranking import TUNING, Tuning

__all__ = ["TUNING", "Tuning", "answer_question", "passages_for", "search_passages"]
