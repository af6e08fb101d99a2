"""A PEP 517 build backend for the gated SDK, standard library only.

It builds a pure-Python py3-none-any wheel of the gated package and an sdist,
so `pip install ./sdk/python` needs nothing from a package index.
"""

import base64
import csv
import hashlib
import io
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "gated"
SDIST_FILES = ["pyproject.toml", "README.md", "_build/gated_build.py"]
EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same tree gives the same wheel


def _project():
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the [project] table's plain strings suffice
        section = text.split("\n[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', section, re.M))
    return tomllib.loads(text)["project"]


def _metadata():
    p = _project()
    head = [("Metadata-Version", "2.1"), ("Name", p["name"]), ("Version", p["version"]),
            ("Summary", p["description"]), ("Requires-Python", p["requires-python"]),
            ("Description-Content-Type", "text/markdown")]
    readme = (ROOT / p["readme"]).read_text("utf-8")
    return p, "".join("%s: %s\n" % kv for kv in head) + "\n" + readme


def _package_files():
    return sorted(f for f in (ROOT / PACKAGE).rglob("*")
                  if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p, metadata = _metadata()
    name, version = p["name"], p["version"]
    dist_info = "%s-%s.dist-info" % (name, version)
    files = [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in _package_files()]
    files += [
        (dist_info + "/METADATA", metadata.encode("utf-8")),
        (dist_info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: gated_build\n"
                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        writer.writerow([path, "sha256=" + digest.decode("ascii"), len(data)])
    writer.writerow([dist_info + "/RECORD", "", ""])
    files.append((dist_info + "/RECORD", record.getvalue().encode("utf-8")))

    wheel_name = "%s-%s-py3-none-any.whl" % (name, version)
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files:
            info = zipfile.ZipInfo(path, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    p, metadata = _metadata()
    base = "%s-%s" % (p["name"], p["version"])
    files = [(rel, (ROOT / rel).read_bytes()) for rel in SDIST_FILES]
    files += [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in _package_files()]
    files.append(("PKG-INFO", metadata.encode("utf-8")))
    sdist_name = base + ".tar.gz"
    with tarfile.open(Path(sdist_directory) / sdist_name, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel, data in files:
            info = tarfile.TarInfo("%s/%s" % (base, rel))
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tf.addfile(info, io.BytesIO(data))
    return sdist_name
