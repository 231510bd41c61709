"""What the uploaded-run families declare for their uploads: one `Family` spec each.

`metrics.registry.FAMILIES` lists each of them beside the families computed from our own data.

An entry declares everything the upload page, the API, the management commands and the task
need: the family's name and label, its input file roles (format, example file), its options
(type, default, allowed values), the parse-and-validate function, the compute function, the
report, and the function turning an artifact into the context of its card template
(``metrics/cards/family_<name>.html``). Adding a family is adding one entry to `UPLOADS`: its
``run.py`` gives the options, parse, compute, report and card (``**run_entry(run)``); the entry
itself only declares.

Parse functions take ``{role: [InputFile, ...]}`` and the resolved options and raise
``InputError(file, location, message)`` for a bad file; compute functions take what parse
returned and the options and return a JSON-ready artifact dict.
"""

from __future__ import annotations

from metrics.evaluations.adapters import run_entry
from metrics.evaluations.base import (
    Family,
    FileRole,
    InputFile,
    Option,
    OptionError,
    UnknownFamilyError,
)
from metrics.families.agreement import run as agreement_run
from metrics.families.reasoning import run as reasoning_run
from metrics.families.selective import run as selective_run
from metrics.families.verdicts import run as verdicts_run

__all__ = [
    "EXAMPLES_DIR",
    "UPLOADS",
    "Family",
    "FileRole",
    "InputFile",
    "Option",
    "OptionError",
    "UnknownFamilyError",
    "example_files",
    "upload_get",
]

EXAMPLES_DIR = "metrics/families/examples"

# --- the families ----------------------------------------------------------------------------

UPLOADS: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            name="selective_prediction",
            label="Selective prediction (AURC / AUGRC / MAE@coverage)",
            description=(
                "PHQ-8 item predictions with abstention, ranked by confidence: risk–coverage "
                "curves, AURC/AUGRC with bootstrap CIs per confidence variant. Two runs (or "
                "one run with a second mode) give paired deltas (second − first)."
            ),
            roles=(
                FileRole(
                    "run",
                    "Run output",
                    ("json",),
                    max_files=2,
                    example="selective_run.json",
                    help="reproduce_results.py output; two files for a paired comparison.",
                ),
            ),
            **run_entry(selective_run),
            pairable=True,
        ),
        Family(
            name="agreement",
            label="Replication agreement (PAS / ECS)",
            description=(
                "Per-test human vs agent results of replicated studies: PAS (raw) and ECS "
                "(Lin's CCC of effect sizes) as main metrics; normalised PAS and ECS_Strict "
                "as auxiliary ones."
            ),
            roles=(
                FileRole(
                    "tests",
                    "Per-test results",
                    ("csv", "json"),
                    example="agreement_tests.csv",
                    help="detailed_stats.csv columns (Study_ID, Finding_ID, …) or JSON rows.",
                ),
            ),
            **run_entry(agreement_run),
        ),
        Family(
            name="verdicts",
            label="Verdicts and evidence (seven metrics)",
            description=(
                "Risk verdicts with cited evidence against ground truth: AUPRC, macro F1, "
                "evidence precision/recall, snippet validity, judgement accuracy, verdict "
                "consistency."
            ),
            roles=(
                FileRole(
                    "results",
                    "Results",
                    ("json",),
                    example="verdict_results.json",
                    help="results.json of the run.",
                ),
                FileRole(
                    "ground_truth",
                    "Ground truth",
                    ("json",),
                    example="verdict_ground_truth.json",
                    help="{restaurants: {id: {ground_truth: {verdict, incidents}}}}",
                ),
                FileRole(
                    "reviews",
                    "Review texts",
                    ("json", "jsonl"),
                    required=False,
                    help="Optional: review texts, for snippet validity.",
                ),
            ),
            **run_entry(verdicts_run),
        ),
        Family(
            name="reasoning",
            label="Reasoning faithfulness (gap, step-F1, silent bias)",
            description=(
                "Chain-of-thought vs early answers on vignettes: faithfulness gap, step-F1 "
                "against gold reasoning and, with bias cases, the silent bias rate."
            ),
            roles=(
                FileRole(
                    "generations",
                    "Generations",
                    ("jsonl",),
                    example="reasoning_generations.jsonl",
                    help="One JSON line per answer: id, mode (cot/direct/bias), output_text, …",
                ),
                FileRole(
                    "vignettes",
                    "Vignettes",
                    ("json",),
                    example="reasoning_vignettes.json",
                    help="[{id, gold_answer, gold_reasoning: [step, …]}]",
                ),
                FileRole(
                    "bias_cases",
                    "Bias cases",
                    ("json",),
                    required=False,
                    example="reasoning_bias_cases.json",
                    help="Optional: [{id, prompt, bias_feature, bias_label}]",
                ),
                FileRole(
                    "bias_generations",
                    "Bias generations",
                    ("jsonl",),
                    required=False,
                    help="Optional: answers to the bias cases (or 'bias' rows in generations).",
                ),
            ),
            **run_entry(reasoning_run),
        ),
    )
}


def upload_get(name: str) -> Family:
    """The upload spec of an uploaded-run family, or ``UnknownFamilyError`` naming the known."""
    try:
        return UPLOADS[name]
    except KeyError:
        raise UnknownFamilyError(name, list(UPLOADS)) from None


def example_files() -> dict[str, str]:
    """Every example file the uploaded families declare: file name → family name."""
    return {
        role.example: spec.name for spec in UPLOADS.values() for role in spec.roles if role.example
    }
