#!/usr/bin/python3
"""Print this machine's Debian apt sources for SUITE (e.g. bookworm) as one-line entries.

deb_test.sh builds its clean root from the same archive the machine installs from, without
naming a mirror itself: the entries of /etc/apt/sources.list and sources.list.d/*.list|*.sources
(one-line and deb822 formats) whose suite is SUITE, SUITE-updates or SUITE-security. The keys
are not carried over: the root's apt trusts Debian's archive keys (debian-archive-keyring).
Exit 2 with one line when there is none.
"""
import glob
import re
import sys


def one_line(path, want):
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)$", line)
        if m and want.fullmatch(m.group(3)):
            yield m.group(2), m.group(3), m.group(4).split()


def deb822(path, want):
    text = open(path, encoding="utf-8").read()
    for para in re.split(r"\n\s*\n", text):
        fields, key = {}, None
        for line in para.splitlines():
            if line.startswith("#"):
                continue
            if line[:1].isspace() and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                if want.fullmatch(suite):
                    yield uri, suite, fields.get("components", "main").split()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: apt_sources.py SUITE")
    suite = sys.argv[1]
    want = re.compile(re.escape(suite) + r"(-updates|-security)?")
    seen = []
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*"))
    for path in files:
        try:
            if path.endswith(".sources"):
                entries = list(deb822(path, want))
            elif path.endswith(".list"):
                entries = list(one_line(path, want))
            else:
                continue
        except OSError:
            continue
        for uri, s, comps in entries:
            entry = f"deb {uri} {s} {' '.join(comps)}"
            if entry not in seen:
                seen.append(entry)
    if not seen:
        print(f"apt_sources.py: error: no apt source for {suite} on this machine", file=sys.stderr)
        sys.exit(2)
    print("\n".join(seen))


if __name__ == "__main__":
    main()
