"""portlint: find CUDA → ROCm port hazards before the port.

Value classes (locations, findings, fixes, facts, candidates) are `@dataclass(unsafe_hash=True)`:
hashable, and never changed once made, by convention. Not `frozen`: a frozen dataclass sets
each field through `object.__setattr__`, which made creating one 2.5 times as slow (a project
context unpickles tens of thousands of locations), and defining one cost 0.2 ms more at
import, 15 ms of every start-up over the package.
"""

import functools

__version__ = "0.1.0"


@functools.cache  # read once: SARIF asks for every rule
def repository_url() -> str | None:
    """The project's repository (`[project.urls] Repository`), for links to rule documentation
    (SARIF `helpUri`, `informationUri`); None while the package declares none, so no report
    links to a page that does not exist. Read from the source checkout's pyproject.toml when
    portlint runs from one (an editable install's metadata is as old as the install), else
    from the installed package's metadata."""
    import tomllib
    from pathlib import Path

    entries = None  # "Label, URL", as the metadata's Project-URL fields spell them
    try:
        project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
        if project.get("name") == "portlint":
            entries = [f"{label}, {url}" for label, url in project.get("urls", {}).items()]
    except (OSError, KeyError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        pass
    if entries is None:
        from importlib import metadata

        try:
            entries = metadata.metadata("portlint").get_all("Project-URL") or []
        except metadata.PackageNotFoundError:
            return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source") and url.strip().startswith("https://"):
            return url.strip().rstrip("/")
    return None
