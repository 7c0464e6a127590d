"""Every rule that may refuse to answer, in one place, by name.

A refusal names its check (``Answer.refused_by``), so that each abstention can be traced to
one rule and each rule's cost measured: ``python -m bench.eval --checks`` reports, per check,
how many right answers of the dev questions it costs and how many wrong ones it stops. A check
is switched off by putting its name in ``Tuning.disabled_checks`` (how the bench measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.ranking import Tuning


@dataclass(frozen=True)
class Check:
    """A named reason not to answer, with what it protects the user from."""

    name: str
    guards: str

    def on(self, tuning: Tuning) -> bool:
        return self.name not in tuning.disabled_checks


@dataclass(frozen=True)
class Refusal:
    """A check that refused, and what to tell the user (empty: the generic "couldn't find")."""

    check: Check
    message: str = ""


EMPTY_LIBRARY = Check("empty_library", "nothing to answer from yet")
NAMES_ABSENT = Check("names_absent", "the question names something no stored article mentions (Greta Thunberg, 2018)")
ANSWER_TYPE = Check(
    "answer_type",
    "a when / how many / who question with no date, number or new name in the evidence, nor one scoring well"
    " in the closest story",
)
NOT_CONFIDENT = Check("not_confident", "the best sentence is not close enough in meaning or words")
NAMES_NOT_IN_ARTICLE = Check("names_not_in_article", "the answer's own article lacks a name of the question")
OUTCOME_NOT_REPORTED = Check(
    "outcome_not_reported", "the question asks how something turned out, and no sentence says it plainly enough"
)
EVENT_NOT_REPORTED = Check(
    "event_not_reported",
    "the question asks about an event (a resignation, a successor, a verdict) no close story reports",
)
SPEAKER_OFF_TOPIC = Check("speaker_off_topic", "the person is quoted, but nothing they said fits the topic")
SPEAKER_TOPIC_ABSENT = Check("speaker_topic_absent", "the topic names something no stored article mentions")
NEVER_QUOTED = Check("never_quoted", "the person is never quoted, and no sentence reports their words on the topic")
NO_QUOTES = Check("no_quotes", "the person is a stored speaker but none of their quotes could be read")
READER = Check("reader", "the trained reader gives no candidate a probability of answering above its threshold")

ALL_CHECKS = (
    EMPTY_LIBRARY,
    NAMES_ABSENT,
    ANSWER_TYPE,
    NOT_CONFIDENT,
    NAMES_NOT_IN_ARTICLE,
    OUTCOME_NOT_REPORTED,
    EVENT_NOT_REPORTED,
    SPEAKER_OFF_TOPIC,
    SPEAKER_TOPIC_ABSENT,
    NEVER_QUOTED,
    NO_QUOTES,
    READER,
)

# The hand rules that refuse on what the question and the evidence look like (not the reader,
# nor the plain facts: an empty library, a person with no readable quotes). "Reader only" in
# ``bench/quality/eval_reader.py`` switches these off.
RULE_CHECKS = (
    NAMES_ABSENT,
    ANSWER_TYPE,
    NOT_CONFIDENT,
    NAMES_NOT_IN_ARTICLE,
    OUTCOME_NOT_REPORTED,
    EVENT_NOT_REPORTED,
    SPEAKER_OFF_TOPIC,
    SPEAKER_TOPIC_ABSENT,
    NEVER_QUOTED,
)
