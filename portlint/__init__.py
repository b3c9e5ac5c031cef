"""portlint: find CUDA → ROCm port hazards before the port."""

__version__ = "0.1.0"
