"""Ranking a paper's chunks (chat.retrieval.chunks): BM25 over the candidate chunks, the sentence
evidence (numbers for quantity questions), and the body's evidence reordering the page. The
search itself is tested in test_chunks.py."""

from chat.llm.base import SourceText
from chat.llm.extractive import answering_scores
from chat.retrieval.chunks import (
    Chunk,
    _by_sentences,
    reordered_by_evidence,
    sentence_evidence,
    with_bm25,
)
from chat.understanding.quantity import (
    asked_things,
    asks_for_quantity,
    numbers_in,
    states_new_number,
)


def test_bm25_over_chunks_counts_rare_words_more_than_common_ones():
    def chunk(pid, counts, length=40):
        return Chunk(pid, 1, "", 1, 1, "", 0, 0, 0.5, 0.0, length=length, counts=counts)

    common, rare = chunk(1, (("transform", 3),)), chunk(2, (("label", 1), ("smooth", 1)))
    others = [chunk(i, (("transform", 1),)) for i in range(3, 10)]
    scored = {c.passage_id: c.bm25 for c in with_bm25([common, rare, *others])}
    assert scored[2] > scored[1] > 0
    # Without a query word a chunk scores nothing (and stays out of the BM25 list).
    assert with_bm25([chunk(11, ())])[0].bm25 == 0


def test_the_bodys_evidence_reorders_the_page_and_leaves_papers_without_it_in_place():
    order = [10, 20, 30, 40]
    # 40 holds the question's rare words in its body: it moves up; 20 and 30 have none.
    assert reordered_by_evidence(order, {10: 1.0, 40: 9.0}) == [10, 40, 20, 30]
    assert reordered_by_evidence(order, {}) == order


def test_quantity_questions_and_sentences_stating_a_number():
    assert asks_for_quantity("How many GPUs were used?")
    assert asks_for_quantity("What dropout rate did the base model use?")
    assert not asks_for_quantity("Which library indexes the dense vectors?")
    assert states_new_number("We trained on 8 A100 GPUs.", "How many GPUs?")
    assert states_new_number("Five researchers took part.", "How many researchers?")
    # What the number counts or measures: a sentence answering names it.
    assert asked_things("How many GPUs were used?") == ["gpus", "were"]
    assert asked_things("What dropout rate did the base model use?") == ["dropout"]
    assert asked_things("Which library indexes the vectors?") == []
    # The number the question names itself ("ResNet-50") is not an answer.
    assert not states_new_number("ResNet-50 is deep.", "How many GPUs trained ResNet-50?")
    # A formula's constant and an index are no stated number ("1 − β1", "β2"); the default is.
    assert not states_new_number("The stepsize is bounded by α · (1 − β1).", "What stepsize?")
    assert not states_new_number("Scale by β2 and the P100's memory.", "What stepsize?")
    assert states_new_number("Good defaults are α = 0.002, β1 = 0.9.", "What stepsize?")
    # A reference's year is no value: OPT's model card sentence is no batch size.
    card = "Following Mitchell et al. (2018), we provide a model card for OPT-175B."
    assert not states_new_number(card, "What batch size was used to train OPT-175B?")
    cited = "We use ResNet (He et al., 2016; Wu & He, 2018) with a batch size of 4096."
    assert states_new_number(cited, "What batch size?") and "2016" not in numbers_in(cited)
    assert "2018" in numbers_in("In 2018 we trained it again.")  # a year in the text still counts


def test_a_resolution_is_a_quantity_and_2d_is_no_number():
    # ViT's "What image resolution …?" wants a number: "all training is done on resolution 224".
    question = "What image resolution does ViT use for pre-training?"
    assert asks_for_quantity(question) and asked_things(question) == ["resolution"]
    assert states_new_number("Finally, all training is done on resolution 224.", question)
    # "2D" and "3D" say how many dimensions a thing has, not a value of it.
    interpolation = (
        "We therefore perform 2D interpolation of the pre-trained position embeddings, "
        "according to their location in the original image."
    )
    assert numbers_in(interpolation) == set()
    assert numbers_in("a 3D scan of 20 rooms") == {"20"}
    assert numbers_in("Batch 2M, 80GB A100 GPUs") == {"2", "80"}


def test_the_name_a_question_gives_a_paper_weighs_little_in_choosing_its_answer():
    # Rare in the passage, the name would make a sentence that only names the paper the answer.
    question = "Which optimizer trained OPT-175B?"
    card = SourceText(
        1, "OPT", "", "2022-05-02", arxiv_id="2205.01068", where="p. 2",
        text="We release a model card for OPT-175B and for its smaller models. Gradients were clipped. "
        "Optimizer states are sharded. Each step took a second. We used the AdamW optimizer.",
    )  # fmt: skip
    by_name = answering_scores(question, [card])[1][1]
    assert by_name.startswith("We release a model card")
    named = answering_scores(question, [card], names=["OPT-175B"])[1][1]
    assert "optimizer" in named.lower() and "model card" not in named
    # The catalogue names the paper "OPT"; the variant the question writes with it ("175B", in
    # most sentences about OPT-175B and none of its answers) weighs as little as the name.
    assert answering_scores(question, [card], names=["OPT"]) == answering_scores(
        question, [card], names=["OPT-175B"]
    )


