#!/usr/bin/env python3
"""Fails when a function of include/tally/c.h is not called by a test.

Every TALLY_EXPORT function declared in c.h must appear as a call
("name(") in tests/c/c_api_test.c, so a new function cannot land without
a test of it. Usage: check_calls.py C_H TEST_C
"""
import re
import sys


def main():
    header, test = sys.argv[1], sys.argv[2]
    with open(header, encoding="utf-8") as fh:
        declared = re.findall(r"\b(tally_[a-z0-9_]+)\s*\(", fh.read())
    with open(test, encoding="utf-8") as fh:
        calls = set(re.findall(r"\b(tally_[a-z0-9_]+)\s*\(", fh.read()))
    functions = sorted(set(declared))
    missing = [f for f in functions if f not in calls]
    for f in missing:
        print("check_calls: %s (c.h) is not called by %s" % (f, test))
    print("check_calls: %d functions in c.h, %d not called"
          % (len(functions), len(missing)))
    return 1 if missing or not functions else 0


if __name__ == "__main__":
    sys.exit(main())
