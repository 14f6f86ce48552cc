"""The course's program contract in Python: the lesson's check lines, then one SUMMARY line.

The Python twin of tutorial::Verifier (common/include/tutorial/verify.hpp): every script of this
chapter ends with `return summary.finish("<program>")`, which prints

    SUMMARY {"program":...,"checks":5,"failed":0,"exact":2,"goals":[...],"figures":{...}}

as the last line and returns the exit code: 0 when every check passed (and at least one ran),
1 otherwise. Goals are measurements: a slower GPU may miss one, so they never change the exit code.
"""

import json
import math


def _number(value: float) -> float | None:
    """JSON has no NaN or infinity: those become null, as in the C++ helper."""
    return value if math.isfinite(value) else None


class Summary:
    def __init__(self) -> None:
        self.checks = self.failed = self.exact_checks = 0
        self.goals: list[dict] = []
        self.figures: dict[str, float | None] = {}

    def tally(self, ok: bool) -> bool:
        """A check whose verdict the output shows elsewhere (e.g. a table's "correct" column)."""
        self.checks += 1
        self.failed += not ok
        return bool(ok)

    def exact(self, what: str, max_error: float) -> bool:
        """An exact check: passes only if max_error is exactly 0 (NaN fails)."""
        print(f"Max error: {max_error:g}  ({what})")
        self.exact_checks += 1
        return self.tally(max_error == 0)

    def within(self, what: str, error: float, tolerance: float) -> bool:
        """A tolerance check: error (relative to what the tolerance says) no larger than tolerance."""
        ok = error <= tolerance  # False for NaN
        print(f"Error {error:.3g} (tolerance {tolerance:.3g}): {'ok' if ok else 'FAILED'}  ({what})")
        return self.tally(ok)

    def expect(self, what: str, ok: bool) -> bool:
        """A yes/no check, for results that are not numbers."""
        print(f"Check {'ok' if ok else 'FAILED'}: {what}")
        return self.tally(bool(ok))

    def goal(self, what: str, value: float, at_least: float, unit: str) -> bool:
        met = value >= at_least
        print(f"Goal: {what} >= {at_least:g}{unit}: {value:.4g}{unit}, {'met' if met else 'NOT met'}")
        self.goals.append({"goal": what, "value": _number(round(value, 1)), "at_least": at_least,
                           "unit": unit, "met": met})
        return met

    def figure(self, key: str, value: float) -> None:
        """A headline number the README quotes, rounded as the prose shows it."""
        self.figures[key] = _number(value)

    def finish(self, program: str) -> int:
        line = {"program": program, "checks": self.checks, "failed": self.failed, "exact": self.exact_checks,
                "goals": self.goals, "figures": self.figures}
        print("\nSUMMARY " + json.dumps(line, separators=(",", ":")), flush=True)
        return 0 if self.checks > 0 and self.failed == 0 else 1
