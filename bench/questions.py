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
