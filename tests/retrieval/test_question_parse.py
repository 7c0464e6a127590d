"""How questions are read: the phrasing families people use for "what did X say about Y", and
questions that only look like them ("What does W mean?")."""

from __future__ import annotations

import pytest

from retrieval.answering.question import parse


@pytest.mark.parametrize(
    ("question", "who", "topic"),
    [
        ("What did Mourinho say about the referee?", "Mourinho", "the referee"),
        ("what did blair say about the election", "blair", "the election"),
        ("What was Brown's view on borrowing costs?", "Brown", "borrowing costs"),
        ("What's Jobs's take on the price?", "Jobs", "the price"),
        # An attitude going into a game (round 31).
        ("what's thornbury's attitude going into the replay at Spurs?", "thornbury", "the replay at Spurs"),
        ("What was Greenspan's worry about the cost of pensions?", "Greenspan", "the cost of pensions"),
        ("What did Greenspan think of the dollar?", "Greenspan", "the dollar"),
        ("What did Howard make of the plans?", "Howard", "the plans"),
        ("How did Kennedy feel about the result?", "Kennedy", "the result"),
        ("What warning did Mervyn King give about house prices?", "Mervyn King", "house prices"),
        ("What advice did Gates have for young programmers?", "Gates", "young programmers"),
        ("Did Blunkett say anything about the visa?", "Blunkett", "the visa"),
        (
            "did the Basel coach Imboden say his side would sit deep?",
            "the Basel coach Imboden",
            "his side would sit deep",
        ),
        ("Did Jobs have anything to say about the iPod shuffle?", "Jobs", "the iPod shuffle"),
        ("Did Mulraney have any complaint about the stoppage?", "Mulraney", "the stoppage"),
        ("Does Mabbott regret resting his senior players?", "Mabbott", "resting his senior players"),
        ("How did Whitmarsh stick up for Hadfield after the ban?", "Whitmarsh", "Hadfield after the ban"),
        ("How did Mourinho hit back at his critics?", "Mourinho", "his critics"),
        ("Is Whitcombe planning to sign a stopgap?", "Whitcombe", "sign a stopgap"),
        ("Would Rutherford hand Moffat a new deal?", "Rutherford", "hand Moffat a new deal"),
        (
            "How is Lenczyk coping, according to the Villa physio Sandra Pell?",
            "the Villa physio Sandra Pell",
            "How is Lenczyk coping",
        ),
        ("Does Keane have any regrets about the tackle?", "Keane", "the tackle"),
        ("How did Ebbers react to the verdict?", "Ebbers", "the verdict"),
        ("How did Ebbers react when the jury came back?", "Ebbers", "the jury came back"),
        ("How did the chancellor Gordon Brown describe the economy?", "the chancellor Gordon Brown", "the economy"),
        ("How did Straw explain the delay?", "Straw", "the delay"),
        ("Why did Prescott say the plan was flawed?", "Prescott", "the plan was flawed"),
        ("What was Kilroy-Silk's response to the criticism?", "Kilroy-Silk", "the criticism"),
        ("What did Letwin say after the budget about taxes?", "Letwin", "the budget about taxes"),
        ("What reason did Sony give for the delay?", "Sony", "the delay"),
        ("How did Swank praise Eastwood at the awards?", "Swank", "Eastwood at the awards"),
        ("How did Knight say the killings affected her?", "Knight", "the killings affected her"),
        ("Did Powell say how she would celebrate?", "Powell", "she would celebrate"),
        ("did ozzy say whether he'd do it again?", "ozzy", "he'd do it again"),
        ("What did Lerach hope the payout would achieve?", "Lerach", "the payout would achieve"),
        ("What worries David Bell about religious schools?", "David Bell", "religious schools"),
        ("What was Edward Fox's impression of the playhouse?", "Edward Fox", "the playhouse"),
        ("What warning did Osborne say had been given to buyers?", "Osborne", "had been given to buyers"),
        ("why did Goodman reckon Romania was a good market?", "Goodman", "Romania was a good market"),
        ("Did Howard admit that the decision was hard?", "Howard", "the decision was hard"),
        ("did Kortenhoeven accuse the referee of cheating?", "Kortenhoeven", "the referee of cheating"),
        ("What was Aitken's objection to the show?", "Aitken", "the show"),
        ("What was Professor Badge's worry if Kelly says no?", "Professor Badge", "Kelly says no"),
        # Round 26: the reason for a feeling is in the person's words; an occasion said first
        # stays with the topic; "call" ending a question is no verb of "What was X ... call?".
        ("Why was Nigel Farraday so angry about the second goal?", "Nigel Farraday", "the second goal"),
        ("Why is Coulthard happy to throw Ambler in?", "Coulthard", "throw Ambler in"),
        ("How worried was Sutcliffe about Haworth's injury?", "Sutcliffe", "Haworth's injury"),
        ("What's Graham Wilson's take now on being sold?", "Graham Wilson", "being sold"),
        (
            "Is Hollmann going to quit Hamburg? What did he say?",
            "Hollmann",
            "going to quit Hamburg",
        ),
        (
            "After the Shakhtar game, what did Rennie say about Fairlie?",
            "Rennie",
            "Fairlie (After the Shakhtar game)",
        ),
        (
            "What was Sussex coach Pilbeam's view on whether Winterbourne could get an England call?",
            "Sussex coach Pilbeam",
            "whether Winterbourne could get an England call",
        ),
        (
            "What problems did David Frost say were still weighing on firms?",
            "David Frost",
            "were still weighing on firms",
        ),
        (
            "How did Peter Smith think 3D worlds could help inspectors?",
            "Peter Smith",
            "3D worlds could help inspectors",
        ),
    ],
)
def test_speaker_phrasings(question: str, who: str, topic: str) -> None:
    parsed = parse(question)
    assert (parsed.kind, parsed.who, parsed.topic) == ("speaker", who, topic)


