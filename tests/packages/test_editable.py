"""The editable installs of `make setup` (pip install -e sdk/python -e .): setuptools builds
them without a warning. A flat layout without a declared package root makes setuptools
install a meta path finder and warn ("Editable installation ... folders in your working
directory with the same name as your package"), which pip printed at a fresh `make demo`."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path

import pytest
from build import ProjectBuilder
from packages_support import ROOT
from pyproject_hooks import BuildBackendWarning, quiet_subprocess_runner


@pytest.mark.parametrize(("project", "package"), [("sdk/python", "moon_sdk"), (".", "arena")])
def test_editable_install_builds_without_a_warning(tmp_path: Path, project: str,
                                                   package: str) -> None:
    source = (ROOT / project).resolve()
    builder = ProjectBuilder(source, runner=quiet_subprocess_runner)  # this venv's setuptools
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wheel = Path(builder.build("editable", tmp_path))
    shown = [str(w.message) for w in caught if issubclass(w.category, BuildBackendWarning)]
    assert shown == []
    # The install is one path entry, the folder that holds the package (no finder module).
    with zipfile.ZipFile(wheel) as z:
        [pth] = [n for n in z.namelist() if n.endswith(".pth")]
        assert [n for n in z.namelist() if n.endswith(".py")] == []
        assert z.read(pth).decode().split() == [str(source)]
    assert (source / package / "__init__.py").is_file()
