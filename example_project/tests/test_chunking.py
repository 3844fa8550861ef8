"""Does each chunking put the passages that answer a question in the top 4?

``chunkeval_chunker`` runs each test once per spec of ``chunkeval_chunkers`` in
pyproject.toml: our own Markdown splitter (``handbook:600``) and two generic
references. Thresholds sit a little below the values measured when they were set
(see the README), so a real regression fails and noise does not.
"""

from __future__ import annotations

import pytest
from pytest_chunkeval import assert_recall_at_least, share_at_least
from pytest_chunkeval.assertions import assert_iou_at_least

OURS = "handbook:600"
GENERIC = "recursive:200:0"


# The marker's thresholds are checked on every result the test produced, after
# the test body: here one result per chunker.
@pytest.mark.chunkeval(min_recall=0.90, min_precision_omega=0.10)
def test_chunking_finds_the_answers(chunkeval, chunkeval_chunker):
    result = chunkeval.evaluate()  # this test's chunker, k=4, the handbook queries
    # Most questions must get ALL of their excerpt in front of the LLM, not just
    # a good average.
    assert_recall_at_least(result, 0.90, statistic=share_at_least(1.0))


def test_our_splitter_beats_generic_chunking(chunkeval):
    # Same configurations as above: served from the session's memo, not re-run.
    ours = chunkeval.evaluate(OURS)
    generic = chunkeval.evaluate(GENERIC)
    # Section-aware chunks waste less of the context window on unrelated text.
    assert ours.mean("iou") > generic.mean("iou")
    assert ours.mean("recall") >= generic.mean("recall")


CHAPTERS = ["expenses.md", "remote-work.md", "security.md", "time-off.md", "welcome.md"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_is_retrievable(chunkeval, chapter):
    result = chunkeval.evaluate(OURS)
    # Per source document: a chapter whose questions stop being answered fails on
    # its own, even if the overall mean still looks fine.
    assert_recall_at_least(result, 0.90, group=chapter)
    assert_iou_at_least(result, 0.07, group=chapter)


@pytest.mark.chunkeval(k=1, min_recall=0.80)
def test_best_passage_alone(chunkeval):
    # If the prompt only had room for one passage, how often is it the right one?
    chunkeval.evaluate(OURS)
