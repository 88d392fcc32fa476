"""Shared fixtures: a private data directory per test, and small generated books."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnxruntime as ort
import pytest
from epub_factory import build_epub, tiny_png
from kokoro_model import join_model
from shared_sessions import SharedSession

if TYPE_CHECKING:
    from audiopub.listen import Listener

# NiceGUI's `user` fixture for the web UI tests (tests/test_ui.py): a simulated browser.
pytest_plugins = ["nicegui.testing.user_plugin", "worker_crashes"]


ENGINE_PROCESSES = "engine_processes"


# scripts/test.sh runs the suite on three pytest-xdist workers with `--dist loadfile`: a worker
# takes a whole module at a time, so its module-scoped fixtures (a converted book, a started
# engine) are made once, as in a run without xdist. The modules below each keep the whole
# machine busy for a while (a Ray cluster, a browser beside a server, several engine processes,
# timings taken on every core): they are one unit of work, run one after another on one worker,
# so no two of them ever run side by side.
BUSY_MODULES = {
    "test_bench",
    "test_bench_beside",
    "test_cluster",
    "test_doctor",
    "test_e2e_browser",
    "test_e2e_cast",
    "test_e2e_kokoro",
    "test_e2e_voices",
    "test_resume_after_kill",
}


# The modules that take longest (half a minute or more of a quiet run's wall time), longest first.
# The workers take these first, so that the run does not end with one worker alone on a long
# module while the other has finished: a module's place in this list is only its turn.
LONGEST_FIRST = (
    "test_ui",
    "test_server_resilience",
    "test_cast_convert",
    "test_kokoro_torch",
    "test_read_aloud_books",
    "test_proof_listening",
    "test_reading_queue",
    "test_listen",
    "test_kokoro",
    "test_convert_cli",
    "test_jobs",
    "test_kokoro_torch_batch",
    "test_read_aloud",
    "test_export",
)


def _turn(item: pytest.Item) -> int:
    """The busy modules (together the longest unit of work) first, then LONGEST_FIRST, then
    the rest in their own order."""
    module = item.path.stem
    if module in BUSY_MODULES:
        return 0
    if module in LONGEST_FIRST:
        return 1 + LONGEST_FIRST.index(module)
    return 1 + len(LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In xdist's workers (scripts/test.sh), the longest work is collected first (`_turn`), and
    so handed out first: xdist gives out modules in the order its workers collected them."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_turn)  # stable: a module's tests keep their order


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{ENGINE_PROCESSES}: speak with as many engine "
        "processes as the machine allows, as a conversion does by default",
    )


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, called only where it runs
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, with the busy modules as one file. (xdist's own `--dist loadgroup`
    names its groups in the tests' ids, which pytest 9 no longer lets a plugin change.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # by `_turn`, not by each module's number of tests

    class BusyModulesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return "busy modules" if Path(module).stem in BUSY_MODULES else module

    return BusyModulesTogether(config, log)


@pytest.hookimpl(tryfirst=True)  # before the test's fixtures are made
def pytest_runtest_setup(item: pytest.Item) -> None:
    """NiceGUI's `user` fixture runs a full `gc.collect()` before and after each test, which
    walks every object of the process: 1-2 s a test once engines and the app are loaded, a
    fifth of a UI module's time. What lives when such a test starts (modules, engines, the
    module's fixtures) is frozen out of those walks; what the test makes is still collected."""
    if "user" in getattr(item, "fixturenames", ()):
        gc.freeze()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """At the end of each module, what was frozen is collected again: garbage made between
    two UI tests (after one's last walk) is let go here."""
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        gc.unfreeze()


@pytest.fixture(autouse=True)
def one_engine_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests speak in their own process (AUDIOPUB_CPU_WORKERS=1; a test may set its own), unless
    marked `engine_processes`: starting a process per core, each importing Audiopub and loading
    its voice, took most of a short conversion's time on a small machine. The engine processes
    are tested where they matter: tests/test_executor.py, the tests of test_jobs.py and
    test_batched_jobs.py that ask for two, and the marked ones (a killed conversion resumed,
    the browser's conversion, the bench's production executor)."""
    if request.node.get_closest_marker(ENGINE_PROCESSES) is None:
        monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")
    else:
        monkeypatch.delenv("AUDIOPUB_CPU_WORKERS", raising=False)


@pytest.fixture(scope="session", autouse=True)
def one_engine_in_process_for_the_run() -> Iterator[None]:
    """The same for the fixtures of a module or a class, made before a test's own fixtures: a
    module's book converted once for its tests speaks in the worker's process too (with an
    engine process per core, each loading the voice, four Kokoro paragraphs took twice as
    long)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_CPU_WORKERS", "1")
        yield


