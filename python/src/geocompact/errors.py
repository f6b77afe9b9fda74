"""Exceptions raised by the geocompact API, one per exit code of the command.

The command's exit codes are a contract: 0 success (including "nothing to
do"), 1 error, 2 usage error, 3 violations found, 4 commit conflict or lease
held. Each non-zero code raises its own class, so a caller (or a scheduler's
retry policy) can act on the kind of failure rather than on a message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class GeocompactError(Exception):
    """A geocompact command failed.

    Attributes:
        exit_code: the command's exit code.
        message: the command's error message, without the ``geocompact:``
            prefix (empty when the command printed none).
        stderr: everything the command wrote to stderr that was not a log
            record.
        argv: the command line that ran (never holds catalog secrets: those
            travel in the environment).
        result: the JSON document the command printed before failing, if
            any (a rewrite that verified nothing, a validate report, ...).
    """

    #: Whether running the same call again may succeed with nothing changed
    #: first. Only a commit conflict or a held lease is.
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        exit_code: int,
        stderr: str = "",
        argv: Sequence[str] = (),
        result: Any = None,
    ) -> None:
        super().__init__(message or f"geocompact exited {exit_code}")
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr
        self.argv = list(argv)
        self.result = result


class CommandError(GeocompactError):
    """Exit 1: the command ran and failed (a missing table, an I/O error)."""


class UsageError(GeocompactError):
    """Exit 2: a mistake in the call (an unknown option, curve or policy
    field, a retention below the floor); nothing was done. Fix the call
    rather than retrying it."""


class ValidationError(GeocompactError):
    """Exit 3: validation found violations (``validate``, or ``ingest``
    refusing a batch); nothing was written.

    Attributes:
        report: the validation report (a :class:`geocompact.ValidateResult`).
        violations: the inputs (files or tables) that have violations, each
            with its counts per code and example rows.
    """

    def __init__(
        self,
        message: str,
        *,
        exit_code: int,
        stderr: str = "",
        argv: Sequence[str] = (),
        result: Any = None,
    ) -> None:
        super().__init__(message, exit_code=exit_code, stderr=stderr, argv=argv, result=result)
        from .results import ValidateResult, from_json  # results imports nothing from here

        if isinstance(result, dict) and "inputs" in result:
            result = from_json(ValidateResult, result)
            self.result = result
        self.report: ValidateResult | None = result if isinstance(result, ValidateResult) else None
        self.violations = [i for i in self.report.inputs if not i.ok] if self.report else []

    def __str__(self) -> str:
        if not self.violations:
            return super().__str__()
        parts = []
        for v in self.violations:
            counts = ", ".join(f"{code}: {n}" for code, n in sorted(v.counts.items()))
            parts.append(f"{v.input}: {v.violations} violations ({counts})")
        head = self.message or "validation found violations"
        return head + "; " + "; ".join(parts)


class CommitConflict(GeocompactError):
    """Exit 4: another writer won a commit race, or another run holds the
    table's maintenance lease. The table is unchanged; the call is safe to
    retry later."""

    retryable = True


class GeocompactTimeout(GeocompactError):
    """The call's ``timeout`` passed: the command was stopped (SIGTERM, so
    it removed what it wrote and committed nothing) and ``exit_code`` is
    what it exited with."""


class BinaryNotFound(GeocompactError):
    """The geocompact binary was found neither beside this interpreter nor
    on PATH (nor at ``$GEOCOMPACT_BINARY``)."""


_BY_CODE: dict[int, type[GeocompactError]] = {
    1: CommandError,
    2: UsageError,
    3: ValidationError,
    4: CommitConflict,
}


def error_for(exit_code: int) -> type[GeocompactError]:
    """Returns the exception class of a non-zero exit code (an unknown code,
    such as a signal's, is a :class:`CommandError`)."""
    return _BY_CODE.get(exit_code, CommandError)
