"""`portlint doctor`: check the machine a port is built on (the D rules).

    probe.py    Environment: the only reader of variables, tools, package metadata, files
    machine.py  Machine: facts derived from it once (ROCm root and version, GPUs, torch)
    checks.py   one function per D-code, and DOCTOR_CHECKS (code → check)

`run` calls the selected checks and returns a `ScanResult` the reporters render like a
scan's: `findings`, `problems` (portlint's own failures) and `skipped` (checks that could
not run here, one `NotCheckedLine` each); `files` stays empty.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from portlint.config import Config
from portlint.doctor.checks import DOCTOR_CHECKS
from portlint.doctor.machine import Machine, NotChecked
from portlint.doctor.probe import Environment
from portlint.engine import Problem, ScanResult
from portlint.ruledocs import load_all

__all__ = ["DOCTOR_CHECKS", "Environment", "NotCheckedLine", "run", "selected_codes"]


@dataclass(unsafe_hash=True)
class NotCheckedLine:
    code: str
    reason: str

    def __str__(self) -> str:
        return f"{self.code} not checked: {self.reason}"


def selected_codes(config: Config) -> tuple[str, ...]:
    """The D-codes `--select`/`--ignore` and the configuration leave on."""
    return tuple(c for c in config.enabled_codes() if c in DOCTOR_CHECKS)


def run(env: Environment, config: Config) -> ScanResult:
    machine = Machine(env)
    docs = load_all()
    result = ScanResult()
    for code in selected_codes(config):
        try:
            found = list(DOCTOR_CHECKS[code](machine))
        except NotChecked as exc:
            result.skipped.append(NotCheckedLine(code, str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a bug in one check must not stop the others
            result.problems.append(Problem("<doctor>", f"internal error in {code}: {type(exc).__name__}: {exc}", True))
            continue
        for f in found:
            severity = config.severity.get(code) or docs[code].severity
            result.findings.append(replace(f, code=code, severity=severity))
    return result
