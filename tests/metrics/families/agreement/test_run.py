"""Import of replication runs: CSV / JSON parsing, bad-input errors, the agreement artifact."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from metrics.families.agreement.run import (
    OPTIONS,
    Options,
    compute,
    parse,
    parse_tests,
    report,
)
from metrics.families.json_input import InputError
from metrics.families.runs import RunFile, option_defaults, options_from

EXAMPLE = Path(__file__).parents[4] / "metrics" / "families" / "examples" / "agreement_tests.csv"

HEADER = (
    "Study_ID,Sub_Study_ID,Finding_ID,Test_Name,Statistical_Test_Type,"
    "Human_Effect_d,Agent_Effect_d,pi_human,pi_agent,n_eff"
)


def csv_bytes(*rows: str, header: str = HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def parse_error(data: bytes, file: str = "run.csv") -> InputError:
    with pytest.raises(InputError) as caught:
        parse_tests(data, file=file)
    return caught.value


class TestParseCsv:
    def test_example_file(self) -> None:
        tests = parse_tests(EXAMPLE.read_bytes(), file="agreement_tests.csv")
        assert len(tests) == 7
        first = tests[0]
        assert first["study_id"] == "study_001"
        assert first["sub_study_id"] == "study_1_hypothetical_stories"
        assert first["statistical_test_type"] == "t-test"
        assert first["human_test_statistic"] == "t(78) = 3.10"
        assert (first["human_effect_d"], first["agent_effect_d"]) == (0.70, 0.84)
        assert (first["pi_human"], first["pi_agent"], first["n_eff"]) == (0.97, 0.99, 100)
        assert first["domain"] == "Cognition"
        assert first["source_row"] == 1
        assert tests[2]["human_effect_d"] is None  # empty cell
        assert tests[2]["human_effect_size"] == 1.30

    def test_values_and_missing_tokens(self) -> None:
        data = csv_bytes("S1,,F1,t1,t-test,0.5,nan,0.9,0.8,", "S1,sub,F2,t2,t-test,NA,0.3,0,1,12")
        first, second = parse_tests(data, file="run.csv")
        assert first["sub_study_id"] is None
        assert first["agent_effect_d"] is None
        assert first["n_eff"] is None
        assert second["human_effect_d"] is None
        assert (second["pi_human"], second["pi_agent"]) == (0.0, 1.0)

    def test_header_names_are_case_insensitive_and_unknown_columns_ignored(self) -> None:
        header = "study id,FINDING_ID,statistical-test-type,PAS_Raw,human_effect_d,agent_effect_d,ECS_Test"
        (test,) = parse_tests(csv_bytes("S1,F1,t-test,0.0,1,2,0.9", header=header), file="x.csv")
        assert test["pas"] == 0.0
        assert test["study_id"] == "S1"
        assert "ecs_test" not in test

    def test_tab_separated(self) -> None:
        header = HEADER.replace(",", "\t")
        row = "S1\t\tF1\tt1\tt-test\t0.5\t0.4\t0.9\t0.8\t10"
        (test,) = parse_tests(csv_bytes(row, header=header), file="run.tsv")
        assert test["human_effect_d"] == 0.5

    def test_byte_order_mark_is_ignored(self) -> None:
        data = b"\xef\xbb\xbf" + csv_bytes("S1,,F1,t1,t-test,0.5,0.4,0.9,0.8,10")
        assert parse_tests(data, file="run.csv")[0]["study_id"] == "S1"


class TestParseErrors:
    def test_bad_number_names_row_and_column(self) -> None:
        data = csv_bytes(
            "S1,,F1,t1,t-test,0.5,0.4,0.9,0.8,10",
            "S1,,F1,t2,t-test,big,0.4,0.9,0.8,10",
        )
        error = parse_error(data)
        assert error.file == "run.csv"
        assert "row 2" in error.location
        assert "line 3" in error.location
        assert "Human_Effect_d" in error.location
        assert "expected a number" in error.message
        assert "'big'" in error.message

    @pytest.mark.parametrize(
        ("row", "column", "expected"),
        [
            ("S1,,F1,t1,t-test,0.5,0.4,1.2,0.8,10", "pi_human", "probability"),
            ("S1,,F1,t1,t-test,0.5,0.4,0.9,-0.1,10", "pi_agent", "probability"),
            ("S1,,F1,t1,t-test,0.5,0.4,0.9,0.8,0", "n_eff", "positive"),
            ("S1,,F1,t1,t-test,inf,0.4,0.9,0.8,10", "Human_Effect_d", "finite"),
            (",,F1,t1,t-test,0.5,0.4,0.9,0.8,10", "Study_ID", "non-empty"),
            ("S1,,,t1,t-test,0.5,0.4,0.9,0.8,10", "Finding_ID", "non-empty"),
        ],
    )
    def test_bad_cells(self, row: str, column: str, expected: str) -> None:
        error = parse_error(csv_bytes(row))
        assert error.location == f"row 1 (line 2), column {column}"
        assert expected in error.message

    def test_missing_required_columns_are_all_named(self) -> None:
        header = "Study_ID,Human_Effect_d,Agent_Effect_d,pi_human,pi_agent"
        error = parse_error(csv_bytes("S1,0.5,0.4,0.9,0.8", header=header))
        assert error.location == "header"
        assert "Finding_ID" in error.message
        assert "Statistical_Test_Type" in error.message

    def test_missing_pas_source(self) -> None:
        header = "Study_ID,Finding_ID,Statistical_Test_Type,Human_Effect_d,Agent_Effect_d,pi_human"
        error = parse_error(csv_bytes("S1,F1,t-test,0.5,0.4,0.9", header=header))
        assert "PAS_Raw" in error.message
        assert "pi_agent" in error.message

    def test_missing_effect_columns(self) -> None:
        header = "Study_ID,Finding_ID,Statistical_Test_Type,PAS_Raw,Human_Effect_d"
        error = parse_error(csv_bytes("S1,F1,t-test,0.5,0.4", header=header))
        assert "Agent_Effect_d" in error.message
        assert "Agent_Effect_Size" in error.message

    def test_duplicate_columns(self) -> None:
        header = (
            "Study_ID,Finding_ID,Statistical_Test_Type,PAS,PAS_Raw,Human_Effect_d,Agent_Effect_d"
        )
        error = parse_error(csv_bytes("S1,F1,t-test,0.5,0.5,0.4,0.3", header=header))
        assert error.location == "header"
        assert "PAS_Raw" in error.message

    def test_row_with_extra_cells(self) -> None:
        error = parse_error(csv_bytes("S1,,F1,t1,t-test,0.5,0.4,0.9,0.8,10,surplus"))
        assert error.location == "row 1 (line 2)"
        assert "more cells" in error.message

    def test_no_rows(self) -> None:
        assert "no test rows" in parse_error(csv_bytes()).message
        assert "no test rows" in parse_error(b"[]", file="run.json").message

    def test_not_utf8(self) -> None:
        assert "UTF-8" in parse_error(b"Study_ID\n\xff\xfe\n").message

    def test_conflicting_domain_of_a_study(self) -> None:
        header = HEADER + ",Domain"
        data = csv_bytes(
            "S1,,F1,t1,t-test,0.5,0.4,0.9,0.8,10,Cognition",
            "S1,,F2,t2,t-test,0.5,0.4,0.9,0.8,10,Social",
            header=header,
        )
        error = parse_error(data)
        assert error.location == "row 2 (line 3), column Domain"
        assert "'Cognition'" in error.message


class TestParseJson:
    ROW = {
        "Study_ID": "S1",
        "Finding_ID": "F1",
        "Statistical_Test_Type": "correlation",
        "Human_Effect_Size": 0.5,
        "Agent_Effect_Size": "0.25",
        "pi_human": 0.9,
        "pi_agent": 0.8,
    }

    def test_list_of_objects(self) -> None:
        (test,) = parse_tests(json.dumps([self.ROW]).encode(), file="run.json")
        assert test["study_id"] == "S1"
        assert test["human_effect_size"] == 0.5
        assert test["agent_effect_size"] == 0.25  # numeric strings are accepted
        assert test["human_effect_d"] is None

    def test_same_result_as_csv(self) -> None:
        keys = list(self.ROW)
        csv_data = (
            ",".join(keys) + "\n" + ",".join(str(self.ROW[k]) for k in keys) + "\n"
        ).encode()
        from_csv = parse_tests(csv_data, file="run.csv")
        assert parse_tests(json.dumps([self.ROW]).encode(), file="run.json") == from_csv

    def test_wrapped_list(self) -> None:
        data = json.dumps({"test_results": [self.ROW, self.ROW]}).encode()
        assert len(parse_tests(data, file="run.json")) == 2

    def test_bad_value_names_row_and_key(self) -> None:
        data = json.dumps([self.ROW, {**self.ROW, "pi_agent": True}]).encode()
        error = parse_error(data, file="run.json")
        assert error.location == "row 2, column pi_agent"
        assert "expected a number" in error.message

    def test_item_that_is_not_an_object(self) -> None:
        error = parse_error(json.dumps([self.ROW, 3]).encode(), file="run.json")
        assert error.location == "row 2"

    def test_not_a_list(self) -> None:
        assert "JSON list" in parse_error(b'{"rows": []}', file="run.json").message

    def test_invalid_json_names_the_line(self) -> None:
        error = parse_error(b"[\n{]", file="run.json")
        assert error.location.startswith("line 2")


def run(**fields: object) -> dict[str, object]:
    return {
        "study_id": "A",
        "sub_study_id": "s1",
        "statistical_test_type": "t-test",
        "domain": None,
        **fields,
    }


# Study A (domain X): F1 = PAS 0.6 and 0.8 with effects (0, 0), (1, 1); F2 = posteriors
# 0.9 / 0.7 (PAS 0.66, r' 0.5) with effect (2, 4). Study B (domain Y): one finding, PAS 0.5
# twice, effects (1, 2) and (3, 2). Z_diffs only in study A.
RUN = [
    run(finding_id="F1", pas=0.6, human_effect_d=0, agent_effect_d=0, z_diff=1.0, domain="X"),
    run(finding_id="F1", pas=0.8, human_effect_d=1, agent_effect_d=1, z_diff=-2.0),
    run(finding_id="F2", pi_human=0.9, pi_agent=0.7, human_effect_d=2, agent_effect_d=4),
    run(study_id="B", finding_id="F1", pas=0.5, human_effect_d=1, agent_effect_d=2, domain="Y"),
    run(study_id="B", finding_id="F1", pas=0.5, human_effect_d=3, agent_effect_d=2),
]
PAS_A_F1 = math.sqrt(6) / (1 + math.sqrt(6))  # odds 1.5 and 4 pooled: G = sqrt(6)
TAIL_RMS_1_2 = 2 * (1 - 0.9430769)  # 2(1 - Phi(sqrt(2.5)))


class TestArtifact:
    def test_main_pas_raw(self) -> None:
        pas = compute(RUN, Options())["main"]["pas_raw"]
        study_a = (PAS_A_F1 + 0.66) / 2
        assert pas["per_study"]["A"]["value"] == pytest.approx(study_a)
        assert pas["per_study"]["A"]["n_findings"] == 2
        assert pas["per_study"]["A"]["n_tests"] == 3
        assert pas["per_study"]["B"]["value"] == pytest.approx(0.5)
        assert pas["overall"] == pytest.approx((study_a + 0.5) / 2)
        assert pas["n_studies"] == 2

    def test_main_ecs_levels_and_counts(self) -> None:
        ecs = compute(RUN, Options())["main"]["ecs"]
        # hand-computed in test_agreement_ecs: overall 43/91, study A 2/3, domain X 2.875/4.875
        assert ecs["overall"] == {"value": pytest.approx(43 / 91), "n_tests": 5}
        assert ecs["per_study"]["A"] == {"value": pytest.approx(2 / 3), "n_tests": 3}
        assert ecs["per_study"]["B"] == {"value": None, "n_tests": 2}
        assert ecs["per_domain"]["X"] == {"value": pytest.approx(2.875 / 4.875), "n_tests": 3}
        assert ecs["per_domain"]["Y"] == {"value": None, "n_tests": 2}

    def test_auxiliary_metrics_are_kept_apart(self) -> None:
        artifact = compute(RUN, Options())
        assert set(artifact["main"]) == {"pas_raw", "ecs"}
        auxiliary = artifact["auxiliary"]
        # PAS norm: A = mean(F1 0.0 (no pi_human), F2 0.5), B = 0.0 (no pi_human)
        assert auxiliary["pas_norm"]["per_study"] == {"A": pytest.approx(0.25), "B": 0.0}
        assert auxiliary["pas_norm"]["overall"] == pytest.approx(0.125)
        # ECS_Strict: A = mean(F1 RMS of 1 and -2, F2 without Z_diff -> 0.0); B has none
        strict = auxiliary["ecs_strict"]
        assert strict["per_study"]["A"] == pytest.approx(TAIL_RMS_1_2 / 2, abs=1e-6)
        assert strict["per_study"]["B"] is None
        assert strict["overall"] == pytest.approx(TAIL_RMS_1_2 / 2, abs=1e-6)
        assert auxiliary["ecs_pearson"]["per_study"]["B"] is None
        assert auxiliary["caricature"]["per_study"]["B"] == {"a": None, "b": None}

    def test_per_finding_rows(self) -> None:
        rows = compute(RUN, Options())["auxiliary"]["per_finding"]
        assert [(row["study_id"], row["finding_id"], row["n_tests"]) for row in rows] == [
            ("A", "s1:F1", 2),
            ("A", "s1:F2", 1),
            ("B", "s1:F1", 2),
        ]
        assert rows[0]["pas_raw"] == pytest.approx(PAS_A_F1)
        assert rows[2]["ecs_strict"] is None

    def test_scatter_points(self) -> None:
        scatter = compute(RUN, Options())["scatter"]
        assert [(p["study_id"], p["finding_id"], p["human_d"], p["agent_d"]) for p in scatter] == [
            ("A", "F1", 0, 0),
            ("A", "F1", 1, 1),
            ("A", "F2", 2, 4),
            ("B", "F1", 1, 2),
            ("B", "F1", 3, 2),
        ]
        assert [p["weight"] for p in scatter] == pytest.approx([0.25, 0.25, 0.5, 0.5, 0.5])

    def test_composite_finding_ids(self) -> None:
        tests = [
            run(finding_id="F1", sub_study_id="s1", pas=0.9, human_effect_d=1, agent_effect_d=1),
            run(finding_id="F1", sub_study_id="s2", pas=0.1, human_effect_d=1, agent_effect_d=1),
        ]
        split = compute(tests, Options())
        assert split["counts"]["n_findings"] == 2
        assert split["main"]["pas_raw"]["overall"] == pytest.approx(0.5)  # mean of 0.9 and 0.1
        merged = compute(tests, Options(composite_finding_ids=False))
        assert merged["counts"]["n_findings"] == 1
        # pooled odds 9 and 1/9 -> G = 1 -> 0.5 as well, but from one finding of two tests
        assert merged["auxiliary"]["per_finding"][0]["n_tests"] == 2

    def test_study_groups_option_overrides_domain_column(self) -> None:
        artifact = compute(RUN, Options(study_groups={"All": ["A", "B"]}))
        assert list(artifact["main"]["ecs"]["per_domain"]) == ["All"]
        assert artifact["main"]["ecs"]["per_domain"]["All"]["value"] == pytest.approx(43 / 91)
        assert artifact["options"]["study_groups"] == {"All": ["A", "B"]}

    def test_options(self) -> None:
        assert option_defaults(Options) == {"study_groups": None, "composite_finding_ids": True}
        assert [option.name for option in OPTIONS] == list(option_defaults(Options))
        with pytest.raises(ValueError, match="unknown option"):
            options_from(Options, {"weights": "none"})
        with pytest.raises(ValueError, match="study_groups"):
            Options(study_groups={"X": "A"})
        with pytest.raises(ValueError, match="composite_finding_ids"):
            Options(composite_finding_ids="yes")

    def test_empty_run(self) -> None:
        artifact = compute([], Options())
        assert artifact["main"]["pas_raw"]["overall"] is None
        assert artifact["main"]["ecs"]["overall"] == {"value": None, "n_tests": 0}
        assert artifact["scatter"] == []

    def test_example_file_round_trips_as_strict_json(self) -> None:
        tests = parse_tests(EXAMPLE.read_bytes(), file="agreement_tests.csv")
        artifact = compute(tests, Options())
        assert json.loads(json.dumps(artifact, allow_nan=False)) == artifact
        assert artifact["counts"] == {
            "n_tests": 7,
            "n_studies": 2,
            "n_findings": 6,
            "n_ecs_tests": 7,
        }
        assert set(artifact["main"]["ecs"]["per_domain"]) == {"Cognition", "Social"}
        assert {"study_id", "finding_id", "human_d", "agent_d", "weight"} <= set(
            artifact["scatter"][0]
        )


def test_the_run_interface_parses_the_tests_file_and_reports_the_figures() -> None:
    files = {"tests": [RunFile("agreement_tests.csv", EXAMPLE.read_bytes())]}
    tests = parse(files, Options())
    assert tests == parse_tests(EXAMPLE.read_bytes(), file="agreement_tests.csv")
    text = report(compute(tests, Options()))
    assert text.startswith("REPLICATION AGREEMENT (7 tests,")
    assert "PAS (raw)" in text and "ECS_Strict" in text
