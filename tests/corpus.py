"""Where the shared corpus of real scene files lives (``../shared/corpus`` beside the checkout)."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RSCENE_FILES = sorted((CORPUS / "rscene").rglob("*.rscene"))
EXAMPLE = CORPUS / "rscene" / "docs-examples" / "RsceneFile_example.rscene"
