"""portlint: find CUDA → ROCm port hazards before the port.

Value classes (locations, findings, fixes, facts, candidates) are `@dataclass(unsafe_hash=True)`:
hashable, and never changed once made, by convention. Not `frozen`: a frozen dataclass sets
each field through `object.__setattr__`, which made creating one 2.5 times as slow (a project
context unpickles tens of thousands of locations), and defining one cost 0.2 ms more at
import, 15 ms of every start-up over the package.
"""

__version__ = "0.1.0"


def repository_url() -> str | None:
    """The project's repository (`[project.urls] Repository` in pyproject.toml), for links to
    rule documentation (SARIF `helpUri`); None while the package declares none, so no report
    links to a page that does not exist."""
    from importlib import metadata

    try:
        urls = metadata.metadata("portlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source") and url.strip().startswith("https://"):
            return url.strip().rstrip("/")
    return None
