"""Names that say what they hold (issue 39, item 8), the old ones kept for a release.

``ScratchnetWarning`` moved from ``temperature`` to ``exceptions``; the answer
key's modules ``exercises.key_scores`` and ``key_models`` are
``exercises.reference_scores`` and ``reference_models``; ``_loss_layout`` is
``_torch_layouts``; the docs call ``scratchnet.fast`` "the fast path".
"""

import importlib
import re
import warnings
from pathlib import Path

import pytest

import scratchnet as sn

ROOT = Path(__file__).resolve().parents[1]


def test_the_warning_class_lives_in_exceptions_and_imports_from_its_old_home():
    from scratchnet.exceptions import ScratchnetWarning
    from scratchnet.temperature import ScratchnetWarning as old

    assert sn.ScratchnetWarning is ScratchnetWarning is old
    assert ScratchnetWarning.__module__ == "scratchnet.exceptions"
    assert issubclass(ScratchnetWarning, UserWarning)
    assert "ScratchnetWarning" not in sn.temperature.__all__   # documented once
    with pytest.warns(old):   # what temperature warns with is the one class
        warnings.warn("a bound", ScratchnetWarning, stacklevel=1)


@pytest.mark.parametrize("old, new", [("key_scores", "reference_scores"),
                                      ("key_models", "reference_models")])
def test_the_answer_key_modules_import_under_their_old_names(old, new):
    before = importlib.import_module(f"scratchnet.exercises.{old}")
    now = importlib.import_module(f"scratchnet.exercises.{new}")
    assert before.__all__ == now.__all__
    assert all(getattr(before, n) is getattr(now, n) for n in now.__all__)


def test_the_layouts_module_is_named_for_what_it_holds():
    layouts = importlib.import_module("scratchnet._torch_layouts")
    assert "PyTorch's layouts" in layouts.__doc__
    assert sn.losses.check_class_scores is layouts.check_class_scores
    assert not (ROOT / "scratchnet" / "_loss_layout.py").exists()


def _prose(path: Path) -> str:
    """A file's text without identifiers and code (test names keep their word)."""
    text = path.read_text()
    return re.sub(r"`[^`\n]*`|test_\w+|engine\d+-\w+", "", text)


def test_the_docs_and_docstrings_call_scratchnet_fast_the_fast_path():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "docs" / "notebook-twins").glob("*.md")),
             *sorted((ROOT / "notebooks").glob("*.ipynb")),
             *sorted((ROOT / "docs" / "api").glob("*.rst")),
             *sorted((ROOT / "scratchnet").rglob("*.py"))]
    said = {str(f.relative_to(ROOT)): n for f in files
            if (n := len(re.findall(r"\bengines?\b|\bengine's\b", _prose(f), re.I)))}
    assert said == {}
    assert "the fast path" in (ROOT / "scratchnet" / "fast" / "__init__.py").read_text()
    assert (ROOT / "docs" / "fast_path.md").exists()