def test_words_of_one_sentence_weigh_more_than_the_same_words_spread_over_a_chunk():
    idf = {"gpus": 2.0, "train": 1.0, "student": 1.0}
    question = "How many GPUs were used to train the student?"
    spread = "The GPUs are listed later. We train it. The student is small."
    together = "We train the student on GPUs."
    assert sentence_evidence(together, idf, question, False) == 4.0
    assert sentence_evidence(spread, idf, question, False) == 2.0
    # A quantity question: the sentence stating a number weighs more.
    numbered = "We train the student on 8 GPUs."
    assert sentence_evidence(numbered, idf, question, True) == 1.5 * 4.0
    assert sentence_evidence(together, idf, question, True) == 4.0

    def chunk(pid, text, counts=(("train", 1),)):  # (its stored words, as best_chunks reads)
        return Chunk(pid, 1, text, pid, pid, "", pid, pid + 1, 0.5, 0.0, counts=counts)

    # A pool ranked by cosine and BM25 (1 first) is reordered by its sentence evidence.
    pool = [chunk(1, spread), chunk(2, "Nothing here.", ()), chunk(3, numbered)]
    assert [c.passage_id for c in _by_sentences(pool, idf, question, True)] == [3, 1, 2]


def test_a_chunk_without_the_querys_words_is_not_read_for_sentence_evidence():
    idf = {"gpus": 2.0, "train": 1.0}
    question = "How many GPUs were used to train it?"

    def chunk(pid, text, counts):
        return Chunk(pid, 1, text, pid, pid, "", pid, pid + 1, 0.5, 0.0, counts=counts)

    # Its stored words (PostgreSQL's lexemes) hold none of the query's: its text is not split,
    # it keeps its place (its text says otherwise only here, to show that it was not read).
    unread = chunk(1, "We train on 8 GPUs.", ())
    read = chunk(2, "We train on 16 GPUs.", (("gpus", 1), ("train", 1)))
    assert [c.passage_id for c in _by_sentences([unread, read], idf, question, True)] == [2, 1]
    assert [c.passage_id for c in _by_sentences([read, unread], idf, question, True)] == [2, 1]
    # Greek letters the sentence scorer spells out ("β2" -> "beta2") are words PostgreSQL's
    # lexemes lack: such a chunk is read.
    greek = chunk(3, "We set β2 = 0.98.", ())
    other = chunk(4, "Unrelated words.", (("train", 1),))
    beta = {"beta2": 3.0, "train": 1.0}
    ranked = _by_sentences([other, greek], beta, "What beta2 was used?", True)
    assert [c.passage_id for c in ranked] == [3, 4]


def test_the_words_that_only_ask_are_no_evidence_in_a_chunk():
    from chat.retrieval.chunks import asking_lexemes

    # PostgreSQL keeps "many" ("mani"): a chunk saying "many domains" is no answer to how many.
    assert {"mani", "how"} <= asking_lexemes("How many passages does the corpus contain?")
    assert "use" in asking_lexemes("What optimizer was used to train it?")
    # A stem another word of the question shares stays: "researchers" is no stopword.
    assert "research" not in asking_lexemes("How many researchers took part in the study?")


def test_sentences_are_read_only_while_a_chunk_could_reach_the_kept_ones(monkeypatch):
    """Asked for the first `kept` chunks, _by_sentences gives the same ones, in the same order
    and with the same scores, as reading every chunk's sentences, and reads fewer chunks."""
    from chat.retrieval import chunks as module
    from tests.chat.retrieval.random_pools import random_pools

    read = []
    real = module.sentence_evidence
    monkeypatch.setattr(
        module, "sentence_evidence", lambda *args: read.append(1) or real(*args)
    )
    read_all = read_kept = 0
    for question, quantity, idf, pool, kept in random_pools(seed=7, count=400):
        read.clear()
        every = _by_sentences(pool, idf, question, quantity)[:kept]
        read_all += len(read)
        read.clear()
        first = _by_sentences(pool, idf, question, quantity, kept)
        read_kept += len(read)
        assert [(c.passage_id, c.score) for c in first] == [(c.passage_id, c.score) for c in every]
    assert read_kept < 0.8 * read_all


def test_a_chunks_sentences_are_split_and_stemmed_once_per_process(monkeypatch):
    """The question-independent part of the sentence evidence (the sentences and their terms)
    is kept per chunk text: a second question over the same chunk splits nothing again, and
    scores exactly as splitting it afresh does."""
    from chat.retrieval import sentence_sketch

    text = "We train the student on 8 GPUs. The GPUs are listed later. Dropout is 0.1."
    first = {"gpus": 2.0, "train": 1.0, "student": 1.0}
    second = {"dropout": 3.0}
    sentence_sketch.analysed_sentences.cache_clear()
    fresh = [sentence_evidence(text, idf, "How many GPUs?", True) for idf in (first, second)]

    splits = []
    real = sentence_sketch.passage_sentences
    monkeypatch.setattr(
        sentence_sketch, "passage_sentences", lambda t: splits.append(t) or real(t)
    )
    kept = [sentence_evidence(text, idf, "How many GPUs?", True) for idf in (first, second)]
    assert kept == fresh == [1.5 * 4.0, 1.5 * 3.0]  # (quantity: each states a number)
    assert splits == []  # both answered from what the first question split

    changed = text.replace("0.1", "0.3")  # a re-cut chunk: another text, split anew
    assert sentence_evidence(changed, second, "What dropout?", True) == 1.5 * 3.0
    assert splits == [changed]
