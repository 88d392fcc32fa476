"""What is on this computer to speak with, and where each voice came from. No network."""

from __future__ import annotations

from audiopub.tts.downloads import BUILT_IN, DOWNLOADED, YOURS
from audiopub.tts.registry import downloads

# where the pages have always found them
__all__ = ["BUILT_IN", "DOWNLOADED", "YOURS"]


def installed_ids() -> set[str]:
    """Ids as the catalogues name them (`piper:KEY`, `supertonic-3`), to mark the installed."""
    return {offer.id for found in downloads() for offer in found.offers() if offer.installed}