@pytest.fixture(scope="session", autouse=True)
def sessions_shared() -> Iterator[None]:
    """CPU sessions of the same model and options made once per worker (see shared_sessions):
    a test that fakes ORT replaces `InferenceSession` for itself, as before."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ort, "InferenceSession", SharedSession)
        yield


@pytest.fixture(scope="session", autouse=True)
def run_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data directory for the whole run, set before any fixture of a module or a class is
    made: those run before a test's own `data_dir`, and would write their model cache and work
    folders into the person's real data directory."""
    folder = tmp_path_factory.mktemp("audiopub-run-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own job store and job folders."""
    folder = tmp_path / "audiopub-data"
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def run_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model cache for the whole run (see `shared_model_cache`)."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture
def shared_model_cache(data_dir: Path, run_model_cache: Path) -> None:
    """The test's data directory with the run's model cache in it: the rewritten models (Piper's
    CPU and GPU graphs, the half-precision decoder, Kokoro's) are made once for the run instead
    of once per test (~2 s of CPU each), as they are made once per machine in real use. Keyed by
    the model file and the steps, so no test finds another's by mistake."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "model-cache").symlink_to(run_model_cache, target_is_directory=True)


@pytest.fixture(scope="module")
def torch_on_one_thread() -> Iterator[None]:
    """PyTorch's CPU kernels on one thread for a module, as before afterwards. On a busy two-core
    machine (the suite runs three workers on it) a second thread mostly spins waiting for the
    first: measured, "It was late." took 9.3 CPU seconds on two threads and 2.0 on one. The
    network computes the same thing on either; the tests compare runs made on the same count."""
    import torch  # only for the modules that ask, which skip without it

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="session")
def shared_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty models folder for the whole run (see `embedded_voice_loaded_once`)."""
    return tmp_path_factory.mktemp("no-models")


@pytest.fixture
def embedded_voice_loaded_once(
    shared_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """One empty models folder for every test that asks for it, so the engine registry (keyed
    by the models folder) gives them one Piper engine: the embedded voice's ONNX session is
    loaded once for the run instead of once per test's data dir (~2 s of CPU each). A module
    that only speaks with the embedded voice takes it with
    `pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")`; a test may still set
    AUDIOPUB_MODELS_DIR to a folder of its own. One that put a model in the shared folder would
    change what the others find: that fails here."""
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
    yield
    left = sorted(shared_models_dir.iterdir())
    for path in left:  # removed, so that only the test that left them fails
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    assert not left, (
        f"a test put models in the shared empty folder: {left}; give it a "
        "folder of its own (AUDIOPUB_MODELS_DIR)"
    )


SENTENCES = [
    "The rain had stopped by the time the train reached the coast.",
    "She counted the lighthouses as they passed, one for every mile.",
    "Nobody on the platform seemed to expect anyone at all.",
    "A dog slept in the shade of the ticket office.",
    "The harbour smelled of tar, salt and fresh bread.",
    "Somewhere a radio was playing an old dance tune.",
]


@pytest.fixture(scope="session")
def kokoro_model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real Kokoro int8 model, joined from its four parts once for the whole run."""
    return join_model(tmp_path_factory.mktemp("kokoro-parts") / "model_quantized.onnx")


@pytest.fixture(scope="session")
def kokoro_torch_folder(kokoro_model_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One installed Kokoro folder for the torch modules: the PyTorch weights the first makes
    from the model (cached beside it, ~3 s of CPU) are read by the next on the same worker."""
    from kokoro_model import install_folder

    return install_folder(tmp_path_factory.mktemp("torch-models") / "kokoro", kokoro_model_file)


@pytest.fixture(scope="module")
def kokoro_repo(kokoro_model_file: Path) -> dict[str, bytes]:
    """`onnx-community/Kokoro-82M-v1.0-ONNX` as a local Hub serves it (see kokoro_model)."""
    from hub_repos import in_memory
    from kokoro_model import repo_files

    return in_memory(repo_files(kokoro_model_file))


@pytest.fixture
def three_chapter_epub(tmp_path: Path) -> Path:
    """A real EPUB 3 book: three chapters, several paragraphs each, a cover."""
    chapters = [
        ("Arrival", SENTENCES[:3]),
        ("The Harbour; at dusk", SENTENCES[3:5]),
        ("Departure", SENTENCES[5:]),
    ]
    return build_epub(
        tmp_path / "book.epub", chapters, title="Coastline", author="Ann Author", cover=tiny_png()
    )


class _CudaWontLoad(ort.InferenceSession):
    """An ONNX Runtime session that drops CUDA from the providers it is asked for: what ORT
    itself does, quietly, when the CUDA libraries do not load."""

    def __init__(
        self, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> None:
        kept = [
            p
            for p in providers or []
            if (p[0] if isinstance(p, tuple) else p) != "CUDAExecutionProvider"
        ]
        super().__init__(path, sess_options, providers=kept or None, **kwargs)


@pytest.fixture
def cuda_fails_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions that ask for CUDA run on the CPU, on a machine with a working GPU too: the
    session factory and everything above it run for real; only ORT's provider choice is faked."""
    monkeypatch.setattr(ort, "InferenceSession", _CudaWontLoad)


@pytest.fixture(scope="session")
def whisper_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding the real Whisper base as `whisper:base` (see whisper_model)."""
    from whisper_model import assemble

    models = tmp_path_factory.mktemp("listening-models")
    assemble(models / "whisper-base")
    return models


@pytest.fixture(scope="session")
def whisper_listener(whisper_base: Path) -> Listener:
    """Whisper base loaded once for the run, shared by the modules that hear with it directly
    (a worker of `--dist loadfile` running several of them loads it once): a `Listener` keeps
    no state between calls to `hear`, so what one test heard does not change what the next
    hears. On one thread, as a job's listener: the suite keeps both cores busy, so a second
    CTranslate2 thread mostly waits for the first (measured on a busy machine, six of joe's
    sentences: 12.1 CPU s on one thread, 13.8 on two, and no faster; the same words heard)."""
    from audiopub.listen import Listener

    return Listener.load("base", models_dir=whisper_base, threads=1)


@pytest.fixture(scope="module")
def whisper_repo(whisper_base: Path) -> dict[str, bytes]:
    """`Systran/faster-whisper-base` as a local Hub serves it (see whisper_model)."""
    from hub_repos import in_memory
    from whisper_model import repo_files

    return in_memory(repo_files(whisper_base / "whisper-base"))
