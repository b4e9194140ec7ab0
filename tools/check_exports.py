#!/usr/bin/env python3
"""Every CK_API function of the public headers is exported by the shared
library (run by ctest as test_exports, and by tests/python/interop/test_c_consumers.py
against the installed package).

Usage: check_exports.py --nm NM --include INCLUDE_DIR LIBRARY.so
Prints the missing names and exits 1 if any CK_API name is not a defined
symbol of the library's dynamic symbol table (`nm -D --defined-only`).
"""
import argparse
import os
import re
import subprocess
import sys


def public_names(include_dir):
    """Names declared with CK_API in the headers under include_dir."""
    names = set()
    decl = re.compile(r"\bCK_API\b[^;{(]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
    for root, _, files in os.walk(include_dir):
        for f in files:
            if f.endswith(".h"):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    lines = [ln for ln in fh.read().splitlines()
                             if not ln.lstrip().startswith("#")]
                text = re.sub(r"\s+", " ", " ".join(lines))
                names.update(decl.findall(text))
    return names


def exported(nm, library):
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines()
            if len(line.split()) >= 3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--include", required=True)
    ap.add_argument("library")
    args = ap.parse_args()
    names = public_names(args.include)
    if len(names) < 100:
        print(f"check_exports: only {len(names)} CK_API names found under "
              f"{args.include}: wrong folder?")
        return 1
    missing = sorted(names - exported(args.nm, args.library))
    if missing:
        print(f"check_exports: {len(missing)} CK_API function(s) not exported by "
              f"{args.library}:")
        for n in missing:
            print("  " + n)
        return 1
    print(f"check_exports: all {len(names)} CK_API functions are exported by "
          f"{os.path.basename(args.library)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
