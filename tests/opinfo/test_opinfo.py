"""Every op_db entry chainrule has a counterpart for, in each form and dtype, against PyTorch:
a few samples in `make test`, CHAINRULE_OPINFO_SAMPLES (25 unless set) in the slow run.
A case collects every sample's failure and reports them all at once."""

from __future__ import annotations

import pytest

from tests.opinfo import coverage, expectations, harness

CASES = harness.cases()  # imports op_db: once per process, at collection


def check(case: harness.Case, limit: int) -> None:
    """Fail on any sample that disagrees unless it is a known disagreement; fail too on a
    known disagreement that now agrees (the list only shrinks); xfail when only known ones
    failed."""
    tally = harness.run_case(case, limit)
    known = expectations.known(case.id)
    failed = {int(o.key.rsplit("|", 1)[1]): o for o in tally.outcomes if o.kind == "failed"}
    unexpected = [o for i, o in failed.items() if i not in known and "*" not in known]
    stale = [i for i in known if i != "*" and i < len(tally.outcomes) and i not in failed]
    # a whole-case entry is judged only where every sample it speaks of ran
    if "*" in known and not failed and (tally.exhausted or limit >= harness.full_samples()):
        stale.append("*")
    problems = [f"{o.key}: {o.why}" for o in unexpected]
    problems += [
        f"{case.id}|{i}: listed as a known disagreement ({known[i]}) but agrees now; "
        "remove it from tests/opinfo/expectations.py"
        for i in stale
    ]
    if problems:
        pytest.fail(f"{len(problems)} of {len(tally.outcomes)} samples:\n" + "\n".join(problems))
    if failed:
        pytest.xfail("known: " + "; ".join(f"{o.key}: {o.why}" for o in failed.values()))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_agrees_with_pytorch(case: harness.Case) -> None:
    check(case, harness.BOUNDED_SAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_agrees_with_pytorch_all_samples(case: harness.Case) -> None:
    check(case, harness.full_samples())


def test_the_table_of_cases_is_full() -> None:
    # op_db and chainrule both changing could empty the table silently
    assert len({c.op for c in CASES}) >= 200


def test_the_lists_name_only_cases_that_run() -> None:
    ops = {c.op for c in CASES}
    stray = [
        k[:4] for k in expectations.KNOWN if not any(expectations.matches(k, c.id) for c in CASES)
    ]
    stray += [
        op
        for op in expectations.REFUSALS
        if not any(o == op or o.startswith(op + ".") for o in ops)
    ]
    assert not stray, f"entries for no case the suite runs: {stray}"


def test_the_coverage_table_lists_every_op_the_suite_runs() -> None:
    listed = coverage.listed_ops(coverage.DOC.read_text())
    missing = sorted({c.op for c in CASES} - listed)
    stale = sorted(listed - {c.op for c in CASES})
    assert not missing and not stale, (
        f"docs/op-coverage.md is out of date (run `python -m tests.opinfo.coverage`); "
        f"missing {missing}, no longer run {stale}"
    )
