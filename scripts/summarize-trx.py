#!/usr/bin/env python3
"""Sums the .trx files of a test run into one closing line: 'N passed, N failed, N skipped'."""
import glob
import sys
import xml.etree.ElementTree as ET

NS = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}
passed = failed = skipped = 0
failures = []
for path in sorted(glob.glob(f"{sys.argv[1]}/*.trx")):
    root = ET.parse(path).getroot()
    for result in root.iterfind(".//t:UnitTestResult", NS):
        outcome = result.get("outcome")
        if outcome == "Passed":
            passed += 1
        elif outcome == "NotExecuted":
            skipped += 1
        else:
            failed += 1
            message = result.findtext("t:Output/t:ErrorInfo/t:Message", default="", namespaces=NS)
            failures.append((result.get("testName"), message.strip().splitlines()[:4]))
# The first lines of each failure's message: CI's log is often all there is to go on.
for name, message in failures:
    print(f"FAILED: {name}")
    for line in message:
        print(f"    {line[:300]}")
if passed + failed == 0:
    print("no tests ran", file=sys.stderr)
    sys.exit(1)
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
