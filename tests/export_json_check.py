#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a Chrome trace-event JSON export of tracekit (docs/export.md).

usage: export_json_check.py EXPORT.json [--printed TRACEPRINTER_NS.txt] [--pairs B:E,...]
                            [--expect-slices N]

Always: the file is valid JSON in the JSON Object Format; every event has the members its
phase needs (M, X, i, C, and the async b/e of VTune CSV intervals) with the right types;
ts/dur have at most three decimals; the X slices of each thread nest properly (no two
cross); every async "e" ends the last open "b" of its process, category and id, of the
same name, at or after it, every "b" is ended, and the intervals of one id nest too.

With --printed (the output of `traceprinter -t ns` on the same .kev, in file order): every
event traceprinter prints, CONTROL events aside, is found in the export with the same time
in ns, thread, event and key arguments, and the export holds nothing else. The thread of
each printed event follows the rule of files with TRACEKIT_OWNER=buffer: the THRUNNING
after the last CONTROL BUFFER names it.
"""
import collections
import decimal
import json
import re
import sys


def fail(msg):
    print("export_json_check: " + msg, file=sys.stderr)
    sys.exit(1)


def ns_of(value, what):
    if not isinstance(value, decimal.Decimal) or value < 0:
        fail("%s is not a non-negative number: %r" % (what, value))
    scaled = value * 1000
    if scaled != scaled.to_integral_value():
        fail("%s has more than three decimals: %s" % (what, value))
    return int(scaled)


def check_structure(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents array")
    if doc.get("displayTimeUnit") != "ns":
        fail("displayTimeUnit is not ns")
    slices = collections.defaultdict(list)
    async_open = collections.defaultdict(list)
    async_ivs = collections.defaultdict(list)
    for i, ev in enumerate(doc["traceEvents"]):
        where = "event %d" % i
        ph = ev.get("ph")
        if not isinstance(ev.get("name"), str) or not isinstance(ev.get("pid"), int):
            fail(where + ": name or pid missing")
        if ph == "M":
            if ev["name"] not in ("process_name", "thread_name") or not isinstance(ev["args"].get("name"), str):
                fail(where + ": bad metadata event")
            if not isinstance(ev.get("tid"), int):
                fail(where + ": metadata without tid")
            continue
        ts = ns_of(ev.get("ts"), where + " ts")
        if ph == "X":
            dur = ns_of(ev.get("dur"), where + " dur")
            if not isinstance(ev.get("tid"), int) or not isinstance(ev.get("cat"), str):
                fail(where + ": X slice without tid or cat")
            slices[(ev["pid"], ev["tid"])].append((ts, ts + dur, i))
        elif ph == "i":
            if ev.get("s") not in ("t", "g") or not isinstance(ev.get("tid"), int):
                fail(where + ": instant without scope or tid")
        elif ph == "C":
            if not isinstance(ev.get("args"), dict) or not ev["args"]:
                fail(where + ": counter without values")
        elif ph in ("b", "e"):
            if not isinstance(ev.get("cat"), str) or not isinstance(ev.get("id"), str) or \
               not isinstance(ev.get("tid"), int):
                fail(where + ": async event without cat, id or tid")
            key = (ev["pid"], ev["cat"], ev["id"])
            if ph == "b":
                async_open[key].append((ts, ev["name"], i))
            else:
                if not async_open[key] or async_open[key][-1][1] != ev["name"]:
                    fail(where + ": async end without its begin")
                begin, _, j = async_open[key].pop()
                if ts < begin:
                    fail(where + ": async end before its begin")
                async_ivs[key].append((begin, ts, j))
        else:
            fail(where + ": unexpected phase %r" % ph)
    for key, lst in async_open.items():
        if lst:
            fail("async begin without an end: event %d" % lst[0][2])
    for key, lst in list(slices.items()) + list(async_ivs.items()):
        thread = key
        lst.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        for begin, end, i in lst:
            while stack and stack[-1][1] <= begin and not (stack[-1][1] == begin and stack[-1][0] == begin):
                stack.pop()
            if stack and end > stack[-1][1]:
                fail("slices cross on thread %s: event %d [%d, %d] and event %d [%d, %d]" %
                     (thread, stack[-1][2], stack[-1][0], stack[-1][1], i, begin, end))
            stack.append((begin, end, i))
    return slices


LINE = re.compile(r"^t:(\d+)\.(\d{9}) CPU:(\d+) ([A-Z_]+)\s*:\s*(.*)$")
ARG = re.compile(r"([A-Za-z_][\w.()>-]*):(\"[^\"]*\"|\S+)")


def parse_printed(path):
    """Events of traceprinter -t ns output: (ns, class, text, args) with continuation lines."""
    events = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = LINE.match(line)
        if m:
            ns = int(m.group(1)) * 1000000000 + int(m.group(2))
            events.append([ns, m.group(4), m.group(5), {}])
            for a in ARG.finditer(m.group(5)):
                events[-1][3][a.group(1)] = a.group(2)
        elif events and line.startswith(" ") and ":" in line:
            key, _, value = line.strip().partition(":")
            events[-1][3][key] = value
    return events


def printed_keys(events, pairs):
    owner = None
    expect_owner = False
    keys = collections.Counter()
    for ns, cls, text, args in events:
        if cls.startswith("CONTROL"):
            if "BUFFER" in text:
                expect_owner = True
            continue
        if cls == "THREAD" and text.startswith("THRUNNING") and expect_owner:
            owner = (int(args["pid"]), int(args["tid"]))
            expect_owner = False
        name = text.split()[0].rstrip(",") if text else ""
        if cls == "PROCESS" and name == "PROCTHREAD_NAME":
            keys[("M", "thread_name", int(args["pid"]), int(args["tid"]), args["name"])] += 1
        elif cls == "PROCESS" and name == "PROCCREATE_NAME":
            keys[("M", "process_name", int(args["pid"]), int(args["pid"]), args["name"])] += 1
        elif cls == "SYSTEM" and name in ("FUNC_ENTER", "FUNC_EXIT"):
            keys[(ns, owner, name, int(args["thisfn"], 16))] += 1
        elif cls == "USREVENT":
            code = int(re.match(r"EVENT:(\d+)", text).group(1))
            if "STR" in args:
                keys[(ns, owner, "USER", code, args["STR"].strip('"'))] += 1
            else:
                keys[(ns, owner, "USER", code, int(args["d0"], 16), int(args["d1"], 16))] += 1
        elif cls == "THREAD":
            keys[(ns, owner, name, int(args["pid"]), int(args["tid"]))] += 1
        else:
            keys[(ns, owner, cls, name)] += 1
    return keys


def export_keys(doc, pairs):
    begin_of = {b: e for b, e in pairs}
    keys = collections.Counter()
    for ev in doc["traceEvents"]:
        ph, args = ev["ph"], ev.get("args", {})
        if ph == "M":
            keys[("M", ev["name"], ev["pid"], ev["tid"], args["name"])] += 1
            continue
        ts = ns_of(ev["ts"], "ts")
        owner = (ev["pid"], ev["tid"])
        if ph == "X" and ev["cat"] == "SYSTEM":
            fn = int(args["thisfn"], 16)
            keys[(ts, owner, "FUNC_ENTER", fn)] += 1
            if "closed" not in args:
                keys[(ts + ns_of(ev["dur"], "dur"), owner, "FUNC_EXIT", fn)] += 1
        elif ph == "X" and ev["cat"] == "USER":
            begin = [b for b in begin_of if pairs_names.get(b) == ev["name"]]
            if len(begin) != 1:
                fail("cannot tell the pair of slice %r" % ev["name"])
            b = begin[0]
            keys[(ts, owner, "USER", b, int(args["d0"], 16), int(args["d1"], 16))] += 1
            if "closed" not in args:
                end = args["end"]
                keys[(ts + ns_of(ev["dur"], "dur"), owner, "USER", begin_of[b], int(end["d0"], 16),
                      int(end["d1"], 16))] += 1
        elif ph == "i" and ev["cat"] == "USER":
            code = int(ev["name"].split()[1])
            if "str" in args:
                keys[(ts, owner, "USER", code, args["str"])] += 1
            else:
                keys[(ts, owner, "USER", code, int(args["d0"], 16), int(args["d1"], 16))] += 1
        elif ph == "i" and ev["cat"] in ("THREAD", "VTHREAD"):
            keys[(ts, owner, ev["name"], args["pid"], args["tid"])] += 1
        elif ph == "i":
            keys[(ts, owner, ev["cat"], ev["name"])] += 1
        else:
            keys[(ts, owner, ph, ev["name"])] += 1
    return keys


pairs_names = {}


def main():
    argv = sys.argv[1:]
    if not argv:
        fail(__doc__)
    path = argv.pop(0)
    printed = None
    pairs = []
    expect_slices = None
    while argv:
        opt = argv.pop(0)
        if opt == "--printed":
            printed = argv.pop(0)
        elif opt == "--pairs":
            for item in argv.pop(0).split(","):
                spec, _, name = item.partition("=")
                b, e = (int(v, 0) for v in spec.split(":"))
                pairs.append((b, e))
                pairs_names[b] = name or "USER %d" % b
        elif opt == "--expect-slices":
            expect_slices = int(argv.pop(0))
        else:
            fail("unknown option " + opt)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_float=decimal.Decimal, parse_int=int)
    except ValueError as e:
        fail("%s: not valid JSON: %s" % (path, e))
    slices = check_structure(doc)
    n_slices = sum(len(v) for v in slices.values())
    if expect_slices is not None and n_slices != expect_slices:
        fail("%d slices, expected %d" % (n_slices, expect_slices))
    if printed is not None:
        want = printed_keys(parse_printed(printed), pairs)
        got = export_keys(doc, pairs)
        missing = want - got
        extra = got - want
        if missing or extra:
            for k, n in list(missing.items())[:10]:
                print("missing from the export (%d): %r" % (n, k), file=sys.stderr)
            for k, n in list(extra.items())[:10]:
                print("not printed by traceprinter (%d): %r" % (n, k), file=sys.stderr)
            fail("%d printed events missing, %d exported events extra" % (sum(missing.values()),
                                                                          sum(extra.values())))
        print("%d events match, %d slices" % (sum(want.values()), n_slices))
    else:
        print("valid: %d events, %d slices" % (len(doc["traceEvents"]), n_slices))


if __name__ == "__main__":
    main()
