#!/usr/bin/env python3
"""Refuses a commit message whose subject (first line) is empty or over 72
characters: the subject is what `git log --oneline`, GitHub and the nightly's
bisect logs show, and the detail belongs in the body.

Usage: tools/check_commit_subject.py COMMIT_MSG_FILE   (the commit-msg hook)
"""
import sys

LIMIT = 72


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    subject = lines[0].strip() if lines else ""
    if not subject:
        print("commit message: the subject line is empty", file=sys.stderr)
        return 1
    if len(subject) > LIMIT:
        print(f"commit message: the subject is {len(subject)} characters (at most {LIMIT}); "
              "put the detail in the body, after a blank line", file=sys.stderr)
        return 1
    if len(lines) > 1 and lines[1].strip():
        print("commit message: leave a blank line between the subject and the body", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
