"""The replication-agreement card: the artifact as the context of
``templates/metrics/cards/family_agreement.html`` (PAS and ECS, per study and domain, the
effect-size scatter plot and its points)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formatting import fmt
from ..plots import scatter_plot


def _agreement_studies(artifact: Mapping[str, Any]) -> list[dict]:
    main, auxiliary = artifact["main"], artifact["auxiliary"]
    pas = main["pas_raw"].get("per_study") or {}
    ecs = main["ecs"].get("per_study") or {}
    pas_norm = auxiliary["pas_norm"].get("per_study") or {}
    strict = auxiliary["ecs_strict"].get("per_study") or {}
    rows = []
    for study in sorted(set(pas) | set(ecs)):
        pas_row, ecs_row = pas.get(study) or {}, ecs.get(study) or {}
        rows.append(
            {
                "study_id": study,
                "pas_raw": fmt(pas_row.get("value")),
                "n_findings": pas_row.get("n_findings", 0),
                "n_tests": pas_row.get("n_tests", 0),
                "ecs": fmt(ecs_row.get("value")),
                "n_ecs_tests": ecs_row.get("n_tests", 0),
                "pas_norm": fmt(pas_norm.get(study)),
                "ecs_strict": fmt(strict.get(study)),
            }
        )
    return rows


def card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    main, auxiliary = artifact["main"], artifact["auxiliary"]
    scatter = artifact.get("scatter") or []
    domains = main["ecs"].get("per_domain") or {}
    return {
        "pas_raw": fmt(main["pas_raw"].get("overall")),
        "n_studies": main["pas_raw"].get("n_studies"),
        "ecs": fmt(main["ecs"]["overall"].get("value")),
        "ecs_n": main["ecs"]["overall"].get("n_tests"),
        "ecs_measure": main["ecs"].get("measure", ""),
        "domains": [
            {"name": name, "value": fmt(row.get("value")), "n": row.get("n_tests")}
            for name, row in sorted(domains.items())
        ],
        "pas_norm": fmt(auxiliary["pas_norm"].get("overall")),
        "ecs_strict": fmt(auxiliary["ecs_strict"].get("overall")),
        "ecs_pearson": fmt((auxiliary.get("ecs_pearson") or {}).get("overall")),
        "studies": _agreement_studies(artifact),
        "counts": artifact.get("counts", {}),
        "scatter_svg": scatter_plot(
            [
                {
                    "x": p.get("human_d"),
                    "y": p.get("agent_d"),
                    "size": p.get("weight"),
                    "label": f"{p.get('study_id')} {p.get('finding_id')}",
                }
                for p in scatter
            ],
            "human effect size (d)",
            "agent effect size (d)",
            identity_line=True,
            title="Human vs agent effect sizes (dot area: ECS weight)",
        ),
        "points": [
            {
                "study_id": p.get("study_id"),
                "finding_id": p.get("finding_id"),
                "test_name": p.get("test_name") or "",
                "human_d": fmt(p.get("human_d")),
                "agent_d": fmt(p.get("agent_d")),
                "weight": fmt(p.get("weight")),
            }
            for p in scatter
        ],
    }
