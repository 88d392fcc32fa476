"""The install must leave exactly one ONNX Runtime: two distributions overwrite each other's
`onnxruntime/` folder and the CUDA provider silently disappears."""

from importlib import metadata

import onnxruntime


def _onnxruntime_distributions() -> list[str]:
    names = {(dist.metadata["Name"] or "").lower() for dist in metadata.distributions()}
    return sorted(n for n in names if n == "onnxruntime" or n.startswith("onnxruntime-"))


def test_exactly_one_onnxruntime_distribution_is_installed() -> None:
    found = _onnxruntime_distributions()
    assert len(found) == 1, f"several ONNX Runtime distributions installed: {found}"


def test_the_installed_distribution_is_the_one_imported() -> None:
    (name,) = _onnxruntime_distributions()
    assert metadata.version(name) == onnxruntime.__version__
