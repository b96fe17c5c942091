"""Every op_db entry chainrule has a counterpart for, in each form and dtype, against PyTorch:
a few samples in `make test` (the first of them by second derivatives or large draws too),
CHAINRULE_OPINFO_SAMPLES (25 unless set) in the slow run, every check on each. A case
collects every sample's failure and reports them all at once."""

from __future__ import annotations

import pytest

from tests.opinfo import coverage, expectations, harness

CASES = harness.cases()  # imports op_db: once per process, at collection


# Each check's list of known disagreements: the forward and first gradients' (""), then the
# later checks', which run on the first `deep` samples of a case.
LISTS = {
    "": "KNOWN",
    harness.TWICE: "KNOWN_SECOND_DERIVATIVES",
    harness.DRAWS: "KNOWN_DRAWS",
}


def check(case: harness.Case, limit: int, deep: int | None = None) -> None:
    """Fail on any sample that disagrees unless it is a known disagreement of the check that
    failed; fail too on a known disagreement that now agrees (the lists only shrink); xfail
    when only known ones failed."""
    tally = harness.run_case(case, limit, deep=deep)
    every = tally.exhausted or limit >= harness.full_samples()
    problems = []
    for name, listed in LISTS.items():
        known = expectations.known(case.id, name)
        failed = {_index(o): o for o in tally.outcomes if o.kind == "failed" and o.check == name}
        ran = {_index(o) for o in tally.outcomes if not name or o.deep == name}
        problems += [
            f"{o.key}: {o.why}" for i, o in failed.items() if i not in known and "*" not in known
        ]
        stale = [i for i in known if i != "*" and i in ran and i not in failed]
        # a whole-case entry is judged only where every sample it speaks of ran
        if "*" in known and not failed and every and (not name or ran and deep is None):
            stale.append("*")
        problems += [
            f"{case.id}|{i}: listed as a known disagreement ({known[i]}) but agrees now; "
            f"remove it from {listed} in tests/opinfo/expectations.py"
            for i in stale
        ]
    if problems:
        pytest.fail(f"{len(problems)} of {len(tally.outcomes)} samples:\n" + "\n".join(problems))
    failed_all = [o for o in tally.outcomes if o.kind == "failed"]
    if failed_all:
        pytest.xfail("known: " + "; ".join(f"{o.key}: {o.why}" for o in failed_all))


def _index(outcome: harness.Outcome) -> int:
    return int(outcome.key.rsplit("|", 1)[1])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_agrees_with_pytorch(case: harness.Case) -> None:
    check(case, harness.BOUNDED_SAMPLES, harness.BOUNDED_DEEP)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_agrees_with_pytorch_all_samples(case: harness.Case) -> None:
    check(case, harness.full_samples())


def test_the_table_of_cases_is_full() -> None:
    # op_db and chainrule both changing could empty the table silently
    assert len({c.op for c in CASES}) >= 200


def test_the_lists_name_only_cases_that_run() -> None:
    ops = {c.op for c in CASES}
    listed = [
        *expectations.KNOWN,
        *expectations.KNOWN_SECOND_DERIVATIVES,
        *expectations.KNOWN_DRAWS,
    ]
    stray = [k[:4] for k in listed if not any(expectations.matches(k, c.id) for c in CASES)]
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
