#!/usr/bin/env python3
"""Reads drivers/*/driver.yaml, the one place a driver is declared, for the
scripts that install, build and run drivers and for drivers/README.md.

  drivers.py debian [NAME..] Debian packages the drivers (or those named) need and lack
  drivers.py pip [DIST..]    PyPI distributions the drivers (and DIST..) need and lack
  drivers.py builds          NAME<TAB>COMMAND for each driver built before it runs
  drivers.py products        the drivers that are products of this package
  drivers.py jars NAME       the jars in /usr/share/java a Java driver uses
  drivers.py matrix-args BIN arguments for `authmock matrix`, one per line
  drivers.py table           the table in drivers/README.md

LibraryDriverTests reads the same files (Tests/EndToEndTests/DriverManifest.swift).
"""
import importlib.metadata
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = {"library", "command", "product", "build", "debian", "pip", "jars", "jobs", "profile", "ci", "measured"}


def manifests():
    """(name, manifest) for every driver folder with a driver.yaml, by name."""
    found = []
    for name in sorted(os.listdir(os.path.join(ROOT, "drivers"))):
        path = os.path.join(ROOT, "drivers", name, "driver.yaml")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            manifest = yaml.safe_load(f) or {}
        unknown = set(manifest) - FIELDS
        if unknown or "library" not in manifest:
            sys.exit(f"drivers/{name}/driver.yaml: needs library; unknown fields: {', '.join(sorted(unknown)) or 'none'}")
        found.append((name, manifest))
    return found


def runnable(manifest):
    return "command" in manifest or "product" in manifest


def installed_debian(package):
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return status.returncode == 0 and status.stdout.endswith("installed")


def installed_pip(requirement):
    # `moto[server]`: the distribution, installed with its extras when it was not there.
    try:
        importlib.metadata.distribution(requirement.split("[")[0])
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    drivers = manifests()
    if command == "debian":
        named = set(argv[2:])
        if named - {name for name, _ in drivers}:
            sys.exit(f"no driver.yaml for {', '.join(sorted(named - {name for name, _ in drivers}))}")
        wanted = sorted({p for name, m in drivers if not named or name in named for p in m.get("debian", [])})
        print(" ".join(p for p in wanted if not installed_debian(p)))
    elif command == "pip":
        wanted = sorted({p for _, m in drivers for p in m.get("pip", [])} | set(argv[2:]))
        print(" ".join(p for p in wanted if not installed_pip(p)))
    elif command == "builds":
        for name, m in drivers:
            if "build" in m:
                print(f"{name}\t{m['build']}")
    elif command == "products":
        print(" ".join(m["product"] for _, m in drivers if "product" in m))
    elif command == "jars" and len(argv) == 3:
        jars = dict(drivers).get(argv[2], {}).get("jars")
        if not jars:
            sys.exit(f"drivers/{argv[2]}/driver.yaml names no jars")
        print(" ".join(jars))
    elif command == "matrix-args" and len(argv) == 3:
        for name, m in drivers:
            if not runnable(m):
                continue
            run = os.path.join(argv[2], m["product"]) if "product" in m else m["command"]
            print("--driver")
            print(f"{name}={run}")
            if os.path.isfile(os.path.join(ROOT, "drivers", name, "expected-failures.yaml")):
                print("--expected-failures")
                print(f"{name}=drivers/{name}/expected-failures.yaml")
        # Columns from saved reports (`measured:` column name -> a report in
        # the driver's folder, or a list of reports of several runs):
        # libraries CI cannot build, measured by hand.
        for name, m in drivers:
            for column, reports in (m.get("measured") or {}).items():
                for report in reports if isinstance(reports, list) else [reports]:
                    print("--measured")
                    print(f"{column}=drivers/{name}/{report}")
    elif command == "table":
        print("| driver | library | CI |\n| --- | --- | --- |")
        for name, m in drivers:
            ci = m.get("ci", "yes")
            print(f"| [{name}]({name}/) | {m['library']} | {ci} |")
        print("| `authmock-reference-driver` (`Sources/`) | authmock's correct reference client, every dialect | yes |")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