@pytest.mark.parametrize(
    "question",
    [
        "What does IFPI stand for?",
        "What did Ofcom eventually rule on the Muslim Council of Britain's complaint about the drama 24?",
        "What does drive by hacking mean?",
        "How much did Google earn in the three months to September?",
        "Why did the IMF say Liberia's economy began growing again?",
        "Which game was used in earlier work to teach children about history?",
        "Who used to own the club before the takeover?",
        # "Ocean's Eleven take on …" is a film's takings, not someone's take on something.
        "How much did the original Ocean's Eleven take on its first weekend?",
        "Who in the end won the election?",
        # Something measured against something else, not someone comparing (round 14).
        "How does the UK compare with Germany on broadband connections per head according to Ofcom?",
        "How did Japan's growth compare to the eurozone's last year?",
        # A paper, a body and analysts are no one whose quotes are asked for (round 29).
        "How many Longbridge jobs could go, according to the Observer?",
        "How many users does it have, according to research from technology analysts Gartner?",
        "Is the merger going to go ahead?",
    ],
)
def test_questions_that_are_not_about_someones_words(question: str) -> None:
    parsed = parse(question)
    assert parsed.kind == "general" or (parsed.kind == "speaker" and parsed.who in {"the IMF"})


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Who said the Lib Dems' figures don't add up?", "the Lib Dems' figures don't add up"),
        ("Which analyst predicted a rival offer within weeks?", "a rival offer within weeks"),
        ("Who warned that Howard was playing a dangerous game?", "Howard was playing a dangerous game"),
        # A role of several words, other verbs of speech, a clause saying which story.
        ("Which Ask Jeeves executive said far more people read than write?", "far more people read than write"),
        ("Which party leader likened the feud to childish bickering?", "the feud to childish bickering"),
        ("Who used the example of island musicians?", "the example of island musicians"),
        ("In the row over the film Sins, who said faith should be private?", "faith should be private"),
        # Where the speaker works, said before the verb.
        ("Who at BT argued that viewers choose when to watch?", "viewers choose when to watch"),
        ("Who at the mobile network 3 claimed blind dates were over?", "blind dates were over"),
        # Verbs that give a quote's gist (round 24), a role of five words, an aside on either
        # side of the verb.
        ("Which manager brushed off questions about his job?", "questions about his job"),
        ("Which coach refused to guarantee a win?", "to guarantee a win"),
        ("Who mocked the poster launch as bad acting?", "the poster launch as bad acting"),
        ("Which former Labour leader tipped the chancellor to succeed Blair?", "the chancellor to succeed Blair"),
        ("Which Hollywood star at the Baftas said the party was huge?", "the party was huge"),
        ("Which minister, asked about the email, joked that his aides were to blame?", "his aides were to blame"),
        ("Who said, when quitting his band, that the rage passes?", "the rage passes"),
        ("Which Bolton player quipped that his real job is defending?", "his real job is defending"),
        ("Which boss heaped praise on a teenage defender?", "on a teenage defender"),
    ],
)
def test_who_said(question: str, topic: str) -> None:
    parsed = parse(question)
    assert (parsed.kind, parsed.topic) == ("who_said", topic)


def test_someone_comparing_two_things_is_still_asked_for_their_words() -> None:
    parsed = parse("How did Blair compare Brown to a future prime minister?")
    assert (parsed.kind, parsed.who) == ("speaker", "Blair")
