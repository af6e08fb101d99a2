"""Packaging: `pip install ./sdk/python` works offline, and the in-tree
build backend writes a correct wheel and sdist."""

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from unittest import mock

import gated
from .harness import PYTHON_DIR

sys.path.insert(0, str(PYTHON_DIR / "_build"))
import gated_build  # noqa: E402


class Packaging(unittest.TestCase):

    def test_pip_installs_offline_and_the_package_imports(self):
        with tempfile.TemporaryDirectory() as target:
            pip = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-index", "--quiet",
                 "--disable-pip-version-check", "--target", target, str(PYTHON_DIR)],
                capture_output=True, text=True)
            self.assertEqual(pip.returncode, 0, "pip install failed:\n" + pip.stdout + pip.stderr)
            # cwd and PYTHONPATH are the target only, so the source tree cannot answer.
            env = dict(os.environ, PYTHONPATH=target)
            probe = subprocess.run(
                [sys.executable, "-c", "import gated; print(gated.__file__); print(gated.Client)"],
                cwd=target, env=env, capture_output=True, text=True)
            self.assertEqual(probe.returncode, 0, probe.stderr)
            path, cls = probe.stdout.splitlines()
            self.assertTrue(path.startswith(os.path.realpath(target)) or path.startswith(target), path)
            self.assertEqual(cls, "<class 'gated._client.Client'>")

    def test_wheel_record_matches_its_files(self):
        with tempfile.TemporaryDirectory() as out:
            name = gated_build.build_wheel(out)
            self.assertEqual(name, "gated-%s-py3-none-any.whl" % gated.__version__)
            with zipfile.ZipFile(os.path.join(out, name)) as whl:
                info = "gated-%s.dist-info/" % gated.__version__
                rows = list(csv.reader(io.StringIO(whl.read(info + "RECORD").decode())))
                self.assertEqual(sorted(r[0] for r in rows), sorted(whl.namelist()))
                for path, digest, size in rows:
                    if path == info + "RECORD":
                        self.assertEqual((digest, size), ("", ""))
                        continue
                    data = whl.read(path)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                    self.assertEqual(digest, "sha256=" + want.decode())
                    self.assertEqual(int(size), len(data))
                metadata = whl.read(info + "METADATA").decode()
                self.assertIn("Name: gated\n", metadata)
                self.assertIn("Version: %s\n" % gated.__version__, metadata)
                self.assertIn("Tag: py3-none-any", whl.read(info + "WHEEL").decode())
                self.assertIn("gated/_client.py", whl.namelist())
                self.assertFalse([n for n in whl.namelist() if "__pycache__" in n])

    def test_sdist_holds_the_source_and_backend(self):
        with tempfile.TemporaryDirectory() as out:
            name = gated_build.build_sdist(out)
            with tarfile.open(os.path.join(out, name)) as tar:
                names = set(tar.getnames())
        base = "gated-%s/" % gated.__version__
        for rel in ("pyproject.toml", "PKG-INFO", "README.md", "_build/gated_build.py",
                    "gated/__init__.py", "gated/_client.py"):
            self.assertIn(base + rel, names)

    def test_version_is_one_and_read_without_tomllib_too(self):
        project = gated_build._project()
        self.assertEqual(project["version"], gated.__version__)
        with mock.patch.dict(sys.modules, {"tomllib": None}):  # as on Python < 3.11
            fallback = gated_build._project()
        for key in ("name", "version", "description", "requires-python", "readme"):
            self.assertEqual(fallback[key], project[key])


if __name__ == "__main__":
    unittest.main()
