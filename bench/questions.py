"""Chat questions the live benchmarks ask (bench_chat, bench_load): topics, dates, phrasings."""

QUESTIONS = [
    "What are recent advances in diffusion models for video generation?",
    "quantum entanglement measures for mixed states",
    "papers from the last 2 years on retrieval-augmented generation",
    "graph neural networks for molecules since 2020",
    "How do transformers handle long context?",
    "reinforcement learning from human feedback in 2023",
    "What is known about adversarial robustness of image classifiers?",
    "quantum error correction codes before 2005",
    "large language model evaluation benchmarks published this year",
    "contrastive learning for speech representations",
    "federated learning privacy attacks",
    "Bell inequality violations with photons",
    "neural architecture search efficiency since 2019",
    "What did people publish about knowledge distillation last year?",
    "vision transformers versus convolutional networks",
    "quantum key distribution security proofs",
    "few-shot learning with meta-learning",
    "explainability methods for deep networks since 2021",
    "topological quantum computing with anyons",
    "instruction tuning of language models in 2024",
]


def catalogue_questions(n: int) -> list[str]:
    """`n` questions, each on a different paper of the catalogue (its title, lower-cased), spread
    evenly over it in arXiv-id order. Unlike QUESTIONS asked in turn, no two chats share a query
    vector or, mostly, the sources their answers cite, so no cache of the server's answers for
    another chat (query vectors, the support check's sentence vectors)."""
    from papers.models import Paper

    ids = list(Paper.objects.visible().order_by("arxiv_id").values_list("pk", flat=True))
    if len(ids) < n:
        raise ValueError(f"{n} distinct questions need {n} papers; the catalogue has {len(ids)}")
    step = len(ids) // n
    picked = ids[::step][:n]
    titles = dict(Paper.objects.filter(pk__in=picked).values_list("pk", "title"))
    return [f"research on {' '.join(titles[pk].split()).rstrip('.').lower()}" for pk in picked]
