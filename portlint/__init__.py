"""portlint: find CUDA → ROCm port hazards before the port."""

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
