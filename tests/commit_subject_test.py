#!/usr/bin/env python3
"""tools/check_commit_subject.py (the commit-msg hook) accepts a subject of
72 characters with a body after a blank line, and refuses 73 characters, an
empty subject and a body that follows the subject without a blank line."""
import subprocess
import sys
import tempfile

CASES = [
    ("x" * 72 + "\n\nbody\n", 0),
    ("# a comment git strips\n" + "y" * 40 + "\n", 0),
    ("x" * 73 + "\n", 1),
    ("\n\nbody only\n", 1),
    ("subject\nbody without a blank line\n", 1),
]


def main():
    script = sys.argv[1]
    failed = 0
    for text, want in CASES:
        with tempfile.NamedTemporaryFile("w", suffix=".msg", delete=False) as f:
            f.write(text)
        got = subprocess.run([sys.executable, script, f.name], capture_output=True).returncode
        if got != want:
            failed += 1
            print(f"FAIL: {text.splitlines()[0][:20]!r}...: exit {got}, expected {want}")
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
